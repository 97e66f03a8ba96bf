"""A value's layout as one line of hover text, in the names the kernel writes (kernel.ValueLayout renders it)."""

from __future__ import annotations

import z3

from argus.dsl import ir
from argus.verify.model import Entry, Sym
from argus.verify.terms import COORD_NAMES, COORDS
from argus.verify.terms import show as show_term


def source_names(kernel: ir.KernelIR, suffix: str) -> dict[str, str]:
    """The verifier's variable names as the kernel writes them: pid0 -> pm, e0 -> i, k0@13 -> k0 (`suffix`: the
    evaluator instance's, '' or "'")."""
    names = {f"e{k}": COORD_NAMES[k] for k in range(len(COORDS))}
    for op in ir.walk_ops(kernel.body):
        if op.kind == "program_id" and op.result.name:
            names.setdefault(f"pid{op.attrs['axis']}{suffix}", op.result.name)
        elif op.kind == "for":
            names[f"{op.attrs['var']}@{op.span.line + 1}{suffix}"] = op.attrs["var"]
    return names


def layout_text(sym: Sym, names: dict[str, str]) -> str:
    """Index map per tensor axis, mask and tags of a value, its terms shown with `names` (source_names)."""

    def show(term: z3.ExprRef) -> str:
        return show_term(term, names)

    parts = []
    tensors: dict[str, list[tuple[int, Entry]]] = {}
    for (tensor, axis), entry in sym.layout.items():
        tensors.setdefault(tensor, []).append((axis, entry))
    for tensor, entries in tensors.items():
        axes = ", ".join(f"{e.label}: {show(e.term)}" for _, e in sorted(entries, key=lambda p: p[0]))
        stat = " (statistic)" if any(e.stat for _, e in entries) else ""
        parts.append(f"{tensor}[{axes}]{stat}")
    text = "; ".join(parts) if parts else "no tensor index"
    if sym.term is not None and not sym.layout:
        text = f"value {show(sym.term)}"
    if sym.valid is not None:
        text += f"; mask {show(sym.valid)}"
    if sym.tags:
        text += "; tags " + ", ".join(f"{n}={show(t)}" for n, t in sorted(sym.tags.items()))
    coords = ", ".join(COORD_NAMES[k] for k in range(len(sym.shape)))
    shape = "x".join(str(n) for n in sym.shape)
    return f"[{shape}] ({coords}) -> {text}" if sym.shape else text
