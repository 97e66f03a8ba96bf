"""What `check_source` says about a kernel text, in the forms the parameter tests compare: each diagnostic's code
with the text its range covers, the messages of one code, and the tensor parameters' types."""

from __future__ import annotations

from argus.dsl.check import check_source
from argus.dsl.types import TensorT

QUIET = {"AR107", "AR108"}  # no reference, no sizes: beside the point of a kernel written for one check


def reported(text: str) -> list[tuple[str, str]]:
    """(code, the text its range covers) of each diagnostic but the missing-block warnings."""
    lines = text.split("\n")
    found = []
    for d in check_source(text).diagnostics:
        if d.code not in QUIET:
            start, end = d.range.start, d.range.end
            found.append((d.code, lines[start.line][start.character : end.character]))
    return found


def messages(text: str, code: str) -> list[str]:
    return [d.message for d in check_source(text).diagnostics if d.code == code]


def param_types(text: str) -> dict[str, TensorT]:
    kernel = next(iter(check_source(text).analysis.kernels.values()))
    return {p.name: p.type for p in kernel.params if isinstance(p.type, TensorT)}
