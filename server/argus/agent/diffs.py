"""A strict unified-diff applier: every hunk must match the current source exactly where its header says.

An LLM's diff that does not fit the text it was made against is refused (DiffError names the hunk and the
line), never applied fuzzily: a hunk applied at the wrong place is a different kernel than the one proposed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class DiffError(ValueError):
    """The diff is malformed or does not apply to the source."""


@dataclass(slots=True)
class Hunk:
    old_start: int  # 1-based; 0 when the old range is empty at the top of the file
    old_count: int
    new_count: int
    lines: list[str] = field(default_factory=list)  # each starts with ' ', '-' or '+'

    @property
    def old(self) -> list[str]:
        return [line[1:] for line in self.lines if line[0] in " -"]

    @property
    def new(self) -> list[str]:
        return [line[1:] for line in self.lines if line[0] in " +"]


def parse_hunks(diff: str) -> list[Hunk]:
    hunks: list[Hunk] = []
    for raw in diff.splitlines():
        header = HUNK.match(raw)
        if header:
            old_start, old_count, _, new_count = header.groups()
            hunks.append(Hunk(int(old_start), int(old_count or 1), int(new_count or 1)))
        elif hunks and raw.startswith("\\"):
            continue  # "\ No newline at end of file"
        elif hunks and (raw == "" or raw[0] in " -+") and not raw.startswith(("--- ", "+++ ")):
            hunks[-1].lines.append(raw or " ")  # a blank context line whose leading space was stripped
        elif hunks and len(hunks[-1].old) < hunks[-1].old_count:
            raise DiffError(f"hunk {len(hunks)}: line {raw[:60]!r} is not context, removal or addition")
    if not hunks:
        raise DiffError("no hunk (@@ -a,b +c,d @@) in the diff")
    for number, hunk in enumerate(hunks, 1):
        if len(hunk.old) != hunk.old_count or len(hunk.new) != hunk.new_count:
            raise DiffError(
                f"hunk {number}: the header says -{hunk.old_count} +{hunk.new_count} lines, "
                f"the body has -{len(hunk.old)} +{len(hunk.new)}"
            )
    return hunks


def apply_diff(source: str, diff: str) -> str:
    """`source` with `diff` applied; DiffError when a hunk's context or removed lines differ from the source."""
    lines = source.splitlines()
    out: list[str] = []
    at = 0  # lines of `source` consumed so far
    for number, hunk in enumerate(parse_hunks(diff), 1):
        start = hunk.old_start - 1 if hunk.old_count else hunk.old_start
        if start < at:
            raise DiffError(f"hunk {number}: starts at line {hunk.old_start}, inside or before the previous hunk")
        actual = lines[start : start + hunk.old_count]
        for offset, (want, have) in enumerate(zip(hunk.old, actual + [None] * len(hunk.old), strict=False)):
            if want != have:
                shown = "end of file" if have is None else repr(have)
                raise DiffError(f"hunk {number}: line {start + offset + 1} is {shown}, the diff expects {want!r}")
        out += lines[at:start] + hunk.new
        at = start + hunk.old_count
    out += lines[at:]
    return "\n".join(out) + ("\n" if source.endswith("\n") or not source else "")
