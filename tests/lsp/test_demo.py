"""`argus demo` end to end: the real server over stdio, the planted bug, the fix, the CPU gate."""

from __future__ import annotations

import subprocess
import sys

from lsp_support import ROOT


def test_the_demo_finds_the_bug_fixes_it_and_passes_the_gate():
    run = subprocess.run([sys.executable, "-m", "argus", "demo"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    out = run.stdout
    assert run.returncode == 0, out + run.stderr
    assert "error[AR310] (argus.verify): dot contraction mismatch" in out
    assert "\n  values: a's K index = 0, b's K index = 64\n" in out  # the counterexample, one part a line
    assert out.count("b's K index") == 1  # once: the record in the data is named, not printed again
    assert "trials at M=96, N=80, K=128" in out
    assert "✓ quick fix Load `b` at `a`'s K index: `rk + BK` → `rk`" in out
    assert "✗ skill     Skill: Drop edge masks (load of A)\n      disabled: divisible_by_tile: needs `requires M" in out
    assert "+        b = load(B[rk, rn], mask=(rk < K, rn < N), other=0)" in out
    assert "diagnostics of version 2: none" in out
    assert "✓ compile  passed" in out and "✓ correct  passed" in out
