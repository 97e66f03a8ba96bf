"""A real editor: Debian's Neovim 0.7 drives `argus serve` headless (tests/lsp/nvim_smoke.lua)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from lsp_support import EXAMPLES

NVIM = shutil.which("nvim")


# Skipped only on a developer's machine without nvim; in CI (which installs it) a missing nvim fails.
@pytest.mark.skipif(
    NVIM is None and not os.environ.get("CI"), reason="nvim is not installed (CI installs it: apt-get install neovim)"
)
def test_neovim_shows_the_invariant_bug_and_applies_the_quick_fix(tmp_path):
    assert NVIM is not None, "CI must install nvim (.ci/run does: apt-get install -y neovim)"
    kernel = tmp_path / "matmul_next_k.argus"
    kernel.write_text((EXAMPLES / "buggy" / "matmul_next_k.argus").read_text())
    script = EXAMPLES.parent / "tests" / "lsp" / "nvim_smoke.lua"
    home = {f"XDG_{name}_HOME": str(tmp_path / name.lower()) for name in ("CONFIG", "DATA", "STATE", "CACHE")}
    env = {**os.environ, **home, "ARGUS_PYTHON": sys.executable, "ARGUS_FILE": str(kernel)}
    run = subprocess.run(
        [NVIM, "--headless", "--clean", "-c", f"luafile {script}"],
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert "[AR310] dot contraction mismatch" in out
    assert "code action: [quickfix] Load `b` at `a`'s K index: `rk + BK` → `rk`" in out
    assert "code action: [refactor.rewrite] Software pipelining: num_stages 3 → 4" in out
    assert "after the fix:         b = load(B[rk, rn], mask=(rk < K, rn < N), other=0)" in out
    assert "PASS" in out
