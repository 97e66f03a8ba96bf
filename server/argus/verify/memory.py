"""Loads, stores and atomic adds: the accesses the race and coverage checks pair up, and the bounds check."""

from __future__ import annotations

import z3

from argus.dsl import ir
from argus.verify.facts import Partition, Permutation, Range
from argus.verify.model import Access, Context, Entry, Obligation, Sym
from argus.verify.rules import rule
from argus.verify.terms import (
    move_coords,
)
from argus.verify.values import coord_list, coord_ranges, is_bool, is_int, shape_of


class MemoryMixin:
    """Evaluator ops for tensor accesses (mixed into Evaluator)."""

    def access(self, op: ir.Op, context: Context) -> Access:
        parts = ir.memory_access(op)
        param = self.shared.tensors[parts.tensor.id]
        shape = shape_of(op.result.type) if op.kind == "load" else self.access_shape(parts)
        indices = [self.int_term(self.aligned(self.get(v), shape)) for v in parts.indices]
        mask = z3.BoolVal(True)
        if parts.mask is not None:
            mask = self.bool_term(self.aligned(self.get(parts.mask), shape))
        labels = [str(d) for d in param.type.shape]
        dims = self.shared.dims(param)
        access = Access(op.kind, param.name, indices, mask, shape, dims, labels, op.span, context, self.program, op)
        if self.recording:
            self.accesses.append(access)
        self.bounds(access)
        return access

    def access_shape(self, parts: ir.MemoryAccess) -> tuple[int, ...]:
        """The broadcast of the indices, the value and the mask: the shape of the stored tile."""
        shapes = [shape_of(v.type) for v in [*parts.indices, parts.value, parts.mask] if v is not None]
        rank = max((len(s) for s in shapes), default=0)
        result = [1] * rank
        for shape in shapes:
            for k, n in enumerate(shape):
                axis = k + rank - len(shape)
                result[axis] = max(result[axis], n)
        return tuple(result)

    def bounds(self, access: Access) -> None:
        if not self.emitting:
            return  # the other program's instance, or a loop's first pass: the obligation would be dropped
        inside = [z3.And(index >= 0, index < dim) for index, dim in zip(access.indices, access.dims, strict=True)]
        shown = [
            (f"{access.tensor} index {d} ({label})", idx)
            for d, (idx, label) in enumerate(zip(access.indices, access.labels, strict=True))
        ]
        shown += [(f"{access.tensor} extent {d}", dim) for d, dim in enumerate(access.dims)]
        self.emit(
            Obligation(
                "in_bounds",
                "AR301",
                access.span,
                f"{access.kind} of `{access.tensor}` may be out of bounds",
                z3.And(*inside) if inside else z3.BoolVal(True),
                access.context.assumptions + coord_ranges(access.shape) + [access.mask],
                access.context.loops,
                self.program,
                coord_list(access.shape),
                shown,
            )
        )

    @rule("load")
    def op_load(self, op: ir.Op, context: Context) -> None:
        access = self.access(op, context)
        parts = ir.memory_access(op)
        param = self.shared.tensors[parts.tensor.id]
        term = None
        if is_int(op.result.type) or is_bool(op.result.type):
            data = self.shared.data(param.name, len(access.indices))(*access.indices)
            self.shared.facts.note(param.name, data)
            if is_bool(op.result.type):
                data = data != 0
            other = self.aligned(self.get(parts.other), access.shape).term if parts.other is not None else None
            if other is None:
                other = self.shared.fresh("masked-off element", "bool" if is_bool(op.result.type) else "int")
            if z3.is_bool(other) != z3.is_bool(data):
                other = other != 0 if z3.is_bool(data) else z3.If(other, 1, 0)
            term = data if parts.mask is None else z3.If(access.mask, data, other)
        layout, tags = {}, {}
        counts = {label: access.labels.count(label) for label in access.labels}
        origin = [z3.IntVal(0)] * len(access.shape)
        for axis, (index, label) in enumerate(zip(access.indices, access.labels, strict=True)):
            layout[(param.name, axis)] = Entry(index, label)
            if counts[label] == 1 and label.isidentifier():
                tags[label] = move_coords(index, dict(enumerate(origin)))
        valid = None if parts.mask is None else access.mask
        lanes = None
        if valid is not None and not is_bool(op.result.type):  # an integer tile's lanes count once it is a float
            other = self.get(parts.other) if parts.other is not None else None
            lanes = self.loaded(op, access.mask, other)
        self.result(op, Sym(access.shape, term, layout, tags, valid, lanes))

    @rule("store")
    def op_store(self, op: ir.Op, context: Context) -> None:
        self.access(op, context)

    @rule("atomic_add")
    def op_atomic_add(self, op: ir.Op, context: Context) -> None:
        self.access(op, context)

    # tags ----------------------------------------------------------------------------------------

    @rule("partition")
    def op_partition(self, op: ir.Op, context: Context) -> None:
        param = self.shared.tensors[op.operands[0].id]
        total = self.int_term(self.get(op.operands[1]))
        function = self.shared.data(param.name, 1)
        self.shared.facts.partitions[param.name] = Partition(function, total, self.shared.dims(param)[0])
        self.result(op, Sym((), z3.BoolVal(True)))

    @rule("in_range")
    def op_in_range(self, op: ir.Op, context: Context) -> None:
        param = self.shared.tensors[op.operands[0].id]
        lo, hi = (self.int_term(self.get(v)) for v in op.operands[1:])
        dims = self.shared.dims(param)
        function = self.shared.data(param.name, len(dims))
        self.shared.facts.ranges.setdefault(param.name, []).append(Range(function, lo, hi, dims))
        self.result(op, Sym((), z3.BoolVal(True)))

    @rule("permutation")
    def op_permutation(self, op: ir.Op, context: Context) -> None:
        param = self.shared.tensors[op.operands[0].id]
        total = self.int_term(self.get(op.operands[1]))
        position = z3.Function(f"{param.name}.position", z3.IntSort(), z3.IntSort())
        fact = Permutation(self.shared.data(param.name, 1), total, self.shared.dims(param)[0], position)
        self.shared.facts.permutations[param.name] = fact
        self.result(op, Sym((), z3.BoolVal(True)))
