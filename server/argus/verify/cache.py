"""A bounded cache of per-kernel verification results, keyed by a hash of the kernel's IR.

Spans inside the hash are relative to the kernel's first line, so typing in one kernel (which shifts the
lines of the kernels below it) re-verifies only that kernel; a hit is moved to the kernel's new lines.
An entry keeps each part of the kernel's verification that was asked for (`declared`, `tune`); `all` is
answered when both are there.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import replace

from argus.dsl import ir
from argus.dsl.diagnostics import shifted_diagnostic
from argus.dsl.spans import Span
from argus.verify.kernel import KernelReport, merge_reports
from argus.verify.solve import DEFAULT_RLIMIT


def kernel_key(kernel: ir.KernelIR, timeout_ms: int, rlimit: int = DEFAULT_RLIMIT) -> str:
    """The kernel's IR and the budget (z3 resource units and the safety net's unit) it is verified under."""
    base = kernel.span.line
    parts: list[str] = [kernel.name, f"timeout_ms={timeout_ms}", f"rlimit={rlimit}"]

    def span(s: Span) -> str:
        return f"{s.line - base}:{s.col}-{s.end_line - base}:{s.end_col}"

    def block(b: ir.Block) -> None:
        parts.append("args " + " ".join(f"{v.id}:{v.type}:{v.name}" for v in b.args))
        for op in b.ops:
            attrs = ",".join(f"{k}={op.attrs[k]!r}" for k in sorted(op.attrs))
            operands = " ".join(str(v.id) for v in op.operands)
            results = " ".join(f"{v.id}:{v.type}:{v.name}" for v in op.results)
            parts.append(f"{op.kind}[{attrs}]({operands})->{results}@{span(op.span)}")
            for region in op.regions:
                block(region)
        parts.append("yield " + " ".join(str(v.id) for v in b.yields) + " @" + " ".join(map(span, b.yield_spans)))

    for p in kernel.params:
        parts.append(f"param {p.name}:{p.type}:{p.value.id}:{p.is_out}@{span(p.span)}")
    for name, value in kernel.sizes.items():
        parts.append(f"size {name}:{value.id}")
    for name, c in kernel.constants.items():
        parts.append(f"const {name}={c.value} tune {c.tune}@{span(c.span)}")
    block(kernel.launch)
    parts.append("requires " + " ".join(f"{v.id}@{span(s)}" for v, s in kernel.requires))
    parts.append("grid " + " ".join(str(v.id) for v in kernel.grid))
    block(kernel.body)
    parts.append(span(kernel.span))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def shifted(report: KernelReport, delta: int) -> KernelReport:
    if delta == 0:
        return report
    diagnostics = []
    for d in report.diagnostics:
        moved = shifted_diagnostic(d, delta)  # its range and related places; the witness's lines here
        witness = moved.data.get("counterexample")
        if isinstance(witness, dict):
            witness = dict(witness, line=witness["line"] + delta)
            if isinstance(witness.get("second"), dict):
                witness["second"] = dict(witness["second"], line=witness["second"]["line"] + delta)
            moved.data["counterexample"] = witness
        diagnostics.append(moved)
    layouts = [
        v.moved(Span(v.span.line + delta, v.span.col, v.span.end_line + delta, v.span.end_col)) for v in report.layouts
    ]
    return replace(report, diagnostics=diagnostics, layouts=layouts)


class VerifyCache:
    """Per-kernel results, least recently used first out once `max_entries` is reached."""

    def __init__(self, max_entries: int = 256):
        self.max_entries = max_entries
        self.entries: OrderedDict[str, tuple[int, dict[str, KernelReport]]] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, key: str, line: int, part: str = "all") -> KernelReport | None:
        """The report of one part ("declared", "tune"), or of both merged ("all"), moved to `line`."""
        entry = self.entries.get(key)
        needed = ("declared", "tune") if part == "all" else (part,)
        if entry is None or any(p not in entry[1] for p in needed):
            self.misses += 1
            return None
        self.hits += 1
        self.entries.move_to_end(key)
        cached_line, parts = entry
        report = merge_reports(parts["declared"], parts["tune"]) if part == "all" else parts[part]
        return shifted(report, line - cached_line)

    def put(self, key: str, line: int, report: KernelReport, part: str) -> None:
        """Keep one part ("declared" or "tune") of a kernel's verification, beside the other if it is there."""
        entry = self.entries.get(key)
        parts: dict[str, KernelReport] = {}
        if entry is not None:
            cached_line, cached = entry
            parts = {name: shifted(r, line - cached_line) for name, r in cached.items()}
        parts[part] = report
        self.entries[key] = (line, parts)
        self.entries.move_to_end(key)
        while len(self.entries) > self.max_entries:
            self.entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self.entries)
