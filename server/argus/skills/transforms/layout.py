"""Operand layout: a dot operand whose contraction axis is not the contiguous one in memory gets a K-contiguous
copy, declared as `layout B: K` (the launcher copies B into that layout when the caller's tensor is not).

Tensors are row-major unless declared: `B: f32[K, N]` loaded as `load(B[rk, rn])` has N contiguous and K strided,
so each thread's tf32 operand fragment gathers along a strided axis; with K contiguous the tensor cores' operand
loads are the fast path (issue 16 measured a tf32 GEMM 3.6x slower per FLOP with B stored [K, N]). Only f32
dots gain: Hopper's wgmma reads 16-bit operands from shared memory in either major order. The forward puts the
declaration on a new line after the kernel's last `tile`, `policy` or `layout` line; the inverse removes it
where the forward would put it back.
"""

from __future__ import annotations

from dataclasses import dataclass

from argus.dsl import ast
from argus.dsl.spans import Span
from argus.skills.facts import KernelFacts
from argus.skills.provider import Edit
from argus.skills.text import whole_lines
from argus.skills.transforms.base import Application, Check, Transform
from argus.skills.transforms.dots import Operand, dot_calls, operand_dtype, operand_source

DECLS = (ast.TileDecl, ast.PolicyDecl, ast.LayoutDecl)


def layouts(kernel: ast.Kernel) -> dict[str, ast.LayoutDecl]:
    """The kernel's `layout T: X` declarations, by tensor (the first, where the checker reports a second)."""
    found: dict[str, ast.LayoutDecl] = {}
    for stmt in kernel.body:
        if isinstance(stmt, ast.LayoutDecl):
            found.setdefault(stmt.tensor.id, stmt)
    return found


def axis_names(facts: KernelFacts, tensor: str) -> list[str | None]:
    """Each axis of a tensor parameter by the name a `layout` may give it: its size symbol or tile constant."""
    param = facts.kernel_ir.tensor(tensor) if facts.kernel_ir is not None else None
    if param is None:
        return []
    return [d.symbol if d.symbol is not None else (d.label or None) for d in param.type.shape]


def contiguous_axis(facts: KernelFacts, kernel: ast.Kernel, tensor: str) -> int | None:
    """The axis with stride 1: the declared one, else the last (row-major)."""
    names = axis_names(facts, tensor)
    decl = layouts(kernel).get(tensor)
    if decl is not None and names.count(decl.axis.id) == 1:
        return names.index(decl.axis.id)
    return len(names) - 1 if names else None


@dataclass
class Site:
    operand: Operand
    call: ast.Call
    axis: str  # the contraction axis's name
    dtype: str | None


def sites_of(facts: KernelFacts, kernel: ast.Kernel) -> list[Site]:
    """Every (tensor, contraction axis) a dot operand is loaded along, where that axis is not the contiguous one;
    once per tensor, in the order of the dots."""
    found: dict[str, Site] = {}
    for call in dot_calls(kernel):
        for which in (0, 1):
            operand = operand_source(facts, call, which)
            if operand is None or operand.tensor in found:
                continue
            names = axis_names(facts, operand.tensor)
            name = names[operand.axis] if operand.axis < len(names) else None
            if name is None or names.count(name) != 1:
                continue  # an axis a `layout` cannot name
            if contiguous_axis(facts, kernel, operand.tensor) != operand.axis:
                found[operand.tensor] = Site(operand, call, name, operand_dtype(facts, call))
    return list(found.values())


def insertion(kernel: ast.Kernel, text: str) -> Edit | None:
    """A new line `text` after the last top-level tile/policy/layout declaration (or first in the body)."""
    decls = [s for s in kernel.body if isinstance(s, DECLS)]
    anchor = decls[-1] if decls else (kernel.body[0] if kernel.body else None)
    if anchor is None:
        return None
    line = anchor.span.end_line + 1 if decls else anchor.span.line
    return Edit(Span(line, 0, line, 0), " " * anchor.span.col + text + "\n")


@dataclass(frozen=True)
class OperandLayout(Transform):
    name: str = "layout"
    title: str = "K-contiguous operand"
    intent: str = (
        "an f32 dot operand stored with its contraction axis strided (B: f32[K, N] read as [BK, BN]) gets a "
        "K-contiguous copy from the launcher, so the tensor cores' operand loads are the fast path"
    )
    anchor: str = "a load that feeds an f32 dot, from an input tensor whose contraction axis is not the contiguous one"
    preconditions: tuple[str, ...] = ("f32_operands", "input_tensor", "still_checks")

    def sites(self, doc, kernel, facts, params) -> list[Application]:
        found = []
        for site in sites_of(facts, kernel):
            tensor = site.operand.tensor
            if params.get("tensor", tensor) != tensor or params.get("axis", site.axis) != site.axis:
                continue
            wide = site.dtype == "f32"
            checks = [
                Check(
                    "f32_operands",
                    wide,
                    ""
                    if wide
                    else f"the dot's operands are {site.dtype}: Hopper's wgmma reads 16-bit operands from shared "
                    "memory in either major order, so a K-contiguous copy gains nothing",
                ),
            ]
            param = facts.kernel_ir.tensor(tensor)
            is_input = param is not None and not param.is_out
            found_text = "" if is_input else f"`{tensor}` is an out tensor: the launcher copies inputs only"
            checks.append(Check("input_tensor", is_input, found_text))
            decl = layouts(kernel).get(tensor)
            text = f"layout {tensor}: {site.axis}"
            edit = Edit(decl.axis.span, site.axis) if decl is not None else insertion(kernel, text)
            if edit is None:
                continue
            edits = [edit]
            title = f"{self.title}: `{text}` (the launcher copies {tensor} with {site.axis} contiguous)"
            anchor = site.operand.load.span
            params_out = {"tensor": tensor, "axis": site.axis}
            found.append(self.app("forward", kernel, anchor, title, params_out, edits, checks))
        return found

    def inverse_sites(self, doc, kernel, facts) -> list[Application]:
        found = []
        body = kernel.body
        for at, stmt in enumerate(body):
            if not isinstance(stmt, ast.LayoutDecl) or at == 0:
                continue
            previous = body[at - 1]
            last_decl = max(i for i, s in enumerate(body) if isinstance(s, DECLS))
            canonical = doc.source(whole_lines(stmt.span)).strip() == f"layout {stmt.tensor.id}: {stmt.axis.id}"
            if not (isinstance(previous, DECLS) and previous.span.end_line + 1 == stmt.span.line and canonical):
                continue  # not where, or not how, the forward writes it
            if last_decl != at:
                continue
            names = axis_names(facts, stmt.tensor.id)
            if names.count(stmt.axis.id) != 1 or names.index(stmt.axis.id) == len(names) - 1:
                continue  # names no axis, or the row-major one: removing it changes nothing the forward undoes
            used = any(
                s.operand.tensor == stmt.tensor.id for s in contraction_uses(facts, kernel) if s.axis == stmt.axis.id
            )
            if not used:
                continue
            title = f"undo K-contiguous operand: {stmt.tensor.id} row-major (no `layout`)"
            params = {"tensor": stmt.tensor.id, "axis": stmt.axis.id}
            found.append(self.app("inverse", kernel, stmt.span, title, params, [Edit(whole_lines(stmt.span), "")]))
        return found


def contraction_uses(facts: KernelFacts, kernel: ast.Kernel) -> list[Site]:
    """Every loaded dot operand with its contraction axis's name, contiguous or not."""
    found = []
    for call in dot_calls(kernel):
        for which in (0, 1):
            operand = operand_source(facts, call, which)
            if operand is None:
                continue
            names = axis_names(facts, operand.tensor)
            if operand.axis < len(names) and names[operand.axis] is not None:
                found.append(Site(operand, call, names[operand.axis], operand_dtype(facts, call)))
    return found
