"""Tensor access and the memory built-ins: `T[i, j]` typed as an access (a Ref whose indices are broadcast to the
access tile), load, and store and atomic_add, with their masks."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from argus.dsl import ast, ir
from argus.dsl.atomics import one_start
from argus.dsl.calls.arguments import bind_args, value_arg
from argus.dsl.calls.table import type_rule
from argus.dsl.scope import ERROR, Ref, V
from argus.dsl.shapes import broadcast, fits
from argus.dsl.spans import Span
from argus.dsl.types import (
    BOOL,
    Dim,
    DType,
    ErrorT,
    NoneT,
    RefT,
    ScalarT,
    Shape,
    TensorT,
    TileT,
    TupleT,
    is_weak,
    shape_of,
    shape_text,
)

if TYPE_CHECKING:
    from argus.dsl.kernel_analysis import KernelAnalyzer


def narrows(source: DType, target: DType) -> bool:
    """Whether converting source to target can lose information."""
    if source.kind == "bool" or source == target:
        return False
    if source.is_float and not target.is_float:
        return True
    if source.is_float == target.is_float:
        return target.bits < source.bits
    return target.bits <= source.bits  # an integer into a float with no more bits than it has


def tensor_access(an: KernelAnalyzer, e: ast.Subscript, tensor: V) -> V:
    tensor_type: TensorT = tensor.type
    name = tensor.value.name or "tensor"
    rank = len(tensor_type.shape)
    for index in e.indices:
        if isinstance(index, ast.FullSlice | ast.NoneLit):
            return an.error("AR208", index.span, "tensor indices are index values or vectors (arange), not `:` or None")
    if len(e.indices) != rank:
        if rank == 0:
            message = (
                f"`{name}` is 0-d ({tensor_type}): access its one element by its bare name, as in store({name}, v)"
            )
            return an.error("AR208", e.span, message)
        return an.error("AR208", e.span, f"`{name}` has {rank} axes but {len(e.indices)} indices are given")
    values = [an.expr(i) for i in e.indices]
    for index, v in zip(e.indices, values, strict=True):
        if isinstance(v.type, ErrorT):
            return ERROR
        if not isinstance(v.type, ScalarT | TileT) or not v.type.dtype.is_integer or v.type.dtype == BOOL:
            return an.error("AR204", index.span, f"a tensor index is an integer, not {an.describe(v)}")
    ranks = [len(shape_of(v.type)) for v in values]
    if all(r <= 1 for r in ranks):
        shape = tuple(v.type.shape[0] for v in values if isinstance(v.type, TileT))
        indices, position = [], 0
        for v in values:
            if isinstance(v.type, TileT):
                indices.append(place_on_axis(an, v, position, len(shape), e.span))
                position += 1
            else:
                indices.append(v.value)
    else:
        shape: Shape = ()
        for index, v in zip(e.indices, values, strict=True):
            combined = broadcast(shape, shape_of(v.type))
            if combined is None:
                return an.error(
                    "AR201",
                    index.span,
                    f"index shapes {shape_text(shape)} and {shape_text(v.type.shape)} do not broadcast",
                )
            shape = combined
        indices = [v.value for v in values]
    ref = Ref(tensor.value, name, indices, shape)
    return V(RefT(name, tensor_type.dtype, shape), ref=ref, span=e.span)


def place_on_axis(an: KernelAnalyzer, v: V, axis: int, rank: int, span: Span) -> ir.Value:
    """A vector as axis `axis` of a rank-`rank` tile: size-1 axes everywhere else."""
    if rank == 1:
        return v.value
    shape = [Dim(1)] * rank
    shape[axis] = v.type.shape[0]
    result_type = TileT(v.type.dtype, tuple(shape))
    axes = [i for i in range(rank) if i != axis]
    return an.emit("expand_dims", [v.value], result_type, span, axes=axes)


def per_axis_mask(
    an: KernelAnalyzer,
    entries: list[tuple[Callable[[], V] | None, Span]],
    shape: Shape,
    span: Span,
    prefix: str = "",
) -> ir.Value | V | None:
    """A mask tuple, one entry per axis of the access (None: no condition on that axis), as the outer AND of its
    entries placed on their axes. An entry is analyzed when its turn comes (the first bad one is reported)."""
    if len(entries) != len(shape):
        return an.error(
            "AR203",
            span,
            f"{prefix}the access is {shape_text(shape)}: a mask tuple has one entry per axis, "
            f"{len(shape)} here, not {len(entries)}",
        )
    parts = []
    for axis, (entry, entry_span) in enumerate(entries):
        if entry is None:
            continue
        v = entry()
        if isinstance(v.type, ErrorT):
            return ERROR
        if not isinstance(v.type, ScalarT | TileT) or v.type.dtype != BOOL:
            return an.error("AR203", entry_span, f"{prefix}a mask is boolean, not {an.describe(v)}")
        if isinstance(v.type, TileT):
            if len(v.type.shape) != 1 or v.type.shape[0].value != shape[axis].value:
                return an.error(
                    "AR203",
                    entry_span,
                    f"{prefix}mask entry {axis} is {shape_text(v.type.shape)} but axis {axis} of the access "
                    f"has {shape[axis]} elements",
                )
            parts.append(place_on_axis(an, v, axis, len(shape), entry_span))
        else:
            parts.append(v.value)
    if not parts:
        return None
    combined = parts[0]
    for value in parts[1:]:
        combined_shape = broadcast(shape_of(combined.type), shape_of(value.type))
        result_type = TileT(BOOL, combined_shape) if combined_shape else ScalarT(BOOL)
        combined = an.emit("binary", [combined, value], result_type, span, op="&")
    return combined


def access_arg(an: KernelAnalyzer, expr: ast.Expr, what: str) -> V:
    v = an.expr(expr)
    if v.ref is None and isinstance(v.type, TensorT):
        return bare_tensor_access(an, expr, v, what)
    if v.ref is None:
        if not isinstance(v.type, ErrorT):
            an.error("AR208", expr.span, f"{what} takes a tensor access such as A[rows, cols], not {v.type}")
        return ERROR
    return v


def bare_tensor_access(an: KernelAnalyzer, expr: ast.Expr, tensor: V, what: str) -> V:
    """A 0-d tensor's bare name (`store(loss, v)`, `load(scale)`) is the access of its one element; a tensor with
    axes needs its indices."""
    tensor_type: TensorT = tensor.type
    name = tensor.value.name or "tensor"
    if tensor_type.shape:
        rank = len(tensor_type.shape)
        message = (
            f"{what} takes a tensor access such as {name}[{', '.join(['i'] * rank)}]: `{name}` has {rank} "
            f"ax{'is' if rank == 1 else 'es'} ({tensor_type}); only a 0-d tensor is accessed by its bare name"
        )
        return an.error("AR208", expr.span, message)
    ref = Ref(tensor.value, name, [], ())
    return V(RefT(name, tensor_type.dtype, ()), ref=ref, span=expr.span)


def mask_arg(an: KernelAnalyzer, expr: ast.Expr, shape: Shape) -> ir.Value | V | None:
    if isinstance(expr, ast.NoneLit):
        return None
    if isinstance(expr, ast.Tuple):
        entries = [(None if isinstance(e, ast.NoneLit) else lambda e=e: an.expr(e), e.span) for e in expr.elts]
        return per_axis_mask(an, entries, shape, expr.span)
    v = an.expr(expr)
    if isinstance(v.type, ErrorT):
        return ERROR
    if isinstance(v.type, TupleT) and v.elts is not None and isinstance(expr, ast.Name):
        # a named per-axis mask (`mask = (rm < M, rn < N)`): its entries, as if the tuple were written here;
        # what is wrong with one is said at the name, which is what this access reads
        named = [(None if isinstance(e.type, NoneT) else lambda e=e: e, expr.span) for e in v.elts]
        return per_axis_mask(an, named, shape, expr.span, f"`{expr.id}`: ")
    if not isinstance(v.type, ScalarT | TileT) or v.type.dtype != BOOL:
        return an.error("AR203", expr.span, f"a mask is boolean, not {an.describe(v)}")
    if not fits(shape_of(v.type), shape):
        return an.error(
            "AR203",
            expr.span,
            f"mask of shape {shape_text(shape_of(v.type))} does not fit the access {shape_text(shape)}",
            mask=[d.value for d in shape_of(v.type)],
            access=[d.value for d in shape],
        )
    return v.value


def add_mask(an: KernelAnalyzer, args: dict, ref: Ref, operands: list, attrs: dict) -> bool:
    """An access's `mask=` argument, when given, appended to its operands (`attrs["mask"]` says so); False when
    the mask is wrong (reported)."""
    if "mask" not in args:
        return True
    mask = mask_arg(an, args["mask"], ref.shape)
    if mask is ERROR:
        return False
    if mask is not None:
        operands.append(mask)
        attrs["mask"] = True
    return True


@type_rule("load")
def call_load(an: KernelAnalyzer, e: ast.Call, name: str) -> V:
    args = bind_args(an, e, ["ref", "mask", "other"], 1)
    if args is None:
        return ERROR
    access = access_arg(an, args["ref"], "load")
    if access is ERROR:
        return ERROR
    ref: Ref = access.ref
    operands = [ref.tensor, *ref.indices]
    attrs = {"tensor": ref.name, "rank": len(ref.indices), "mask": False, "other": False}
    if not add_mask(an, args, ref, operands, attrs):
        return ERROR
    if "other" in args and not isinstance(args["other"], ast.NoneLit):
        other = value_arg(an, args["other"])
        if isinstance(other.type, ErrorT):
            return ERROR
        if not fits(shape_of(other.type), ref.shape):
            return an.error("AR201", args["other"].span, f"`other` does not fit the access {shape_text(ref.shape)}")
        operands.append(other.value)
        attrs["other"] = True
    dtype = access.type.dtype
    result_type = TileT(dtype, ref.shape) if ref.shape else ScalarT(dtype)
    return V(result_type, an.emit("load", operands, result_type, e.span, **attrs), span=e.span)


@type_rule("store", "atomic_add")
def call_store(an: KernelAnalyzer, e: ast.Call, kind: str) -> V:
    args = bind_args(an, e, ["ref", "value", "mask"], 2)
    if args is None:
        return ERROR
    target = args["ref"]
    if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
        an.written.add(target.value.id)  # even when the store has an error: the intent is clear
    elif isinstance(target, ast.Name):
        an.written.add(target.id)  # a 0-d tensor, written by its bare name
    access = access_arg(an, args["ref"], kind)
    value = value_arg(an, args["value"])
    if access is ERROR or isinstance(value.type, ErrorT):
        return ERROR
    ref: Ref = access.ref
    tensor_type: TensorT = ref.tensor.type
    if not tensor_type.out:
        message = (
            f"`{ref.name}` is an input; declare it `{ref.name}: out ...` to write it, or `{ref.name}: inout ...` to "
            "read and write it in place"
        )
        return an.error("AR211", args["ref"].span, message)
    if not fits(shape_of(value.type), ref.shape):
        return an.error(
            "AR201",
            args["value"].span,
            f"a value of shape {shape_text(shape_of(value.type))} does not fit the access {shape_text(ref.shape)}",
            value=[d.value for d in shape_of(value.type)],
            access=[d.value for d in ref.shape],
        )
    target = tensor_type.dtype
    if narrows(value.type.dtype, target) and not is_weak(value.type):
        an.warn(
            "AR212",
            args["value"].span,
            f"{kind} converts {value.type.dtype} to {target} implicitly; write `.to({target})` if intended",
        )
    operands = [ref.tensor, *ref.indices, value.value]
    attrs = {"tensor": ref.name, "rank": len(ref.indices), "mask": False}
    if not add_mask(an, args, ref, operands, attrs):
        return ERROR
    if kind == "atomic_add" and not one_start(an, ref, kind, e.span):  # one start per output (AR220)
        return ERROR
    an.emit(kind, operands, None, e.span, **attrs)
    return V(NoneT(), span=e.span)
