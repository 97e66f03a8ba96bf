"""AR320: integer arithmetic that wraps in a narrow dtype. Triton computes `u8 - u8` in u8 (types.promote): a
dequantization's `code - zero` with a code below its zero point wraps to 256 - d instead of -d, and `i8 + i8`
or `u8 * u8` overflow the same way. The obligation is that the exact result of `+`, `-` or `*` stays inside
the result dtype's range on every real lane, with each narrow tensor's loaded data inside its own; refuted, the
witness names the element and the two operands (a code of 0 under a zero point of 1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import z3

from argus.dsl import ir
from argus.dsl.types import DType
from argus.verify.model import Context, Obligation, Sym
from argus.verify.terms import applications
from argus.verify.values import coord_list, coord_ranges, shape_of

if TYPE_CHECKING:
    from argus.verify.evaluate import Evaluator

WRAPPING = ("+", "-", "*")


def limits(dtype: DType) -> tuple[int, int] | None:
    """The range of a dtype narrower than 32 bits (indices and counters are i32 or wider: not checked here)."""
    if not dtype.is_integer or dtype.kind == "bool" or dtype.bits >= 32:
        return None
    if dtype.name.startswith("u"):
        return 0, 2**dtype.bits - 1
    return -(2 ** (dtype.bits - 1)), 2 ** (dtype.bits - 1) - 1


def narrow_result(ev: Evaluator, op: ir.Op, a: Sym, b: Sym, term: z3.ExprRef | None, context: Context) -> None:
    if not ev.emitting or term is None or op.attrs["op"] not in WRAPPING or z3.is_bool(term):
        return
    bounds = limits(op.result.type.dtype)
    if bounds is None:
        return
    lo, hi = bounds
    facts = context.assumptions + coord_ranges(shape_of(op.result.type))
    facts += [v for v in (a.valid, b.valid) if v is not None] + data_ranges(ev, term)
    for operand, value in zip(op.operands, (a, b), strict=True):  # a value of a narrow dtype is inside it
        inside = limits(operand.type.dtype) if hasattr(operand.type, "dtype") else None
        if inside is not None and value.term is not None and not z3.is_bool(value.term):
            facts += [value.term >= inside[0], value.term <= inside[1]]
    name = op.result.type.dtype.name
    ev.emit(
        Obligation(
            "narrow_wrap",
            "AR320",
            op.span,
            f"`{op.attrs['op']}` computes in {name} ({lo} to {hi}) and its result can leave that range, where it "
            f"wraps: convert the operands first (`.to(i32)`)",
            z3.And(term >= lo, term <= hi),
            facts,
            context.loops,
            ev.program,
            coord_list(shape_of(op.result.type)),
            [
                ("left operand", a.term),
                ("right operand", b.term),
                ("exact result", term),
                (f"lowest {name}", z3.IntVal(lo)),
                (f"highest {name}", z3.IntVal(hi)),
            ],
        )
    )


def data_ranges(ev: Evaluator, term: z3.ExprRef) -> list[z3.BoolRef]:
    """Every narrow tensor's elements the term reads lie in their dtype's range (a u8 code is 0 to 255)."""
    ranges = []
    for param in ev.kernel.params:
        dtype = getattr(param.type, "dtype", None)
        bounds = limits(dtype) if dtype is not None else None
        if bounds is None:
            continue
        for read in applications(term, param.name):
            ranges += [read >= bounds[0], read <= bounds[1]]
    return ranges
