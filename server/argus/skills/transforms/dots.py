"""Facts about one `dot` that the precision and layout transforms state their preconditions over: its IR op, its
operands' dtype, and the tensor axis each loaded operand contracts over."""

from __future__ import annotations

from dataclasses import dataclass

from argus.dsl import ast, ir
from argus.dsl.types import TileT
from argus.skills.facts import KernelFacts, walk


def is_call(expr, name: str) -> bool:
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == name


def dot_calls(kernel: ast.Kernel) -> list[ast.Call]:
    """Every `dot(...)` of the kernel, in source order."""
    return [n for n in walk(kernel.body) if is_call(n, "dot")]


def dot_op(facts: KernelFacts, call: ast.Call) -> ir.Op | None:
    """The IR op the checker made of this call (matched by its span)."""
    if facts.kernel_ir is None:
        return None
    return next((op for op in ir.walk_ops(facts.kernel_ir.body) if op.kind == "dot" and op.span == call.span), None)


def operand_dtype(facts: KernelFacts, call: ast.Call) -> str | None:
    op = dot_op(facts, call)
    if op is None or not op.operands or not isinstance(op.operands[0].type, TileT):
        return None
    return op.operands[0].type.dtype.name


@dataclass
class Operand:
    """Where a dot operand's contraction axis comes from: axis `axis` of tensor `tensor`, loaded by `load`."""

    tensor: str
    axis: int
    rank: int
    symbol: str | None  # the size symbol of that axis in the tensor's declaration (K of `B: f32[K, N]`)
    offset: int
    load: ir.Op


def operand_source(facts: KernelFacts, call: ast.Call, which: int) -> Operand | None:
    """Follow operand `which` (0: a, 1: b) of the dot back through casts and transposes to the load that reads
    it, and name the tensor axis its contraction axis indexes (a's last axis, b's second to last)."""
    op = dot_op(facts, call)
    if op is None or len(op.operands) <= which or not isinstance(op.operands[which].type, TileT):
        return None
    value = op.operands[which]
    rank = len(value.type.shape)
    axis = rank - 1 if which == 0 else rank - 2
    while value.op is not None:
        source = value.op
        if source.kind == "cast":
            value = source.operands[0]
        elif source.kind == "trans" and isinstance(source.operands[0].type, TileT):
            rank = len(source.operands[0].type.shape)
            axis = {rank - 1: rank - 2, rank - 2: rank - 1}.get(axis, axis)
            value = source.operands[0]
        elif source.kind == "load":
            access = ir.memory_access(source)
            on_axis = [
                i
                for i, index in enumerate(access.indices)
                if isinstance(index.type, TileT)
                and [j for j, d in enumerate(index.type.shape) if d.value != 1] == [axis]
            ]
            tensor = source.attrs.get("tensor")
            param = facts.kernel_ir.tensor(tensor) if facts.kernel_ir is not None else None
            if len(on_axis) != 1 or param is None:
                return None
            dim = param.type.shape[on_axis[0]]
            if dim.is_product:  # an axis of a declared view: no one size to compare
                return None
            return Operand(tensor, on_axis[0], len(param.type.shape), dim.symbol, dim.offset, source)
        else:
            return None
    return None


def argument(call: ast.Call, position: int, keyword: str):
    """A call's argument given by position or by keyword (None when absent)."""
    if len(call.args) > position:
        return call.args[position]
    return next((k.value for k in call.keywords if k.name == keyword), None)
