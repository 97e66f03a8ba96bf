"""An independent concrete evaluator of the tile IR (numpy, no z3), to confirm the verifier's witnesses.

It runs one program of a kernel at given sizes, data and program ids, executing every loop iteration, and
records what happened at each memory access, dot, elementwise op, tag assertion and invariant: the index
arrays, masks, tag values and truth values. Float data is not computed (no element values are needed to
confirm an index, mask or tag violation); what a value *stands for* is tracked as concrete index arrays.
With `floats`, float values are computed too (`CVal.floats`, float64): loaded tensors hold data of that kind
("normal", "negative": all below -1, "positive": all above 1, "alternating": one tensor in two negative, the
others positive, "wide": normal times 1000, where exp overflows), masked-off lanes `other` (NaN without one), a
float scalar parameter 1; what a padding witness needs (the lanes a reduction sees), and the values a store
writes (`detail["value"]`), from which a launch's outputs are put together (a witness's failure shows there).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from argus.dsl import ir
from argus.dsl.types import ScalarT, TensorT, TileT


def shape_of(type_) -> tuple[int, ...]:
    return tuple(d.value for d in type_.shape) if isinstance(type_, TileT) else ()


def is_intlike(type_) -> bool:
    return isinstance(type_, ScalarT | TileT) and type_.dtype.is_integer


def tdiv(a, b):
    a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


INT_BINARY = {
    "+": np.add,
    "-": np.subtract,
    "*": np.multiply,
    "//": tdiv,
    "%": lambda a, b: np.asarray(a) - np.asarray(b) * tdiv(a, b),
    "&": np.bitwise_and,
    "|": np.bitwise_or,
    "^": np.bitwise_xor,
    "<<": np.left_shift,
    ">>": np.right_shift,
    "**": np.power,  # a constant exponent, never negative on integers (the analyzer's rule)
}
COMPARE = {
    "<": np.less,
    "<=": np.less_equal,
    ">": np.greater,
    ">=": np.greater_equal,
    "==": np.equal,
    "!=": np.not_equal,
}


@dataclass
class CVal:
    shape: tuple[int, ...]
    array: np.ndarray | None = None  # integers and booleans only
    layout: dict[tuple[str, int], tuple[np.ndarray, str]] = field(default_factory=dict)  # key -> (indices, label)
    tags: dict[str, int] = field(default_factory=dict)
    valid: np.ndarray | None = None
    floats: np.ndarray | None = None  # float values, when the evaluator computes them


FLOAT_MATH = {
    "exp": np.exp,
    "exp2": np.exp2,
    "log": np.log,
    "log2": np.log2,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "tanh": np.tanh,
    "sin": np.sin,
    "cos": np.cos,
    "abs": np.abs,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "erf": np.vectorize(__import__("math").erf),
    # more elementwise math (issue 20 item 3)
    "log1p": np.log1p,
    "expm1": np.expm1,
    "log10": np.log10,
    "tan": np.tan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "floor": np.floor,
    "ceil": np.ceil,
    "trunc": np.trunc,
    "round": np.rint,  # halves to even, as torch.round
    "sign": lambda x: np.where(np.isnan(x), 0.0, np.sign(x)),  # torch.sign(NaN) is 0
}
FLOAT_BINARY = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide, "**": np.power}
REDUCE = {"sum": np.sum, "max": np.max, "min": np.min, "argmax": np.argmax, "argmin": np.argmin}
HINTS = {"multiple_of": lambda x: x, "max_contiguous": lambda x: x}  # promises to the compiler: the value itself
# The scans (issue 20), forward along an axis; a reversed scan is this one on the flipped axis.
SCANS = {
    "cumsum": np.cumsum,
    "cumprod": np.cumprod,
    "cummax": np.maximum.accumulate,
    "cummin": np.minimum.accumulate,
}


def scanned(fn: str, values: np.ndarray, axis: int, reverse: bool) -> np.ndarray:
    """The scan `fn` of `values` along `axis`, from the end when `reverse`."""
    if reverse:
        return np.flip(SCANS[fn](np.flip(values, axis), axis=axis), axis)
    return SCANS[fn](values, axis=axis)


@dataclass
class Event:
    kind: str
    line: int
    loops: dict[str, int]
    detail: dict


def varies(mask: np.ndarray, axes) -> bool:
    """Whether a mask changes along one of `axes`."""
    return any(not np.all(mask == np.take(mask, [0], axis=a)) for a in axes)


def fit(array, shape):
    """Broadcast an array to `shape` (numpy's rule, which is the language's)."""
    if array is None:
        return None
    return np.broadcast_to(np.asarray(array), shape)


class Concrete:
    def __init__(
        self, kernel: ir.KernelIR, sizes: dict[str, int], data: dict[str, np.ndarray], floats: str | None = None
    ):
        self.floats = floats
        self.float_data: dict[str, np.ndarray] = {}
        self.kernel = kernel
        self.sizes = sizes
        self.data = data
        self.env: dict[int, CVal] = {}
        for name, value in kernel.sizes.items():
            self.env[value.id] = CVal((), np.int64(sizes[name]))
        self.tensors = {p.value.id: p for p in kernel.params if isinstance(p.type, TensorT)}
        for p in kernel.params:
            if isinstance(p.type, ScalarT):
                self.env[p.value.id] = CVal((), np.int64(p.default) if is_intlike(p.type) and p.default else None)
                if not is_intlike(p.type):
                    self.env[p.value.id].floats = np.float64(p.default or 1.0)
        self.events: list[Event] = []
        self.loops: dict[str, int] = {}
        self.program: tuple[int, ...] = ()
        self.block(kernel.launch)
        self.grid = [int(self.env[v.id].array) for v in kernel.grid]

    def dims(self, param) -> list[int]:
        return [d.value(self.sizes) for d in param.type.shape]  # a declared view's axis: the product it merges

    def run(self, program: tuple[int, ...]) -> list[Event]:
        self.program = program
        self.events = []
        self.block(self.kernel.body)
        return self.events

    def block(self, block: ir.Block) -> None:
        for op in block.ops:
            CONCRETE[op.kind](self, op)

    def get(self, value: ir.Value) -> CVal:
        return self.env[value.id]

    def put(self, op: ir.Op, v: CVal) -> None:
        self.env[op.result.id] = v

    def record(self, kind: str, op: ir.Op, **detail) -> None:
        self.events.append(Event(kind, op.span.line, dict(self.loops), detail))

    # ---- simple ops ---------------------------------------------------------------------------
    def op_const(self, op):
        value = op.attrs["value"]
        self.put(op, CVal((), np.int64(value) if isinstance(value, int | bool) else None, floats=np.float64(value)))

    def op_program_id(self, op):
        self.put(op, CVal((), np.int64(self.program[op.attrs["axis"]])))

    def op_num_programs(self, op):
        self.put(op, CVal((), np.int64(self.grid[op.attrs["axis"]])))

    def op_arange(self, op):
        self.put(op, CVal((op.attrs["n"],), np.arange(op.attrs["n"], dtype=np.int64)))

    def op_zeros(self, op):
        shape = shape_of(op.result.type)
        integer = op.attrs["dtype"].is_integer
        self.put(op, CVal(shape, np.zeros(shape, np.int64) if integer else None, floats=np.zeros(shape)))

    def op_full(self, op):
        shape = shape_of(op.result.type)
        value = self.get(op.operands[0]).array
        array = np.full(shape, value) if op.attrs["dtype"].is_integer and value is not None else None
        floats = self.float_of(self.get(op.operands[0]))
        self.put(op, CVal(shape, array, floats=None if floats is None else np.full(shape, floats)))

    def op_partition(self, op):
        self.put(op, CVal((), np.int64(1)))

    def op_in_range(self, op):
        self.put(op, CVal((), np.int64(1)))

    def op_permutation(self, op):
        self.put(op, CVal((), np.int64(1)))

    def op_cdiv(self, op):
        a, b = (self.get(v).array for v in op.operands)
        self.put(op, CVal((), tdiv(a + b - 1, b)))

    def op_elementwise(self, op):
        """binary, unary, compare, math, where, cast and anything else elementwise over its operands."""
        shape = shape_of(op.result.type)
        xs = [self.get(v) for v in op.operands]
        arrays = [fit(x.array, shape) for x in xs]
        array = None
        if all(a is not None for a in arrays):
            kind = op.kind
            if kind == "binary" and op.attrs["op"] in INT_BINARY and is_intlike(op.result.type):
                if op.result.type.dtype.kind == "bool":
                    array = {"&": np.logical_and, "|": np.logical_or, "^": np.logical_xor}[op.attrs["op"]](*arrays)
                else:
                    array = INT_BINARY[op.attrs["op"]](*arrays)
            elif kind == "compare":
                array = COMPARE[op.attrs["op"]](*arrays)
            elif kind == "unary":
                name = op.attrs["op"]
                a = arrays[0]
                array = np.logical_not(a) if a.dtype == bool else {"-": -a, "+": a, "~": ~a}.get(name)
            elif kind == "where":
                array = np.where(*arrays)
            elif kind == "cast" and is_intlike(op.result.type):
                array = arrays[0].astype(bool if op.attrs["dtype"].kind == "bool" else np.int64)
            elif kind == "math" and op.attrs["fn"] in ("maximum", "minimum") and is_intlike(op.result.type):
                array = (np.maximum if op.attrs["fn"] == "maximum" else np.minimum)(*arrays)
            elif kind == "math" and op.attrs["fn"] == "sign" and is_intlike(op.result.type):
                array = np.sign(arrays[0])
        if array is None and op.kind == "compare" and self.floats is not None:
            # a comparison of floats (`v > best` of a running argmax) is a mask the kernel computes with data
            values = [fit(self.float_of(x), shape) for x in xs]
            if all(v is not None for v in values):
                with np.errstate(invalid="ignore"):
                    array = COMPARE[op.attrs["op"]](*values)
        layout, tags, valid = {}, {}, None
        layouts = []
        for x in xs:
            aligned = {k: (fit(idx, shape), label) for k, (idx, label) in x.layout.items()}
            layouts.append(aligned)
            for key, entry in aligned.items():
                layout.setdefault(key, entry)
            for name, t in x.tags.items():
                if name in tags and tags[name] != t:
                    tags[name] = None
                else:
                    tags.setdefault(name, t)
            if x.valid is not None:
                valid = fit(x.valid, shape) if valid is None else valid & fit(x.valid, shape)
        tags = {k: v for k, v in tags.items() if v is not None}
        if op.kind in ("cast",):
            tags = dict(xs[0].tags)
        floats = self.elementwise_floats(op, xs, shape)
        valids = [None if x.valid is None else fit(x.valid, shape) for x in xs]
        values = [fit(self.float_of(x), shape) for x in xs]
        name = op.attrs.get("op") or op.attrs.get("fn") or op.kind
        self.record("elementwise", op, layouts=layouts, valids=valids, floats=values, name=name)
        self.put(op, CVal(shape, array, layout, tags, valid, floats))

    def where_kept(self, value: ir.Value, shape: tuple[int, ...], axes) -> list[np.ndarray]:
        """The lanes each `where` on the way to a reduction keeps, where it gives the others one constant and its
        condition changes along a reduced axis: those lanes are padding too (the verifier's rule, computed
        here from the concrete masks)."""
        found, stack = [], [value]
        while stack:
            v = stack.pop()
            op = v.op
            if op is None or shape_of(v.type) != shape:
                continue
            if op.kind in ("binary", "unary", "math", "cast"):
                stack.extend(o for o in op.operands if o.type.dtype.is_float)
            elif op.kind == "where":
                cond = self.get(op.operands[0]).array
                then, orelse = (self.get(o) for o in op.operands[1:])
                if cond is None or not varies(fit(cond, shape).astype(bool), axes):
                    stack.extend(op.operands[1:])
                elif self.constant(orelse) and not self.constant(then):
                    found.append(fit(cond, shape).astype(bool))
                    stack.append(op.operands[1])
                elif self.constant(then) and not self.constant(orelse):
                    found.append(~fit(cond, shape).astype(bool))
                    stack.append(op.operands[2])
        return found

    def constant(self, x: CVal) -> bool:
        values = self.float_of(x)
        return x.valid is None and values is not None and np.unique(np.asarray(values)).size == 1

    def float_of(self, x: CVal):
        """A value's floats: its own, or its integers (a mask is 0 or 1)."""
        if x.floats is not None:
            return x.floats
        return None if x.array is None else np.asarray(x.array, dtype=np.float64)

    def elementwise_floats(self, op, xs, shape):
        if self.floats is None or is_intlike(op.result.type):
            return None
        if op.kind == "where":
            c, a, b = xs
            parts = [fit(self.float_of(v), shape) for v in (a, b)]
            if c.array is None or any(p is None for p in parts):
                return None
            return np.where(fit(c.array, shape), *parts)
        values = [fit(self.float_of(x), shape) for x in xs]
        if any(v is None for v in values):
            return None
        with np.errstate(all="ignore"):
            if op.kind == "binary" and op.attrs["op"] in FLOAT_BINARY:
                return FLOAT_BINARY[op.attrs["op"]](*values)
            if op.kind == "unary" and op.attrs["op"] in ("-", "+"):
                return -values[0] if op.attrs["op"] == "-" else values[0]
            if op.kind == "math" and op.attrs["fn"] in FLOAT_MATH:
                return FLOAT_MATH[op.attrs["fn"]](*values)
            if op.kind == "cast":
                return values[0]
        return None

    # ---- shape ops ------------------------------------------------------------------------------
    def reshaped(self, op, fn):
        x = self.get(op.operands[0])
        shape = shape_of(op.result.type)
        move = lambda a: None if a is None else fn(np.broadcast_to(a, x.shape))  # noqa: E731
        layout = {k: (move(idx), label) for k, (idx, label) in x.layout.items()}
        self.put(op, CVal(shape, move(x.array), layout, dict(x.tags), move(x.valid), move(x.floats)))

    def op_expand_dims(self, op):
        shape = shape_of(op.result.type)
        self.reshaped(op, lambda a: a.reshape(shape))

    def op_trans(self, op):
        self.reshaped(op, lambda a: a.T)

    def op_reshape(self, op):
        shape = shape_of(op.result.type)
        self.reshaped(op, lambda a: a.reshape(shape))

    def op_broadcast_to(self, op):
        shape = shape_of(op.result.type)
        self.reshaped(op, lambda a: np.broadcast_to(a, shape))

    def op_hint(self, op):
        self.put(op, HINTS[op.attrs["fn"]](self.get(op.operands[0])))

    def op_reduce(self, op):
        x = self.get(op.operands[0])
        axis, keep = op.attrs["axis"], op.attrs["keep_dims"]  # one int, or a tuple of axes (sum, max, min)
        axes = ir.reduced_axes(op)
        layout = {}
        for key, (idx, label) in x.layout.items():
            full = np.broadcast_to(idx, x.shape)
            first = full[tuple(slice(0, 1) if k in axes else slice(None) for k in range(full.ndim))]
            if np.all(full == first):  # the index does not vary along the reduced axes: the statistic keeps it
                layout[key] = (first if keep else np.squeeze(first, axis=axes), label)
        valid = None if x.valid is None else np.broadcast_to(x.valid, x.shape)
        for kept in self.where_kept(op.operands[0], x.shape, axes):
            valid = kept if valid is None else valid & kept
        floats = None if x.floats is None else np.broadcast_to(x.floats, x.shape)
        self.record("reduce", op, valid=valid, axis=axis, floats=floats, fn=op.attrs["fn"])
        result = None
        if floats is not None:
            with np.errstate(all="ignore"):
                result = REDUCE[op.attrs["fn"]](floats, axis=axis, keepdims=keep).astype(np.float64)
        array = None
        if x.array is not None and is_intlike(op.result.type) and op.attrs["fn"] in ("sum", "max", "min"):
            # an integer statistic (the first index of a row's max: min(where(best == top, at, N)))
            whole = np.broadcast_to(x.array, x.shape).astype(np.int64)
            array = REDUCE[op.attrs["fn"]](whole, axis=axis, keepdims=keep)
        # a float statistic of lanes that are all masked off is padding too (a key row of 0s summed over D)
        padded = None if valid is None or array is not None else valid.any(axis=axes, keepdims=keep)
        self.put(op, CVal(shape_of(op.result.type), array, layout, dict(x.tags), padded, result))

    def op_scan(self, op):
        """A scan: the layout and mask of its operand (the result has its shape), the values scanned."""
        x = self.get(op.operands[0])
        fn, axis, reverse = op.attrs["fn"], op.attrs["axis"], op.attrs["reverse"]
        valid = None if x.valid is None else np.broadcast_to(x.valid, x.shape)
        floats = None if x.floats is None else np.broadcast_to(x.floats, x.shape)
        self.record("scan", op, valid=valid, axis=axis, floats=floats, fn=fn, reverse=reverse)
        array = (
            None if x.array is None else scanned(fn, np.broadcast_to(x.array, x.shape).astype(np.int64), axis, reverse)
        )
        result = None
        if floats is not None:
            with np.errstate(all="ignore"):
                result = scanned(fn, floats.astype(np.float64), axis, reverse)
        elif self.floats is not None and array is not None:
            result = array.astype(np.float64)
        self.put(op, CVal(x.shape, array, dict(x.layout), dict(x.tags), valid, result))

    # ---- memory and dot -------------------------------------------------------------------------
    def access(self, op, **written):
        parts = ir.memory_access(op)
        param = self.tensors[parts.tensor.id]
        arrays = [self.get(v).array for v in parts.indices]
        extra = [self.get(v).array for v in (parts.value, parts.mask) if v is not None]
        shape = np.broadcast_shapes(*[np.shape(a) for a in arrays + extra if a is not None])
        if op.kind == "load":
            shape = shape_of(op.result.type)
        indices = [np.broadcast_to(a, shape) for a in arrays]
        mask = np.ones(shape, bool) if parts.mask is None else np.broadcast_to(self.get(parts.mask).array, shape)
        # where each index's own loads were masked off (None: no masked load), for a padding lane's atomic
        valids = [
            None if self.get(v).valid is None else np.broadcast_to(self.get(v).valid, shape) for v in parts.indices
        ]
        self.record(
            op.kind, op, tensor=param.name, indices=indices, mask=mask, dims=self.dims(param), valids=valids, **written
        )
        return param, indices, mask, shape

    def op_load(self, op):
        param, indices, mask, shape = self.access(op)
        array = None
        if is_intlike(op.result.type):
            table = self.data.get(param.name)
            array = np.zeros(shape, np.int64)
            if table is not None:
                flat = [np.clip(i, 0, d - 1) for i, d in zip(indices, table.shape, strict=True)]
                array = np.where(mask, table[tuple(flat)], 0)
        labels = [str(d) for d in param.type.shape]
        layout = {(param.name, axis): (idx, labels[axis]) for axis, idx in enumerate(indices)}
        tags = {}
        for axis, label in enumerate(labels):
            if labels.count(label) == 1 and label.isidentifier():
                tags[label] = int(indices[axis].flat[0]) if indices[axis].size else 0
        valid = None if not op.attrs.get("mask") else mask
        floats = None
        if self.floats is not None and not is_intlike(op.result.type):
            table = self.float_table(param)
            flat = [np.clip(i, 0, d - 1) for i, d in zip(indices, table.shape, strict=True)]
            parts = ir.memory_access(op)
            other = np.nan if parts.other is None else self.float_of(self.get(parts.other))
            floats = np.where(mask, table[tuple(flat)], other)
        elif self.floats is not None and array is not None:
            floats = array.astype(np.float64)
        self.put(op, CVal(tuple(shape), array, layout, tags, valid, floats))

    def float_table(self, param) -> np.ndarray:
        """The float data of a tensor, made on first use, of the kind `floats` says."""
        if param.name not in self.float_data:
            rng = np.random.default_rng(len(self.float_data))
            dims = [max(d, 1) for d in self.dims(param)]
            base = rng.random(dims)
            kinds = {"negative": -1 - base, "positive": 1 + base, "normal": rng.standard_normal(dims)}
            kinds["wide"] = 1000 * kinds["normal"]  # exp overflows: what a max subtracted before it is for
            # "alternating": the tensors loaded first, third, ... negative, the others positive (a dot's
            # operands of opposite signs: every product negative)
            kind = self.floats
            if kind == "alternating":
                kind = "negative" if len(self.float_data) % 2 == 0 else "positive"
            self.float_data[param.name] = kinds[kind]
        return self.float_data[param.name]

    def op_store(self, op):
        # and the layout of the value, for AR319 (an element stored at indices other than those it stands for)
        value = self.get(ir.memory_access(op).value)
        self.access(op, value=self.stored(op), layout=value.layout)

    def op_atomic_add(self, op):
        self.access(op, value=self.stored(op))

    def op_atomic_extremum(self, op):  # atomic_max, atomic_min: what they combine, as atomic_add's
        self.access(op, value=self.stored(op))

    def op_exchange(self, op):
        """atomic_xchg, atomic_cas: the access, and as old values the output's start (0): what the element holds
        before any program writes it. The verifier does not model them (an unconstrained value)."""
        _, _, _, shape = self.access(op, value=self.stored(op))
        shape = shape_of(op.result.type)
        array = np.zeros(shape, np.int64) if is_intlike(op.result.type) else None
        floats = np.zeros(shape) if self.floats is not None and array is None else None
        self.put(op, CVal(shape, array, floats=floats))

    def stored(self, op):
        """The float values a store or atomic_add writes (with `floats`; else None)."""
        value = ir.memory_access(op).value
        return None if self.floats is None or value is None else self.float_of(self.get(value))

    def op_dot(self, op):
        a, b = self.get(op.operands[0]), self.get(op.operands[1])
        a_layout = {k: (np.broadcast_to(i, a.shape), label) for k, (i, label) in a.layout.items()}
        b_layout = {k: (np.broadcast_to(i, b.shape), label) for k, (i, label) in b.layout.items()}
        self.record(
            "dot",
            op,
            a=a_layout,
            b=b_layout,
            a_valid=a.valid,
            b_valid=b.valid,
            a_shape=a.shape,
            b_shape=b.shape,
            a_floats=a.floats,
            b_floats=b.floats,
        )
        shape = shape_of(op.result.type)
        layout = {}
        for k, (i, label) in a_layout.items():
            if np.all(i == np.take(i, [0], axis=-1)):
                layout[k] = (np.take(i, [0], axis=-1), label)
        for k, (i, label) in b_layout.items():
            if np.all(i == np.take(i, [0], axis=-2)):
                layout[k] = (np.take(i, [0], axis=-2), label)
        tags = {n: t for n, t in a.tags.items() if b.tags.get(n, t) == t}
        tags.update({n: t for n, t in b.tags.items() if n not in a.tags})
        floats = None
        if a.floats is not None and b.floats is not None:
            with np.errstate(all="ignore"):
                floats = np.matmul(np.broadcast_to(a.floats, a.shape), np.broadcast_to(b.floats, b.shape))
            if len(op.operands) > 2 and self.get(op.operands[2]).floats is not None:
                floats = floats + self.get(op.operands[2]).floats
        valid = None
        if a.valid is not None or b.valid is not None:
            # the result's lane (i, j) is padding where every product of its sum is: a's row or b's column
            va = np.ones(a.shape, bool) if a.valid is None else np.broadcast_to(a.valid, a.shape)
            vb = np.ones(b.shape, bool) if b.valid is None else np.broadcast_to(b.valid, b.shape)
            valid = va.any(axis=-1)[..., :, None] & vb.any(axis=-2)[..., None, :]
        self.put(op, CVal(shape, None, layout, tags, valid, floats))

    # ---- tags -----------------------------------------------------------------------------------
    def op_tag(self, op):
        x = self.get(op.operands[0])
        tags = dict(x.tags)
        for name, v in zip(op.attrs["names"], op.operands[1:], strict=True):
            tags[name] = int(self.get(v).array)
        self.put(op, CVal(x.shape, x.array, x.layout, tags, x.valid, x.floats))

    def op_tag_read(self, op):
        x = self.get(op.operands[0])
        self.put(op, CVal((), None if op.attrs["name"] not in x.tags else np.int64(x.tags[op.attrs["name"]])))

    def op_assert_tag(self, op):
        x = self.get(op.operands[0])
        holds = all(
            x.tags.get(name) == int(self.get(v).array)
            for name, v in zip(op.attrs["names"], op.operands[1:], strict=True)
        )
        self.record("assert", op, holds=holds)

    def op_assert(self, op):
        cond = self.get(op.operands[0]).array
        self.record("assert", op, holds=cond is not None and bool(np.all(cond)))

    def op_invariant(self, op):
        cond = self.get(op.operands[0]).array
        self.record("invariant", op, holds=cond is not None and bool(np.all(cond)))

    # ---- control flow ---------------------------------------------------------------------------
    def op_for(self, op):
        start, stop, step = (int(self.get(v).array) for v in op.operands[:3])
        body = op.regions[0]
        carried = [self.get(v) for v in op.operands[3:]]
        var = op.attrs["var"]
        for iv in range(start, stop, step):
            self.loops[var] = iv
            self.env[body.args[0].id] = CVal((), np.int64(iv))
            for arg, value in zip(body.args[1:], carried, strict=True):
                self.env[arg.id] = value
            self.block(body)
            carried = [self.get(v) for v in body.yields]
        self.loops.pop(var, None)
        for result, value in zip(op.results, carried, strict=True):
            self.env[result.id] = value

    def op_if(self, op):
        cond = bool(self.get(op.operands[0]).array)
        region = op.regions[0] if cond else op.regions[1]
        self.block(region)
        for result, value in zip(op.results, region.yields, strict=True):
            self.env[result.id] = self.get(value)


# The concrete evaluation of each IR op kind (argus.dsl.ops.IR_OPS); per built-in, FLOAT_MATH, REDUCE, HINTS and
# SCANS.
ELEMENTWISE = ("binary", "unary", "compare", "math", "where", "cast")
CONCRETE = {
    **dict.fromkeys(ELEMENTWISE, Concrete.op_elementwise),
    "const": Concrete.op_const,
    "program_id": Concrete.op_program_id,
    "num_programs": Concrete.op_num_programs,
    "arange": Concrete.op_arange,
    "zeros": Concrete.op_zeros,
    "full": Concrete.op_full,
    "partition": Concrete.op_partition,
    "in_range": Concrete.op_in_range,
    "permutation": Concrete.op_permutation,
    "cdiv": Concrete.op_cdiv,
    "expand_dims": Concrete.op_expand_dims,
    "trans": Concrete.op_trans,
    "reshape": Concrete.op_reshape,
    "broadcast_to": Concrete.op_broadcast_to,
    "hint": Concrete.op_hint,
    "reduce": Concrete.op_reduce,
    "load": Concrete.op_load,
    "store": Concrete.op_store,
    "atomic_add": Concrete.op_atomic_add,
    "atomic_max": Concrete.op_atomic_extremum,
    "atomic_min": Concrete.op_atomic_extremum,
    "atomic_xchg": Concrete.op_exchange,
    "atomic_cas": Concrete.op_exchange,
    "scan": Concrete.op_scan,
    "dot": Concrete.op_dot,
    "tag": Concrete.op_tag,
    "tag_read": Concrete.op_tag_read,
    "assert_tag": Concrete.op_assert_tag,
    "assert": Concrete.op_assert,
    "invariant": Concrete.op_invariant,
    "for": Concrete.op_for,
    "if": Concrete.op_if,
}
UNSUPPORTED: dict[str, str] = {}  # kinds the concrete evaluator deliberately does not run, and why (none)
