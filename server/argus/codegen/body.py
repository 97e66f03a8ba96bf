"""The kernel body: tile IR ops become Triton statements, one `# argus:LINE` per line.

Logical indices become pointers with strides (`A + rm[:, None] * A_stride0 + rk[None, :] * A_stride1`); values
named in the Argus source keep their names; unnamed values read once are written inline.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from argus.codegen.dtypes import triton_dtype
from argus.codegen.errors import CodegenError
from argus.codegen.expr import Expr, atom, binary, call, literal, method, subscript, tuple_of, unary
from argus.codegen.math_lowering import HELPERS, power
from argus.codegen.math_lowering import MATH as MORE_MATH
from argus.codegen.plan import DATA_FACTS, PROOF_ONLY, SIDE_EFFECTS, Plan, make_plan
from argus.codegen.tma import FLAG, TmaPlan, plan_tma
from argus.dsl import ir
from argus.dsl.builtins import LOOP_FLAGS
from argus.dsl.ops import FLOAT_MATH, ROUNDING
from argus.dsl.types import ScalarT, TensorT, TileT
from argus.dsl.unparse import without_parens

# The combine functions of the scans Triton has no function for (tl.associative_scan), defined once at the top of a
# module that uses them (module.py): scan built-in -> (name, the elementwise Triton function it applies).
SCAN_COMBINES = {"cummax": ("_argus_max_combine", "tl.maximum"), "cummin": ("_argus_min_combine", "tl.minimum")}

# Python and module names the generated code relies on: never used for an Argus value.
RESERVED = {*keyword.kwlist, "tl", "triton", "math", "torch", "float", "int", "range", "min", "max", "len", *HELPERS}
CAS_POINTERS = "_argus_cas_pointers"  # the pointers of an atomic_cas, named for their shape (compare_and_swap)
RESERVED |= {name for name, _ in SCAN_COMBINES.values()} | {CAS_POINTERS}

TRANSCENDENTAL = FLOAT_MATH  # Triton computes them in f32 or f64 only
WIDENED = TRANSCENDENTAL | ROUNDING  # computed in f32 for a narrower float (tl.floor takes f32 and f64 only)


def triton_function(name: str) -> Callable[[list[Expr]], Expr]:
    return lambda operands: call(name, *operands)


def tanh_of(operands: list[Expr]) -> Expr:
    """Triton has no portable tanh: tanh(x) = 2 sigmoid(2x) - 1."""
    doubled = binary(atom("2"), "*", operands[0])
    return binary(binary(atom("2"), "*", call("tl.sigmoid", doubled)), "-", atom("1"))


# The Triton form of each built-in that lowers to a `math` op (by its `fn`), then of the `reduce` and `hint` ones.
MATH: dict[str, Callable[[list[Expr]], Expr]] = {
    **{name: triton_function(f"tl.{name}") for name in sorted(TRANSCENDENTAL - {"tanh"})},
    "tanh": tanh_of,
    **{name: triton_function(f"tl.{name}") for name in ("abs", "maximum", "minimum")},
    **MORE_MATH,  # log1p ... sign: argus.codegen.math_lowering
}
REDUCTIONS = {name: f"tl.{name}" for name in ("sum", "max", "min", "argmax", "argmin")}
HINTS = {"multiple_of": "tl.multiple_of", "max_contiguous": "tl.max_contiguous"}
# The scans (issue 20): tl.cumsum and tl.cumprod, and tl.associative_scan with a combine function for the others.
SCANS = {"cumsum": "tl.cumsum", "cumprod": "tl.cumprod", **{fn: "tl.associative_scan" for fn in SCAN_COMBINES}}

LOWERINGS: dict[str, Callable[..., Expr]] = {}


def lowering(*kinds: str):
    """Register the decorated function as the lowering of the IR op kinds `kinds` to a Triton expression."""

    def register(lower: Callable[..., Expr]) -> Callable[..., Expr]:
        for kind in kinds:
            assert kind not in LOWERINGS, f"two lowerings for {kind}"
            LOWERINGS[kind] = lower
        return lower

    return register


# Input precisions Triton's CPU interpreter refuses (3.6 and 3.9 accept only ieee, tf32 and tf32x3), and the
# module-level constexpr (codegen/runtime.py) that says the interpreter runs the kernel.
INTERPRETER_REFUSES = ("bf16x3", "bf16x6")
INTERPRETED = "_ARGUS_INTERPRETED"


def stride_name(tensor: str, axis: int) -> str:
    return f"{tensor}_stride{axis}"


def strides_of(kernel: ir.KernelIR, param: ir.ParamIR) -> list[str | None]:
    """Per axis of a tensor parameter, the name of its stride argument, or None for the axis a `layout`
    declaration makes contiguous: its stride is the constant 1, which Triton's contiguity analysis sees."""
    unit = kernel.layouts.get(param.name)
    return [None if axis == unit else stride_name(param.name, axis) for axis in range(len(param.type.shape))]


def constant_source(text: str) -> Expr:
    """A tile-constant expression from the IR (`BM`, `(2 * BN)`, `cdiv(BM, 16)`) as Triton constexpr code."""
    return Expr(re.sub(r"\bcdiv\(", "tl.cdiv(", text), 14)


# `policy warp_specialize = 1` / `flatten = 1`: constexpr flags of the @triton.jit function, passed as the
# options of the outermost runtime loops (`tl.range(start, stop, step, warp_specialize=ARGUS_WS)`).
LOOP_FLAG_NAMES = {"warp_specialize": "ARGUS_WS", "flatten": "ARGUS_FLATTEN"}
assert set(LOOP_FLAG_NAMES) == set(LOOP_FLAGS)


def range_arguments(start: Expr, stop: Expr, step: Expr) -> str:
    if step.text == "1":
        return str(stop) if start.text == "0" else f"{start}, {stop}"
    return f"{start}, {stop}, {step}"


@dataclass(slots=True)
class Lines:
    """Generated lines, each with the 1-based Argus line it came from (None for scaffolding)."""

    rows: list[tuple[str, int | None]] = field(default_factory=list)

    def add(self, indent: int, text: str, argus_line: int | None = None) -> None:
        self.rows.append(("    " * indent + text, argus_line))

    def extend(self, other: Lines) -> None:
        self.rows.extend(other.rows)


class BodyEmitter:
    def __init__(self, kernel: ir.KernelIR, reserved: set[str]):
        self.kernel = kernel
        self.plan: Plan = make_plan(kernel.body)
        self.tma: TmaPlan = plan_tma(kernel, self.plan.resolve)
        self.reserved = reserved | RESERVED
        self.names: dict[int, str] = {}
        self.exprs: dict[int, Expr] = {}
        self.holder: dict[str, ir.Value] = {}
        self.runtime_loops = 0  # runtime `range` loops around the op being emitted
        self.yield_target: dict[int, str] = {}  # value id -> the branch result name it can be written to directly
        for param in kernel.params:
            self.names[param.value.id] = param.name
        for size, value in kernel.sizes.items():
            self.names[value.id] = size
        self.lines = Lines()

    # ---- names ----------------------------------------------------------------------------------
    def text(self, value: ir.Value) -> Expr:
        value = self.plan.resolve(value)
        if value.id in self.exprs:
            return self.exprs[value.id]
        if value.id in self.names:
            return atom(self.names[value.id])
        raise CodegenError(f"internal: value {value} is read before it is defined")

    def available(self, name: str, position: float) -> bool:
        if name in self.reserved:
            return False
        holder = self.holder.get(name)
        return holder is None or self.plan.last_use.get(holder.id, -1.0) <= position

    def bind(self, value: ir.Value, position: float, base: str | None = None) -> str:
        base = base or value.name or self.plan.tag_names.get(value.id) or "tmp"
        base = base if base.isidentifier() else "tmp"
        name, suffix = base, 1
        while not self.available(name, position):
            suffix += 1
            name = f"{base}_{suffix}"
        self.names[value.id] = name
        self.holder[name] = value
        return name

    # ---- statements -----------------------------------------------------------------------------
    def emit(self) -> Lines:
        self.block(self.kernel.body, 1)
        return self.lines

    def block(self, block: ir.Block, indent: int) -> int:
        """Emit a block's live ops; returns how many lines it wrote."""
        before = len(self.lines.rows)
        for op in block.ops:
            if id(op) not in self.plan.live or op.kind == "tag":
                continue
            line = op.span.line + 1
            statement = STATEMENTS.get(op.kind)
            if statement is not None:
                statement(self, op, indent)
            else:
                expr = self.expression(op)
                if op.result.id in self.plan.inline:
                    self.exprs[op.result.id] = expr
                else:
                    name = self.bind_result(op.result, self.plan.position[id(op)])
                    self.lines.add(indent, f"{name} = {expr}", line)
        return len(self.lines.rows) - before

    def bind_result(self, value: ir.Value, position: float, base: str | None = None) -> str:
        """Name a value; a branch's last value, yielded as the branch result, takes the result's name."""
        target = self.yield_target.pop(value.id, None)
        if target is None:
            return self.bind(value, position, base)
        self.names[value.id] = target
        self.holder[target] = value
        return target

    def aim_yields(self, region: ir.Block, names: list[str]) -> None:
        """A branch whose last op makes the value it yields writes that value straight into the result's name:
        nothing in the branch runs after it, and the name's old value is not read after the `if`."""
        live = [op for op in region.ops if id(op) in self.plan.live and op.kind != "tag"]
        if not live or not live[-1].results:
            return
        last = {result.id for result in live[-1].results}
        yielded = {self.plan.resolve(value).id for value in region.yields}
        for name, value in zip(names, region.yields, strict=True):
            value = self.plan.resolve(value)
            holder = self.holder.get(name)
            if holder is not None and holder.id in yielded:
                continue  # the name's current value is itself a result of this branch: copy, do not overwrite
            if value.id in last and value.id not in self.plan.inline and value.id not in self.yield_target:
                self.yield_target[value.id] = name

    def materialized(self, value: ir.Value, type_) -> str:
        """A value as a loop-carried or branch result: a literal becomes a typed scalar so that both sides of
        a loop or an `if` have one Triton type."""
        value = self.plan.resolve(value)
        if value.op is not None and value.op.kind == "const" and isinstance(type_, ScalarT):
            return f"tl.full((), {self.text(value)}, {triton_dtype(type_.dtype)})"
        return str(self.text(value))

    def assign_all(self, pairs: list[tuple[str, str]], indent: int, line: int) -> None:
        pairs = [(target, source) for target, source in pairs if target != source]
        if len(pairs) == 1:
            self.lines.add(indent, f"{pairs[0][0]} = {pairs[0][1]}", line)
        elif pairs:
            targets = ", ".join(t for t, _ in pairs)
            sources = ", ".join(s for _, s in pairs)
            self.lines.add(indent, f"{targets} = {sources}", line)

    def for_loop(self, op: ir.Op, indent: int) -> None:
        plan, position, line = self.plan, self.plan.position[id(op)], op.span.line + 1
        start, stop, step = (self.text(v) for v in op.operands[:3])
        inits = op.operands[3:]
        body = op.regions[0]
        induction, args = body.args[0], body.args[1:]
        carried, copies = [], []
        for arg, init in zip(args, inits, strict=True):
            init = plan.resolve(init)
            own = self.names.get(init.id)
            reusable = (
                init.id not in plan.inline
                and own is not None
                and own not in carried
                and own not in self.reserved
                and self.holder.get(own) is init
                and plan.last_use.get(init.id, -1.0) <= position
            )
            name = own if reusable else self.bind(arg, position, base=arg.name)
            if not reusable:
                copies.append((name, self.materialized(init, arg.type)))
            self.names[arg.id] = name
            self.holder[name] = arg
            carried.append(name)
        self.assign_all(copies, indent, line)
        variable = self.bind(induction, position + 0.5, base=op.attrs.get("var"))
        arguments = range_arguments(start, stop, step)
        static = bool(op.attrs.get("static"))
        iterable = "tl.static_range" if static else "range"
        flags = [f for f in LOOP_FLAGS if f in self.kernel.policy] if not static and not self.runtime_loops else []
        if flags:
            if step.text == "1":
                arguments = f"{start}, {stop}, 1"
            if "," not in arguments:
                arguments = f"0, {arguments}"
            iterable = "tl.range"
            arguments += "".join(f", {f}={LOOP_FLAG_NAMES[f]}" for f in flags)
        self.lines.add(indent, f"for {variable} in {iterable}({arguments}):", line)
        self.runtime_loops += not static
        written = self.block(body, indent + 1)
        self.runtime_loops -= not static
        pairs = [
            (name, self.materialized(y, arg.type)) for name, y, arg in zip(carried, body.yields, args, strict=True)
        ]
        before = len(self.lines.rows)
        self.assign_all(pairs, indent + 1, line)
        if not written and len(self.lines.rows) == before:
            self.lines.add(indent + 1, "pass", line)
        for name, result in zip(carried, op.results, strict=True):
            self.names[result.id] = name
            self.holder[name] = result

    def if_statement(self, op: ir.Op, indent: int) -> None:
        line, end = op.span.line + 1, self.plan.end[id(op)]
        labels = zip(op.results, op.attrs["names"], strict=True)
        before = dict(self.holder)
        names = [self.bind_result(result, end, base=label) for result, label in labels]
        # Inside the branches a name still holds its value from before the `if`; the results take over after.
        for name in names:
            if name in before:
                self.holder[name] = before[name]
            else:
                del self.holder[name]
        self.lines.add(indent, f"if {self.text(op.operands[0])}:", line)
        for index, region in enumerate(op.regions):
            header = len(self.lines.rows)
            if index == 1:
                self.lines.add(indent, "else:", line)
            self.aim_yields(region, names)
            self.block(region, indent + 1)
            yields = zip(names, region.yields, op.results, strict=True)
            self.assign_all([(name, self.materialized(y, r.type)) for name, y, r in yields], indent + 1, line)
            if len(self.lines.rows) == header + index:  # the branch does nothing
                if index == 1:
                    self.lines.rows.pop()  # no `else:` at all
                else:
                    self.lines.add(indent + 1, "pass", line)
        for name, result in zip(names, op.results, strict=True):
            self.holder[name] = result

    # ---- expressions ----------------------------------------------------------------------------
    def shape(self, op: ir.Op) -> str:
        sources = op.attrs.get("shape_exprs") or [None] * len(op.attrs["shape"])
        pairs = zip(sources, op.attrs["shape"], strict=True)
        dims = [without_parens(str(constant_source(s))) if s else str(d.value) for s, d in pairs]
        return tuple_of(dims)

    def expression(self, op: ir.Op) -> Expr:
        operands = [self.text(v) for v in self.plan.used_operands(op)]
        lower = LOWERINGS.get(op.kind)
        if lower is None:
            raise CodegenError(f"code generation does not support `{op.kind}` yet", op.span)
        return lower(self, op, operands)

    def math(self, fn: str, operands: list[Expr], op: ir.Op) -> Expr:
        dtype = op.result.type.dtype
        if fn in WIDENED and dtype.bits < 32:
            # Triton's math functions take f32/f64: compute in f32 and round back, as the IR's type says.
            wide = [method(x, "to", "tl.float32") for x in operands]
            return method(self.math_call(fn, wide), "to", triton_dtype(dtype))
        return self.math_call(fn, operands)

    @staticmethod
    def math_call(fn: str, operands: list[Expr]) -> Expr:
        return MATH[fn](operands)

    def cast(self, op: ir.Op, operand: Expr) -> Expr:
        target = op.attrs["dtype"]
        if target.name == "bool":
            return binary(operand, "!=", atom("0"))
        source = self.plan.resolve(op.operands[0])
        if source.op is not None and source.op.kind == "const":
            return call("tl.cast", operand, triton_dtype(target))
        return method(operand, "to", triton_dtype(target))

    def reduce(self, op: ir.Op, operand: Expr) -> Expr:
        """Several axes (`sum(x, axis=(0, 1))`) are one call per axis, the last axis first, since Triton's
        reductions take one axis (or all): `tl.sum(tl.sum(x, axis=1), axis=0)`."""
        fn, keep = op.attrs["fn"], op.attrs["keep_dims"]
        source = self.plan.resolve(op.operands[0]).type.dtype
        target = op.result.type.dtype
        result = operand
        for axis in reversed(ir.reduced_axes(op)):
            keywords = {"axis": str(axis)}
            if keep:
                keywords["keep_dims"] = "True"
            if fn == "sum" and target != source:
                keywords["dtype"] = triton_dtype(target)
            result = call(REDUCTIONS[fn], result, **keywords)
        if fn in ("max", "min") and source.bits < 32:
            result = method(result, "to", triton_dtype(target))  # Triton widens narrow inputs first
        return result

    def scan(self, op: ir.Op, operand: Expr) -> Expr:
        """cumsum and cumprod through Triton's functions, which scan integers narrower than 32 bits in int32 (bool
        and u8 in uint32: `dtype=tl.int32` says what the IR's i32 means) and floats in their own dtype (so f16
        and bf16 are scanned in f32 here and rounded back, as the math functions are); cummax and cummin through
        tl.associative_scan with a combine function of the module (SCAN_COMBINES), in the operand's dtype."""
        fn, axis, reverse = op.attrs["fn"], op.attrs["axis"], op.attrs["reverse"]
        source = self.plan.resolve(op.operands[0]).type.dtype
        target = op.result.type.dtype
        flag = {"reverse": "True"} if reverse else {}
        if fn in SCAN_COMBINES:
            return call(SCANS[fn], operand, str(axis), SCAN_COMBINES[fn][0], **flag)
        if source.is_float and source.bits < 32:
            wide = call(SCANS[fn], method(operand, "to", "tl.float32"), axis=str(axis), **flag)
            return method(wide, "to", triton_dtype(target))
        keywords = {"axis": str(axis), **flag}
        if target != source:
            keywords["dtype"] = triton_dtype(target)
        return call(SCANS[fn], operand, **keywords)

    def dot(self, op: ir.Op, operands: list[Expr]) -> Expr:
        a_type = self.plan.resolve(op.operands[0]).type
        keywords: dict[str, str] = {}
        if a_type.dtype.name == "f32":
            keywords["input_precision"] = self.precision(op)
        out_dtype = op.attrs["out_dtype"]
        default = "i32" if a_type.dtype.is_integer else "f32"
        # Said with an accumulator too: Triton before 3.7 takes f32 for a missing out_dtype and refuses an f16 acc
        if out_dtype.name != default:
            keywords["out_dtype"] = triton_dtype(out_dtype)
        return call("tl.dot", *operands, **keywords)

    def precision(self, op: ir.Op) -> str:
        """A literal precision as a string, a string tile constant by its constexpr name. Where the choice may be
        one the CPU interpreter refuses (bf16x3, bf16x6), the interpreter gets "ieee": it computes every
        precision in fp32 anyway, so the result is the same."""
        name = op.attrs.get("precision_constant")
        if name is None:
            text, choices = f'"{op.attrs["input_precision"]}"', [op.attrs["input_precision"]]
        else:
            constant = self.kernel.constants[name]
            text, choices = name, [constant.value, *constant.tune]
        if any(choice in INTERPRETER_REFUSES for choice in choices):
            return f'("ieee" if {INTERPRETED} else {text})'
        return text

    def pointer(self, access: ir.MemoryAccess) -> Expr:
        tensor = access.tensor.name
        pointer = atom(tensor)
        strides = strides_of(self.kernel, self.kernel.tensor(tensor))
        for index, stride in zip(access.indices, strides, strict=True):
            offset = self.text(index) if stride is None else binary(self.text(index), "*", atom(stride))
            pointer = binary(pointer, "+", offset)
        return pointer

    def compare_and_swap(self, op: ir.Op, indent: int) -> Expr:
        """tl.atomic_cas neither broadcasts nor converts its cmp and value (the MLIR verifier wants the pointer's
        shape and element type): the pointers get a name of their own (CAS_POINTERS), and cmp and the value are
        converted to the tensor's dtype and broadcast to the pointers' shape."""
        access = ir.memory_access(op)
        self.lines.add(indent, f"{CAS_POINTERS} = {self.pointer(access)}", op.span.line + 1)
        dtype = triton_dtype(op.result.type.dtype)
        operands = []
        for value in (access.compare, access.value):
            converted = call("tl.cast", self.text(value), dtype)
            if isinstance(op.result.type, TileT):
                converted = call("tl.broadcast_to", converted, f"{CAS_POINTERS}.shape")
            operands.append(converted)
        return call("tl.atomic_cas", atom(CAS_POINTERS), *operands)

    def memory(self, op: ir.Op) -> Expr:
        access = ir.memory_access(op)
        tensor = access.tensor.name
        pointer = self.pointer(access)
        keywords: dict[str, Expr] = {}
        if access.mask is not None:
            keywords["mask"] = self.text(access.mask)
            if access.other is not None:
                keywords["other"] = self.text(access.other)
        if op.kind == "load":
            pointer_form = call("tl.load", pointer, **keywords)
        else:
            pointer_form = call(f"tl.{op.kind}", pointer, self.text(access.value), **keywords)
        block = self.tma.accesses.get(id(op))
        if block is None:
            return pointer_form
        texts = ["0" if s is None else str(self.text(s)) for s in block.starts]
        if block.folded:  # leading axes folded into the first run: one row index over them (codegen/tma.py)
            dims = self.tma_dims(tensor)
            row = texts[0]
            for axis in range(1, block.folded + 1):
                row = f"{row if row.isidentifier() or row.isdigit() else f'({row})'} * {dims[axis]} + {texts[axis]}"
            texts = [row, *texts[block.folded + 1 :]]
        starts = "[" + ", ".join(texts) + "]"
        shape = tuple_of([without_parens(str(constant_source(n))) for n in block.shape])
        if op.kind == "load":
            box = call(f"{block.descriptor}.load", starts)
            box_form = method(box, "reshape", shape) if block.squeeze else box
        else:
            value = self.text(access.value)
            if block.squeeze:
                extents = tuple_of([without_parens(str(constant_source(n))) for n in self.tma_block(block)])
                value = method(value, "reshape", extents)
            box_form = call(f"{block.descriptor}.store", starts, value)
        # both forms: the constexpr flag keeps one at compile time (the launcher sets it, see codegen/tma.py)
        return Expr(f"({box_form} if {FLAG} else {pointer_form})", 16)

    def tma_block(self, block) -> list[str]:
        return next(d.block[d.folded :] for d in self.tma.descriptors if d.name == block.descriptor)

    def tma_dims(self, tensor: str) -> list[str]:
        shape = next(p.type.shape for p in self.kernel.params if p.name == tensor)
        return [str(dim.label) if dim.symbol is None and dim.label else str(dim) for dim in shape]

    def tma_descriptors(self) -> Lines:
        """One descriptor per tensor and box, made once at the top of the kernel (None without TMA)."""
        lines = Lines()
        params = {p.name: p for p in self.kernel.params}
        for d in self.tma.descriptors:
            dims = self.tma_dims(d.tensor)
            strides = [stride or "1" for stride in strides_of(self.kernel, params[d.tensor])]
            block = [without_parens(str(constant_source(n))) for n in d.block]
            if d.folded:  # rows over the folded leading axes (contiguous: the launcher checks)
                dims = [" * ".join(f"({x})" if " " in x else x for x in dims[: d.folded + 1]), *dims[d.folded + 1 :]]
                strides, block = strides[d.folded :], block[d.folded :]
            made = (
                f"tl.make_tensor_descriptor({d.tensor}, shape=[{', '.join(dims)}], strides=[{', '.join(strides)}], "
                f"block_shape=[{', '.join(block)}])"
            )
            lines.add(1, f"{d.name} = {made} if {FLAG} else None")
        return lines


# ---- the lowering of each IR op kind (argus.dsl.ops.IR_OPS) --------------------------------------------
# LOWERINGS: ops that become a Triton expression, (emitter, op, operand texts) -> Expr; STATEMENTS: ops that
# become statements of their own (BodyEmitter.block); NOT_LOWERED: ops deliberately left out of the body, and why.


@lowering("const")
def lower_const(emitter: BodyEmitter, op: ir.Op, operands: list[Expr]) -> Expr:
    return constant_source(op.attrs["expr"]) if op.attrs.get("expr") else literal(op.attrs["value"])


@lowering("program_id", "num_programs")
def lower_program(emitter: BodyEmitter, op: ir.Op, operands: list[Expr]) -> Expr:
    return call(f"tl.{op.kind}", str(op.attrs["axis"]))


@lowering("arange")
def lower_arange(emitter: BodyEmitter, op: ir.Op, operands: list[Expr]) -> Expr:
    n = op.attrs.get("n_expr")
    return call("tl.arange", "0", without_parens(str(constant_source(n))) if n else str(op.attrs["n"]))


@lowering("zeros")
def lower_zeros(emitter: BodyEmitter, op: ir.Op, operands: list[Expr]) -> Expr:
    return call("tl.zeros", emitter.shape(op), dtype=triton_dtype(op.attrs["dtype"]))


@lowering("full")
def lower_full(emitter: BodyEmitter, op: ir.Op, operands: list[Expr]) -> Expr:
    return call("tl.full", emitter.shape(op), operands[0], triton_dtype(op.attrs["dtype"]))


@lowering("binary", "compare")
def lower_binary(emitter: BodyEmitter, op: ir.Op, operands: list[Expr]) -> Expr:
    if op.attrs["op"] == "**":
        return power(emitter, op, operands)  # Triton has no `**` on tensors: argus.codegen.math_lowering
    return binary(operands[0], op.attrs["op"], operands[1])


@lowering("unary")
def lower_unary(emitter: BodyEmitter, op: ir.Op, operands: list[Expr]) -> Expr:
    return unary(op.attrs["op"], operands[0])


@lowering("math")
def lower_math(emitter: BodyEmitter, op: ir.Op, operands: list[Expr]) -> Expr:
    return emitter.math(op.attrs["fn"], operands, op)


@lowering("where")
def lower_where(emitter: BodyEmitter, op: ir.Op, operands: list[Expr]) -> Expr:
    return call("tl.where", *operands)


@lowering("cast")
def lower_cast(emitter: BodyEmitter, op: ir.Op, operands: list[Expr]) -> Expr:
    return emitter.cast(op, operands[0])


@lowering("expand_dims")
def lower_expand_dims(emitter: BodyEmitter, op: ir.Op, operands: list[Expr]) -> Expr:
    rank = len(op.result.type.shape)
    index = ", ".join("None" if axis in op.attrs["axes"] else ":" for axis in range(rank))
    return subscript(operands[0], index)


@lowering("reshape", "broadcast_to")
def lower_reshape(emitter: BodyEmitter, op: ir.Op, operands: list[Expr]) -> Expr:
    return call(f"tl.{op.kind}", operands[0], emitter.shape(op))


@lowering("trans")
def lower_trans(emitter: BodyEmitter, op: ir.Op, operands: list[Expr]) -> Expr:
    return call("tl.trans", operands[0])


@lowering("reduce")
def lower_reduce(emitter: BodyEmitter, op: ir.Op, operands: list[Expr]) -> Expr:
    return emitter.reduce(op, operands[0])


@lowering("scan")
def lower_scan(emitter: BodyEmitter, op: ir.Op, operands: list[Expr]) -> Expr:
    return emitter.scan(op, operands[0])


@lowering("cdiv")
def lower_cdiv(emitter: BodyEmitter, op: ir.Op, operands: list[Expr]) -> Expr:
    return call("tl.cdiv", *operands)


@lowering("dot")
def lower_dot(emitter: BodyEmitter, op: ir.Op, operands: list[Expr]) -> Expr:
    return emitter.dot(op, operands)


@lowering("hint")
def lower_hint(emitter: BodyEmitter, op: ir.Op, operands: list[Expr]) -> Expr:
    return call(HINTS[op.attrs["fn"]], operands[0], str(op.attrs["n"]))


@lowering("load")
def lower_load(emitter: BodyEmitter, op: ir.Op, operands: list[Expr]) -> Expr:
    return emitter.memory(op)


def lower_side_effect(emitter: BodyEmitter, op: ir.Op, indent: int) -> None:
    """A store or an atomic; atomic_xchg's and atomic_cas's old values get a name where something reads them."""
    text = str(emitter.compare_and_swap(op, indent) if op.kind == "atomic_cas" else emitter.memory(op))
    if op.results and op.result.id in emitter.plan.last_use:
        text = f"{emitter.bind_result(op.result, emitter.plan.position[id(op)])} = {text}"
    emitter.lines.add(indent, text, op.span.line + 1)


STATEMENTS: dict[str, Callable[[BodyEmitter, ir.Op, int], None]] = {
    **dict.fromkeys(SIDE_EFFECTS, lower_side_effect),
    "for": BodyEmitter.for_loop,
    "if": BodyEmitter.if_statement,
}
NOT_LOWERED = {
    "tag": "tags exist for the verifier only; a tagged value is its operand (plan.py)",
    **dict.fromkeys(PROOF_ONLY, "proved statically by the verifier; nothing to run"),
    **dict.fromkeys(DATA_FACTS, "a data fact of `requires`: the launcher checks it (codegen/host.py)"),
}


def kernel_parameters(kernel: ir.KernelIR) -> list[str]:
    """The @triton.jit function's parameters: Argus parameters in order, size symbols, strides, constants."""
    names = [p.name for p in kernel.params]
    names += list(kernel.sizes)
    for param in kernel.params:
        if isinstance(param.type, TensorT):
            names += [stride for stride in strides_of(kernel, param) if stride is not None]
    names += [f"{name}: tl.constexpr" for name in kernel.constants]
    if "tma" in kernel.policy:
        names.append(f"{FLAG}: tl.constexpr = 0")
    names += [f"{LOOP_FLAG_NAMES[f]}: tl.constexpr = 0" for f in LOOP_FLAGS if f in kernel.policy]
    return names
