"""Loads, stores and atomic adds: the accesses the race and coverage checks pair up, and the bounds check."""

from __future__ import annotations

from typing import TYPE_CHECKING

import z3

from argus.dsl import ir
from argus.verify.facts import Partition, Permutation, Range
from argus.verify.infinite_rows import nan_stored
from argus.verify.model import Access, Context, Entry, Obligation, Sym
from argus.verify.padding_checks import atomic_padding, loaded
from argus.verify.paired_axes import paired_axes
from argus.verify.rules import rule
from argus.verify.terms import (
    move_coords,
)
from argus.verify.values import aligned, coord_list, coord_ranges, is_bool, is_int, shape_of

if TYPE_CHECKING:
    from argus.verify.evaluate import Evaluator


def access(ev: Evaluator, op: ir.Op, context: Context) -> Access:
    parts = ir.memory_access(op)
    param = ev.shared.tensors[parts.tensor.id]
    shape = shape_of(op.result.type) if op.kind == "load" else access_shape(parts)
    indices = [ev.int_term(aligned(ev.get(v), shape)) for v in parts.indices]
    mask = z3.BoolVal(True)
    if parts.mask is not None:
        mask = ev.bool_term(aligned(ev.get(parts.mask), shape))
    labels = [str(d) for d in param.type.shape]
    dims = ev.shared.dims(param)
    made = Access(op.kind, param.name, indices, mask, shape, dims, labels, op.span, context, ev.program, op)
    if ev.recording:
        ev.accesses.append(made)
    bounds(ev, made)
    return made


def access_shape(parts: ir.MemoryAccess) -> tuple[int, ...]:
    """The broadcast of the indices, the value and the mask: the shape of the stored tile."""
    shapes = [shape_of(v.type) for v in [*parts.indices, parts.value, parts.mask] if v is not None]
    rank = max((len(s) for s in shapes), default=0)
    result = [1] * rank
    for shape in shapes:
        for k, n in enumerate(shape):
            axis = k + rank - len(shape)
            result[axis] = max(result[axis], n)
    return tuple(result)


def bounds(ev: Evaluator, access: Access) -> None:
    if not ev.emitting:
        return  # the other program's instance, or a loop's first pass: the obligation would be dropped
    inside = [z3.And(index >= 0, index < dim) for index, dim in zip(access.indices, access.dims, strict=True)]
    shown = [
        (f"{access.tensor} index {d} ({label})", idx)
        for d, (idx, label) in enumerate(zip(access.indices, access.labels, strict=True))
    ]
    shown += [(f"{access.tensor} extent {d}", dim) for d, dim in enumerate(access.dims)]
    ev.emit(
        Obligation(
            "in_bounds",
            "AR301",
            access.span,
            f"{access.kind} of `{access.tensor}` may be out of bounds",
            z3.And(*inside) if inside else z3.BoolVal(True),
            access.context.assumptions + coord_ranges(access.shape) + [access.mask],
            access.context.loops,
            ev.program,
            coord_list(access.shape),
            shown,
        )
    )


@rule("load")
def load_rule(ev: Evaluator, op: ir.Op, context: Context) -> None:
    made = access(ev, op, context)
    parts = ir.memory_access(op)
    param = ev.shared.tensors[parts.tensor.id]
    term = None
    if is_int(op.result.type) or is_bool(op.result.type):
        data = ev.shared.data(param.name, len(made.indices))(*made.indices)
        ev.shared.facts.note(param.name, data)
        if is_bool(op.result.type):
            data = data != 0
        other = aligned(ev.get(parts.other), made.shape).term if parts.other is not None else None
        if other is None:
            other = ev.shared.fresh("masked-off element", "bool" if is_bool(op.result.type) else "int")
        if z3.is_bool(other) != z3.is_bool(data):
            other = other != 0 if z3.is_bool(data) else z3.If(other, 1, 0)
        term = data if parts.mask is None else z3.If(made.mask, data, other)
    layout, tags = {}, {}
    counts = {label: made.labels.count(label) for label in made.labels}
    origin = [z3.IntVal(0)] * len(made.shape)
    for axis, (index, label) in enumerate(zip(made.indices, made.labels, strict=True)):
        layout[(param.name, axis)] = Entry(index, label)
        if counts[label] == 1 and label.isidentifier():
            tags[label] = move_coords(index, dict(enumerate(origin)))
    valid = None if parts.mask is None else made.mask
    lanes = None
    if valid is not None and not is_bool(op.result.type):  # an integer tile's lanes count once it is a float
        other_sym = ev.get(parts.other) if parts.other is not None else None
        lanes = loaded(ev, op, made.mask, other_sym)
    ev.result(op, Sym(made.shape, term, layout, tags, valid, lanes))


@rule("store")
def store_rule(ev: Evaluator, op: ir.Op, context: Context) -> None:
    made = access(ev, op, context)
    value = ev.get(ir.memory_access(op).value)
    if value.lanes is not None and value.shape == made.shape:
        nan_stored(ev, op, value, made.mask, context)
    # the stored tile's elements stand for the indices it is stored at: a value whose axes are another
    # dimension's (a transposed tile on square tiles) pairs them the way a misplaced broadcast does (AR319)
    where = {
        (made.tensor, d): Entry(index, label)
        for d, (index, label) in enumerate(zip(made.indices, made.labels, strict=True))
    }
    stored = [aligned(value, made.shape), Sym(made.shape, layout=where, valid=made.mask)]
    paired_axes(ev, op, stored, made.shape, context, "the value stored transposed, or at another tile's index?")


@rule("atomic_add")
def atomic_add_rule(ev: Evaluator, op: ir.Op, context: Context) -> None:
    atomic_padding(ev, op, access(ev, op, context), context)


# data facts ---------------------------------------------------------------------------------------
@rule("partition")
def partition_rule(ev: Evaluator, op: ir.Op, context: Context) -> None:
    param = ev.shared.tensors[op.operands[0].id]
    total = ev.int_term(ev.get(op.operands[1]))
    function = ev.shared.data(param.name, 1)
    ev.shared.facts.partitions[param.name] = Partition(function, total, ev.shared.dims(param)[0])
    ev.result(op, Sym((), z3.BoolVal(True)))


@rule("in_range")
def in_range_rule(ev: Evaluator, op: ir.Op, context: Context) -> None:
    param = ev.shared.tensors[op.operands[0].id]
    lo, hi, *ignore = (ev.int_term(ev.get(v)) for v in op.operands[1:])
    dims = ev.shared.dims(param)
    function = ev.shared.data(param.name, len(dims))
    ev.shared.facts.ranges.setdefault(param.name, []).append(Range(function, lo, hi, dims, *ignore))
    ev.result(op, Sym((), z3.BoolVal(True)))


@rule("permutation")
def permutation_rule(ev: Evaluator, op: ir.Op, context: Context) -> None:
    param = ev.shared.tensors[op.operands[0].id]
    total = ev.int_term(ev.get(op.operands[1]))
    position = z3.Function(f"{param.name}.position", z3.IntSort(), z3.IntSort())
    fact = Permutation(ev.shared.data(param.name, 1), total, ev.shared.dims(param)[0], position)
    ev.shared.facts.permutations[param.name] = fact
    ev.result(op, Sym((), z3.BoolVal(True)))
