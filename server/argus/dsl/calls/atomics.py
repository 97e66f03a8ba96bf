"""Type rules of the atomics beyond atomic_add: atomic_max, atomic_min and atomic_xchg (a tensor access, a value,
an optional mask) and atomic_cas (a tensor access, cmp and a value; no mask, as in Triton). The access is
checked as a store's (an `out` tensor, a value that fits, AR212 on an implicit narrowing); each takes the
dtypes Triton does (argus.dsl.atomics.DTYPES, AR204 otherwise). atomic_xchg and atomic_cas return the values the
elements held. One output is written by atomics of one start (AR220): the launcher starts it at 0 for
atomic_add, atomic_xchg and atomic_cas, at the lowest value for atomic_max, at the highest for atomic_min."""

from __future__ import annotations

from typing import TYPE_CHECKING

from argus.dsl import ast, ir
from argus.dsl.atomics import DTYPES, RETURNS_OLD, one_start
from argus.dsl.calls.arguments import bind_args, value_arg
from argus.dsl.calls.memory import access_arg, add_mask, narrows
from argus.dsl.calls.table import type_rule
from argus.dsl.scope import ERROR, Ref, V
from argus.dsl.shapes import fits
from argus.dsl.types import ErrorT, NoneT, ScalarT, TensorT, TileT, is_weak, shape_of, shape_text

if TYPE_CHECKING:
    from argus.dsl.kernel_analysis import KernelAnalyzer


def listed(names: tuple[str, ...]) -> str:
    return ", ".join(names[:-1]) + f" or {names[-1]}"


def fitting_value(an: KernelAnalyzer, expr: ast.Expr, ref: Ref, kind: str, what: str) -> V:
    """A value written into the access: it fits the access's shape (AR201); an implicit narrowing warns (AR212)."""
    value = value_arg(an, expr)
    if isinstance(value.type, ErrorT):
        return ERROR
    if not fits(shape_of(value.type), ref.shape):
        return an.error(
            "AR201",
            expr.span,
            f"{what} of shape {shape_text(shape_of(value.type))} does not fit the access {shape_text(ref.shape)}",
            value=[d.value for d in shape_of(value.type)],
            access=[d.value for d in ref.shape],
        )
    target = ref.tensor.type.dtype
    if narrows(value.type.dtype, target) and not is_weak(value.type):
        an.warn(
            "AR212",
            expr.span,
            f"{kind} converts {value.type.dtype} to {target} implicitly; write `.to({target})` if intended",
        )
    return value


@type_rule("atomic_max", "atomic_min", "atomic_xchg", "atomic_cas")
def call_atomic(an: KernelAnalyzer, e: ast.Call, kind: str) -> V:
    cas = kind == "atomic_cas"
    params = ["ref", "cmp", "value"] if cas else ["ref", "value", "mask"]
    args = bind_args(an, e, params, len(params) if cas else 2)
    if args is None:
        return ERROR
    target = args["ref"]
    if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
        an.written.add(target.value.id)  # even when the call has an error: the intent is clear
    access = access_arg(an, target, kind)
    if access is ERROR:
        return ERROR
    ref: Ref = access.ref
    tensor_type: TensorT = ref.tensor.type
    if not tensor_type.out:
        return an.error("AR211", target.span, f"`{ref.name}` is an input; declare it `{ref.name}: out ...` to write it")
    if tensor_type.dtype.name not in DTYPES[kind]:
        return an.error(
            "AR204",
            target.span,
            f"{kind} takes {listed(DTYPES[kind])} tensors, as Triton does; `{ref.name}` is {tensor_type.dtype}",
        )
    operands: list[ir.Value] = [ref.tensor, *ref.indices]
    if cas:
        compare = fitting_value(an, args["cmp"], ref, kind, "cmp")
        if compare is ERROR:
            return ERROR
        operands.append(compare.value)
    value = fitting_value(an, args["value"], ref, kind, "a value")
    if value is ERROR:
        return ERROR
    operands.append(value.value)
    attrs = {"tensor": ref.name, "rank": len(ref.indices), "mask": False}
    if not add_mask(an, args, ref, operands, attrs):
        return ERROR
    if not one_start(an, ref, kind, e.span):
        return ERROR
    if kind not in RETURNS_OLD:
        an.emit(kind, operands, None, e.span, **attrs)
        return V(NoneT(), span=e.span)
    dtype = tensor_type.dtype
    result_type = TileT(dtype, ref.shape) if ref.shape else ScalarT(dtype)
    return V(result_type, an.emit(kind, operands, result_type, e.span, **attrs), span=e.span)
