"""Host-side Python for one kernel: its grid and `requires` for a choice of constants, and its work counts.

Both are computed from launch values (sizes, scalar parameters, tile constants), written as plain Python
expressions over those names.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from argus.codegen.body import Lines
from argus.codegen.errors import CodegenError
from argus.codegen.expr import Expr, atom, binary, call, literal, tuple_of, unary
from argus.codegen.plan import DATA_FACTS, Plan
from argus.dsl import ir
from argus.dsl.atomics import WRITES
from argus.dsl.ops import FLOAT_MATH, ROUNDING
from argus.dsl.types import ScalarT, TensorT, TileT

PYTHON_MATH = {"maximum": "max", "minimum": "min", "abs": "abs"}
FLOAT_ARITHMETIC = {"+", "-", "*", "/", "//", "%"}


def launch_arguments(kernel: ir.KernelIR) -> list[str]:
    scalars = [p.name for p in kernel.params if isinstance(p.type, ScalarT)]
    return [*kernel.sizes, *scalars, *kernel.constants]


def fact_tensors(kernel: ir.KernelIR) -> list[str]:
    """Tensors that data facts in `requires` read (`partition(offsets, M)`, `in_range(target, 0, V)`): the
    launcher checks their contents."""
    names: list[str] = []
    for op in kernel.launch.ops:
        if op.kind in DATA_FACTS and op.operands[0].name not in names:
            names.append(op.operands[0].name)
    return names


class HostExpressions:
    """Launch values as Python expressions over sizes, scalar parameters and constants."""

    def __init__(self, kernel: ir.KernelIR, shown: bool = False):
        self.shown = shown  # the text a message shows, as the Argus source writes it, rather than Python to run
        self.names = {v.id: name for name, v in kernel.sizes.items()}
        self.names.update({p.value.id: p.name for p in kernel.params if isinstance(p.type, ScalarT)})
        self.tensors = {p.value.id: p.name for p in kernel.params if isinstance(p.type, TensorT)}

    def of(self, value: ir.Value) -> Expr:
        if value.id in self.names:
            return atom(self.names[value.id])
        op = value.op
        if op is None:
            raise CodegenError(f"`{value.name or value}` is not a launch value")
        rule = LAUNCH.get(op.kind)
        if rule is None:
            self.operands(op)  # an operand that is no launch value is what to report first
            raise CodegenError(f"`{op.kind}` cannot be computed at launch", op.span)
        return rule(self, value, op)

    def operands(self, op: ir.Op) -> list[Expr]:
        return [self.of(v) for v in op.operands]


# ---- launch values: the Python form of each IR op kind (argus.dsl.ops.IR_OPS) ------------------------------
# LAUNCH: (host, value, op) -> Expr; NOT_AT_LAUNCH: kinds a launch value is never computed by, and why.
LAUNCH: dict[str, Callable[[HostExpressions, ir.Value, ir.Op], Expr]] = {}


def launch_rule(*kinds: str):
    def register(rule):
        for kind in kinds:
            assert kind not in LAUNCH, f"two launch rules for {kind}"
            LAUNCH[kind] = rule
        return rule

    return register


@launch_rule(*DATA_FACTS)
def launch_data_fact(host: HostExpressions, value: ir.Value, op: ir.Op) -> Expr:
    """A data fact: checked when the launcher is given the tensor (runtime.py's `_partition`, ...)."""
    bounds = [host.of(v) for v in op.operands[1:]]
    ignore = {"ignore": bounds.pop()} if op.kind == "in_range" and len(bounds) == 3 else {}
    return call(f"_{op.kind}", atom(host.tensors[op.operands[0].id]), *bounds, **ignore)


@launch_rule("const")
def launch_const(host: HostExpressions, value: ir.Value, op: ir.Op) -> Expr:
    if op.attrs.get("expr"):
        return Expr(re.sub(r"\bcdiv\(", "_cdiv(", op.attrs["expr"]), 14)
    return literal(op.attrs["value"])


@launch_rule("binary", "compare")
def launch_binary(host: HostExpressions, value: ir.Value, op: ir.Op) -> Expr:
    operands = host.operands(op)
    operator = op.attrs["op"]
    if isinstance(value.type, ScalarT) and value.type.dtype.name == "bool" and operator in ("&", "|"):
        operator = "and" if operator == "&" else "or"
    if host.shown:
        return binary(operands[0], operator, operands[1])
    if operator == "**" and value.type.dtype.is_float:
        return call("math.pow", *operands)  # a float power as torch.pow: Python's ** makes complex numbers
    return host_binary(operands[0], operator, operands[1])


def host_binary(left: Expr, operator: str, right: Expr) -> Expr:
    """A binary operation in launcher code: `//` and `%` go through the runtime's _idiv and _imod, which divide
    integers as the kernel does (truncating), not as Python does (flooring)."""
    if operator in HOST_DIVISIONS:
        return call(HOST_DIVISIONS[operator], left, right)
    return binary(left, operator, right)


HOST_DIVISIONS = {"//": "_idiv", "%": "_imod"}


@launch_rule("unary")
def launch_unary(host: HostExpressions, value: ir.Value, op: ir.Op) -> Expr:
    operands = host.operands(op)
    operator = op.attrs["op"]
    if operator == "~" and value.type.dtype.name == "bool":
        operator = "not"
    return unary(operator, operands[0])


@launch_rule("cdiv")
def launch_cdiv(host: HostExpressions, value: ir.Value, op: ir.Op) -> Expr:
    return call("_cdiv", *host.operands(op))


@launch_rule("cast")
def launch_cast(host: HostExpressions, value: ir.Value, op: ir.Op) -> Expr:
    operands = host.operands(op)
    target = op.attrs["dtype"]
    convert = "bool" if target.name == "bool" else "float" if target.is_float else "int"
    return call(convert, operands[0])


@launch_rule("math")
def launch_math(host: HostExpressions, value: ir.Value, op: ir.Op) -> Expr:
    operands = host.operands(op)
    return LAUNCH_MATH[op.attrs["fn"]](operands)


@launch_rule("where")
def launch_where(host: HostExpressions, value: ir.Value, op: ir.Op) -> Expr:
    operands = host.operands(op)
    return Expr(f"({operands[1]} if {operands[0]} else {operands[2]})", 15)


def python_function(name: str) -> Callable[[list[Expr]], Expr]:
    return lambda operands: call(name, *operands)


def python_rsqrt(operands: list[Expr]) -> Expr:
    return binary(atom("1"), "/", call("math.sqrt", *operands))


def python_sigmoid(operands: list[Expr]) -> Expr:
    return binary(atom("1"), "/", binary(atom("1"), "+", call("math.exp", unary("-", operands[0]))))


def python_rounding(name: str) -> Callable[[list[Expr]], Expr]:
    """floor, ceil, trunc of a float stay floats (Python's return ints); round is Python's, halves to even."""
    python = "round" if name == "round" else f"math.{name}"
    return lambda operands: call("float", call(python, *operands))


def python_sign(operands: list[Expr]) -> Expr:
    x = operands[0]
    return binary(binary(x, ">", atom("0")), "-", binary(x, "<", atom("0")))  # True - False is 1


# The Python form of each math built-in (by its `fn`) in a launch value; Python's math has no rsqrt or sigmoid.
LAUNCH_MATH: dict[str, Callable[[list[Expr]], Expr]] = {
    **{name: python_function(f"math.{name}") for name in sorted(FLOAT_MATH - {"rsqrt", "sigmoid"})},
    "rsqrt": python_rsqrt,
    "sigmoid": python_sigmoid,
    **{name: python_function(python) for name, python in PYTHON_MATH.items()},
    **{name: python_rounding(name) for name in sorted(ROUNDING)},
    "sign": python_sign,
}
NOT_AT_LAUNCH = {
    **dict.fromkeys(("program_id", "num_programs"), "a program's value: the launch is before any program runs"),
    **dict.fromkeys(
        ("arange", "zeros", "full", "expand_dims", "reshape", "broadcast_to", "trans", "reduce", "scan", "dot"),
        "a tile: launch values are scalars",
    ),
    **dict.fromkeys(("load", *WRITES), "memory: the launcher reads no tensor but through a data fact"),
    **dict.fromkeys(
        ("hint", "tag", "assert_tag", "tag_read", "assert", "invariant"), "a kernel-body statement or claim"
    ),
    **dict.fromkeys(("for", "if"), "control flow: launch values are straight-line expressions"),
}


def launch_function(kernel: ir.KernelIR, function: str) -> Lines:
    """`def _NAME_launch(*, sizes, scalars, constants) -> (grid, [(requirement text, holds), ...])`."""
    host, shown = HostExpressions(kernel), HostExpressions(kernel, shown=True)
    lines = Lines()
    arguments = launch_arguments(kernel) + [f"{name}=None" for name in fact_tensors(kernel)]
    lines.add(0, f"def {function}(*, {', '.join(arguments)}):", kernel.span.line + 1)
    lines.add(1, f'"""Grid and requirements of `{kernel.name}` for one choice of sizes and constants."""')
    grid = [str(host.of(v)) for v in kernel.grid]
    lines.add(1, f"grid = {tuple_of(grid)}", kernel.grid[0].op.span.line + 1 if kernel.grid[0].op else None)
    lines.add(1, "requires = [")
    for value, span in kernel.requires:
        text = str(host.of(value))
        # as the Argus source writes it
        source = re.sub(r"\b_(cdiv|partition|in_range|permutation)\(", r"\1(", str(shown.of(value)))
        lines.add(2, f"({source!r}, bool({text})),", span.line + 1)
    lines.add(1, "]")
    lines.add(1, "return grid, requires")
    return lines


# ---- counts ---------------------------------------------------------------------------------------


Poly = dict[tuple[str, ...], int]  # product of tile-constant names -> coefficient


def poly_text(poly: Poly) -> Expr:
    """A sum of products of tile constants, so counts follow a launch's overridden constants."""
    terms = []
    for names, coefficient in sorted(poly.items()):
        if coefficient:
            factors = ([str(coefficient)] if coefficient != 1 or not names else []) + list(names)
            terms.append(" * ".join(factors))
    if not terms:
        return literal(0)
    return Expr(" + ".join(terms), 9 if len(terms) > 1 else 10)


def add_poly(total: Poly, part: Poly, scale: int = 1) -> None:
    for names, coefficient in part.items():
        total[names] = total.get(names, 0) + coefficient * scale


class TileSizes:
    """Element counts of tiles as products of tile constants (a dimension written as `BM` counts as BM)."""

    def __init__(self, kernel: ir.KernelIR):
        self.constants = kernel.constants

    def elements(self, value: ir.Value) -> Poly:
        names: list[str] = []
        coefficient = 1
        for dim in value.type.shape if isinstance(value.type, TileT) else ():
            if dim.label in self.constants and self.constants[dim.label].value == dim.value:
                names.append(dim.label)
            else:
                coefficient *= dim.value
        return {tuple(sorted(names)): coefficient}

    def dim(self, value: ir.Value, axis: int) -> Poly:
        dim = value.type.shape[axis]
        if dim.label in self.constants and self.constants[dim.label].value == dim.value:
            return {(dim.label,): 1}
        return {(): dim.value}

    def op_flops(self, op: ir.Op, plan: Plan) -> Poly:
        """Floating-point operations of one execution of an op, over its whole tile."""
        if not op.results or not isinstance(op.result.type, ScalarT | TileT):
            return {}
        result = op.result
        is_float = result.type.dtype.is_float
        match op.kind:
            case "dot":
                a = plan.resolve(op.operands[0])
                return times(times(self.elements(result), self.dim(a, -1)), {(): 2})
            case "binary" if is_float and op.attrs["op"] in FLOAT_ARITHMETIC:
                return self.elements(result)
            case "unary" if is_float and op.attrs["op"] == "-":
                return self.elements(result)
            case "math" if is_float:
                return self.elements(result)
            case "reduce" if plan.resolve(op.operands[0]).type.dtype.is_float:
                return self.elements(plan.resolve(op.operands[0]))
        return {}


def times(a: Poly, b: Poly) -> Poly:
    product: Poly = {}
    for names_a, ca in a.items():
        for names_b, cb in b.items():
            key = tuple(sorted(names_a + names_b))
            product[key] = product.get(key, 0) + ca * cb
    return product


class CountsWriter:
    """Work per launch: per-program FLOPs times the grid, loops counted by their trip counts. A loop whose
    bounds are read from memory or depend on the program is counted program by program (reading the bounds
    from `inputs`), which needs the launch's input tensors."""

    def __init__(self, kernel: ir.KernelIR, plan: Plan):
        self.kernel, self.plan = kernel, plan
        self.host = HostExpressions(kernel)
        self.tiles = TileSizes(kernel)
        self.dynamic = False

    def block(self, block: ir.Block) -> Expr:
        static: Poly = {}
        terms: list[Expr] = []
        for op in block.ops:
            if id(op) not in self.plan.live:
                continue
            if op.kind == "for":
                body = self.block(op.regions[0])
                trips = call("_trips", *(self.bound(v) for v in op.operands[:3]))
                terms.append(binary(trips, "*", body))
            elif op.kind == "if":
                # Either branch may run: count the costlier one.
                terms.append(call("max", *(self.block(region) for region in op.regions)))
            else:
                add_poly(static, self.tiles.op_flops(op, self.plan))
        total = poly_text(static)
        for term in terms:
            total = term if total.text == "0" else binary(total, "+", term)
        return total

    def bound(self, value: ir.Value) -> Expr:
        try:
            return self.host.of(value)
        except CodegenError:
            self.dynamic = True
            return self.program_value(value)

    def program_value(self, value: ir.Value) -> Expr:
        """A loop bound that depends on the program or on memory, evaluated per program in Python."""
        value = self.plan.resolve(value)
        if value.id in self.host.names:
            return atom(self.host.names[value.id])
        op = value.op
        if op is None:
            raise CodegenError("a loop bound depends on an enclosing loop variable")
        if op.kind == "program_id":
            return atom(f"pid{op.attrs['axis']}")
        if op.kind == "load":
            access = ir.memory_access(op)
            if access.mask is not None or any(isinstance(i.type, TileT) for i in access.indices):
                raise CodegenError("a loop bound is a masked or tiled load")
            if getattr(access.tensor.type, "stored", None) is not None:
                raise CodegenError("a loop bound is read through a view of a tensor")
            index = ", ".join(str(self.program_value(i)) for i in access.indices)
            return call("int", atom(f'inputs["{access.tensor.name}"][{index}]'))
        operands = [self.program_value(v) for v in op.operands]
        match op.kind:
            case "const":
                return self.host.of(value)
            case "binary" | "compare":
                return host_binary(operands[0], op.attrs["op"], operands[1])
            case "unary":
                return unary(op.attrs["op"], operands[0])
            case "cdiv":
                return call("_cdiv", *operands)
            case "math" if op.attrs["fn"] in PYTHON_MATH:
                return call(PYTHON_MATH[op.attrs["fn"]], *operands)
        raise CodegenError(f"a loop bound computed by `{op.kind}`")


def counts_function(kernel: ir.KernelIR, plan: Plan, function: str, launch: str) -> Lines:
    """`def _NAME_counts(*, sizes, scalars=defaults, constants=declared, inputs=None) -> {"flops", "bytes"}`."""
    writer = CountsWriter(kernel, plan)
    try:
        per_program = writer.block(kernel.body)
        problem = None
    except CodegenError as error:
        per_program, problem = literal(0), str(error)
    scalars = [p for p in kernel.params if isinstance(p.type, ScalarT)]
    arguments = list(kernel.sizes)
    arguments += [f"{p.name}={p.default!r}" for p in scalars]
    arguments += [f"{name}={c.value!r}" for name, c in kernel.constants.items()]
    lines = Lines()
    lines.add(0, f"def {function}(*, {', '.join(arguments)}, inputs=None):")
    lines.add(1, f'"""Work of one `{kernel.name}` launch: dot and elementwise FLOPs over whole tiles, and the')
    lines.add(1, 'fewest bytes moved (each input read once, each output written once)."""')
    scope = ", ".join(f"{name}={name}" for name in launch_arguments(kernel))
    lines.add(1, f"grid = {launch}({scope})[0]")
    lines.add(1, f"moved = {bytes_moved(kernel)}")
    if problem is not None:
        lines.add(1, f"raise ValueError({f'cannot count the work of {kernel.name}: {problem}'!r})")
    elif writer.dynamic:
        lines.add(1, "if inputs is None:")
        message = f"{kernel.name}'s loop bounds are read from memory: pass inputs= (the launch's tensors)"
        lines.add(2, f"raise ValueError({message!r})")
        lines.add(1, "inputs = {k: v.cpu() if isinstance(v, torch.Tensor) else v for k, v in inputs.items()}")
        lines.add(1, "flops = 0")
        axes = ["pid0", "pid1", "pid2"][: len(kernel.grid)]
        for depth, axis in enumerate(axes):
            lines.add(1 + depth, f"for {axis} in range(grid[{depth}]):")
        lines.add(1 + len(axes), f"flops += {per_program}")
    else:
        lines.add(1, f"flops = math.prod(grid) * ({per_program})")
    lines.add(1, 'return {"flops": int(flops), "bytes": int(moved)}')
    return lines


def bytes_moved(kernel: ir.KernelIR) -> str:
    """Each tensor once, `numel * itemsize` (its stored shape: a view has the same elements); an in/out tensor
    twice, read and written."""
    terms = []
    for param in kernel.params:
        if not isinstance(param.type, TensorT):
            continue
        dims = []
        if param.is_inout:
            dims.append("2")
        for dim in param.type.stored_shape:
            if dim.symbol is None:
                dims.append(dim.label if dim.label in kernel.constants else str(dim.offset))
            elif dim.offset:
                dims.append(f"({dim.symbol} {'+' if dim.offset > 0 else '-'} {abs(dim.offset)})")
            else:
                dims.append(dim.symbol)
        itemsize = max(1, param.type.dtype.bits // 8)
        terms.append(" * ".join([*dims, str(itemsize)]))
    return " + ".join(terms) or "0"
