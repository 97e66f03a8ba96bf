"""What the analysis tests share: the examples folder and a host that analyzes a file of it."""

from __future__ import annotations

from pathlib import Path

from argus.analysis.host import AnalysisHost
from argus.analysis.snapshot import Analysis

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def analyze(name: str, version: int = 1) -> Analysis:
    path = EXAMPLES / name
    return AnalysisHost().analyze(path.as_uri(), version, path.read_text(encoding="utf-8"))


def position_of(analysis: Analysis, needle: str, occurrence: int = 0) -> tuple[int, int]:
    """(line, col) of the start of the `occurrence`-th `needle` in the analysis's text."""
    seen = 0
    for line, text in enumerate(analysis.lines):
        col = text.find(needle)
        while col >= 0:
            if seen == occurrence:
                return line, col
            seen += 1
            col = text.find(needle, col + 1)
    raise AssertionError(f"{needle!r} not found")
