"""A real editor: Debian's Neovim 0.7 drives `argus serve` headless (tests/lsp/nvim_smoke.lua)."""

from __future__ import annotations

from lsp_support import EXAMPLES, needs_neovim, run_neovim


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
