"""The one declaration of every built-in operation of the language, and of every op kind of the tile IR.

A built-in (`exp2`, `dot`, `load`, ...) is declared here once: its name, its category, its signature and doc
line (what hover and completion show), and the IR op kind a call of it lowers to. Every layer that gives an
op a meaning keeps its entry in a table of its own keyed by these names, and `tests/verify/test_op_table.py`
checks that each declared op has all of them and that no table names an op declared nowhere:

- typing (this package): `argus.dsl.calls.TYPE_RULES`, by built-in (`Builtin.type_rule`);
- verifier: `argus.verify.rules.RULES`, by IR kind; by built-in for the kinds in BY_FN, `argus.verify.padding.MATH`
  (what a math op's lanes hold), `argus.verify.padding.IDENTITY` (reductions), `argus.verify.claims.HINT_GOALS`,
  `argus.verify.scans.SCANS`;
- kernel body (Triton): `argus.codegen.body.LOWERINGS` and `STATEMENTS`, by IR kind; `argus.codegen.body.MATH`,
  `REDUCTIONS`, `HINTS`, `SCANS`, by built-in;
- launch values (Python for `requires` and the grid): `argus.codegen.host.LAUNCH`, `LAUNCH_MATH`;
- concrete evaluator (test code, numpy): `tests/verify/verify_concrete.py`'s `CONCRETE`; `FLOAT_MATH`, `REDUCE`,
  `HINTS`, `SCANS`.

Each of those tables says where an op is deliberately left out (an `UNSUPPORTED`, `NOT_LOWERED` or
`NOT_AT_LAUNCH` entry with the reason), never by absence. How to add a built-in: docs/architecture.md
("Adding a built-in").

Operators (`+`, `<`, `not`, ...) are not built-ins: they lower to the IR kinds `binary`, `compare` and
`unary`, whose `op` attribute the layers read from tables of their own (argus.dsl.evaluate.BINARY, ...).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

# IR op kinds whose op names the built-in it came from in its `fn` attribute; the layers keep one entry per
# built-in for these (math: `exp2`, reduce: `sum`, hint: `multiple_of`, scan: `cumsum`), beside the one for the kind.
BY_FN = ("math", "reduce", "hint", "scan")


@dataclass(frozen=True)
class Builtin:
    name: str
    ir: str  # the IR op kind a call lowers to (IR_OPS); `for` for a loop's iterable
    signature: str
    doc: str
    # program | creation | memory | math | transcendental (float only) | rounding (float; the identity on
    # integers) | reduction | scan | shape | verify | hint | loop
    kind: str

    @property
    def by_fn(self) -> bool:
        """Whether the IR op carries this built-in's name as its `fn` (one entry per built-in in each layer)."""
        return self.ir in BY_FN

    @property
    def type_rule(self) -> Callable:
        """The analyzer function that types a call of it (and emits its IR op)."""
        from argus.dsl.calls import TYPE_RULES

        return TYPE_RULES[self.name]


def _table(kind: str, entries: list[tuple[str, str, str, str]]) -> dict[str, Builtin]:
    return {name: Builtin(name, ir, signature, doc, kind) for name, ir, signature, doc in entries}


BUILTINS: dict[str, Builtin] = {
    **_table(
        "program",
        [
            ("program_id", "program_id", "program_id(axis) -> i32", "Index of this program along grid axis 0, 1 or 2."),
            (
                "num_programs",
                "num_programs",
                "num_programs(axis) -> i32",
                "Number of programs along grid axis 0, 1 or 2.",
            ),
        ],
    ),
    **_table(
        "creation",
        [
            ("arange", "arange", "arange(n) -> i32[n]", "The vector 0, 1, ..., n-1; n is a compile-time power of two."),
            (
                "zeros",
                "zeros",
                "zeros(shape, dtype=f32) -> dtype[shape]",
                "A tile of zeros; the shape is a tuple of constants.",
            ),
            ("full", "full", "full(shape, value, dtype) -> dtype[shape]", "A tile filled with one scalar value."),
        ],
    ),
    **_table(
        "memory",
        [
            (
                "load",
                "load",
                "load(T[i0, i1, ...], mask=None, other=None) -> T.dtype[tile]",
                "Read a tile of tensor T. Each index is a vector for one axis (the tile is their outer product) "
                "or tiles that broadcast together. Masked-off elements read `other`.",
            ),
            (
                "store",
                "store",
                "store(T[i0, i1, ...], value, mask=None)",
                "Write a tile into output tensor T (declared `out`). Masked-off elements are not written.",
            ),
            (
                "atomic_add",
                "atomic_add",
                "atomic_add(T[i0, i1, ...], value, mask=None)",
                "Atomically add a tile into output tensor T; several programs may add into the same element.",
            ),
        ],
    ),
    # atomics beyond atomic_add (argus.dsl.calls.atomics): max and min accumulate like atomic_add (the launcher
    # starts their outputs at the dtype's lowest or highest value); xchg and cas return the old values
    **_table(
        "memory",
        [
            (
                "atomic_max",
                "atomic_max",
                "atomic_max(T[i0, i1, ...], value, mask=None)",
                "Atomically keep the larger of T's element and the value (i32, i64, f32, f64); several programs may "
                "take the max into the same element. T starts at its dtype's lowest value (-inf for floats).",
            ),
            (
                "atomic_min",
                "atomic_min",
                "atomic_min(T[i0, i1, ...], value, mask=None)",
                "Atomically keep the smaller of T's element and the value (i32, i64, f32, f64); several programs may "
                "take the min into the same element. T starts at its dtype's highest value (inf for floats).",
            ),
            (
                "atomic_xchg",
                "atomic_xchg",
                "atomic_xchg(T[i0, i1, ...], value, mask=None) -> T.dtype[access]",
                "Atomically write the value into T and return what T held (i32, i64, f32, f64; T starts at 0). "
                "The result depends on the order of programs: each element is exchanged by one program.",
            ),
            (
                "atomic_cas",
                "atomic_cas",
                "atomic_cas(T[i0, i1, ...], cmp, value) -> T.dtype[access]",
                "Atomically write the value where T's element equals cmp, and return what T held (16, 32 or 64-bit "
                "dtypes; T starts at 0; no mask, as in Triton). Each element is compared and swapped by one program.",
            ),
        ],
    ),
    **_table(
        "math",
        [
            (
                "dot",
                "dot",
                'dot(a, b, acc=None, input_precision="ieee", out_dtype=f32) -> [M, N]',
                "Matrix product of a [M, K] and b [K, N] tiles (or batched [B, M, K] @ [B, K, N]), added to acc. "
                'M, N and K are at least 16. For f32 inputs, input_precision is "ieee", "tf32x3", "tf32", "bf16x3" '
                'or "bf16x6", written as a string or as a string tile constant (which a tune list can vary).',
            ),
        ],
    ),
    **_table(
        "transcendental",
        [
            ("exp", "math", "exp(x)", "e to the x, elementwise (floating point)."),
            ("exp2", "math", "exp2(x)", "2 to the x, elementwise (floating point); cheaper than exp on GPUs."),
            ("log", "math", "log(x)", "Natural logarithm, elementwise (floating point)."),
            ("log2", "math", "log2(x)", "Base-2 logarithm, elementwise (floating point)."),
            ("sqrt", "math", "sqrt(x)", "Square root, elementwise (floating point)."),
            ("rsqrt", "math", "rsqrt(x)", "1 / sqrt(x), elementwise (floating point)."),
            ("sigmoid", "math", "sigmoid(x)", "1 / (1 + exp(-x)), elementwise (floating point)."),
            ("tanh", "math", "tanh(x)", "Hyperbolic tangent, elementwise (floating point)."),
            ("erf", "math", "erf(x)", "The error function, elementwise (floating point); used by exact GELU."),
            ("sin", "math", "sin(x)", "Sine, elementwise (floating point)."),
            ("cos", "math", "cos(x)", "Cosine, elementwise (floating point)."),
        ],
    ),
    # ---- more elementwise math (issue 20 item 3): float functions, rounding, sign, pow ----
    **_table(
        "transcendental",
        [
            (
                "log1p",
                "math",
                "log1p(x)",
                "log(1 + x), elementwise (floating point); accurate for x near 0, where 1 + x rounds.",
            ),
            (
                "expm1",
                "math",
                "expm1(x)",
                "e to the x, minus 1, elementwise (floating point); accurate for x near 0.",
            ),
            ("log10", "math", "log10(x)", "Base-10 logarithm, elementwise (floating point)."),
            ("tan", "math", "tan(x)", "Tangent, elementwise (floating point)."),
            ("sinh", "math", "sinh(x)", "Hyperbolic sine, elementwise (floating point)."),
            ("cosh", "math", "cosh(x)", "Hyperbolic cosine, elementwise (floating point)."),
        ],
    ),
    **_table(
        "rounding",
        [
            ("floor", "math", "floor(x)", "The largest integer not above x, elementwise; an integer x as it is."),
            ("ceil", "math", "ceil(x)", "The smallest integer not below x, elementwise; an integer x as it is."),
            ("trunc", "math", "trunc(x)", "x rounded toward zero, elementwise; an integer x as it is."),
            (
                "round",
                "math",
                "round(x)",
                "x rounded to the nearest integer, halves to the even one (torch.round: 0.5 -> 0, 1.5 -> 2, "
                "2.5 -> 2), elementwise; an integer x as it is.",
            ),
        ],
    ),
    **_table(
        "math",
        [
            (
                "sign",
                "math",
                "sign(x)",
                "-1, 0 or 1 by the sign of x, elementwise, in x's dtype (torch.sign: sign(NaN) is 0).",
            ),
            (
                "pow",
                "binary",
                "pow(x, y)",
                "x ** y, elementwise with broadcasting (torch.pow): a constant integer y is exact for negative x "
                "too; a non-integer y gives NaN for negative x.",
            ),
        ],
    ),
    **_table(
        "math",
        [
            ("abs", "math", "abs(x)", "Absolute value, elementwise."),
            ("maximum", "math", "maximum(a, b)", "Elementwise maximum, with broadcasting."),
            ("minimum", "math", "minimum(a, b)", "Elementwise minimum, with broadcasting."),
            (
                "where",
                "where",
                "where(cond, a, b)",
                "Elementwise choice: a where cond is true, else b, with broadcasting.",
            ),
            ("cdiv", "cdiv", "cdiv(a, b) -> int", "Ceiling division of integers: (a + b - 1) // b."),
        ],
    ),
    **_table(
        "reduction",
        [
            ("sum", "reduce", "sum(x, axis, keep_dims=False)", "Sum along an axis, or several: axis=(0, 1)."),
            (
                "max",
                "reduce",
                "max(x, axis, keep_dims=False)",
                "Maximum along an axis, or several: axis=(0, 1) (for two values, use maximum).",
            ),
            (
                "min",
                "reduce",
                "min(x, axis, keep_dims=False)",
                "Minimum along an axis, or several: axis=(0, 1) (for two values, use minimum).",
            ),
            ("argmax", "reduce", "argmax(x, axis, keep_dims=False) -> i32", "Index of the maximum along an axis."),
            ("argmin", "reduce", "argmin(x, axis, keep_dims=False) -> i32", "Index of the minimum along an axis."),
        ],
    ),
    # scans along one axis (argus.dsl.calls.scans): the running reduction, values only
    **_table(
        "scan",
        [
            (
                "cumsum",
                "scan",
                "cumsum(x, axis, reverse=False)",
                "Running sum along an axis (torch.cumsum); reverse=True sums from the end. Integer tiles narrower "
                "than 32 bits (bool, i8, i16, u8) are summed in i32, as Triton does.",
            ),
            (
                "cumprod",
                "scan",
                "cumprod(x, axis, reverse=False)",
                "Running product along an axis (torch.cumprod); integers narrower than 32 bits in i32.",
            ),
            (
                "cummax",
                "scan",
                "cummax(x, axis, reverse=False)",
                "Running maximum along an axis: the values of torch.cummax (not its indices).",
            ),
            (
                "cummin",
                "scan",
                "cummin(x, axis, reverse=False)",
                "Running minimum along an axis: the values of torch.cummin (not its indices).",
            ),
        ],
    ),
    **_table(
        "shape",
        [
            ("cast", "cast", "cast(x, dtype)", "Convert to another dtype; the same as x.to(dtype)."),
            ("reshape", "reshape", "reshape(x, shape)", "The same elements in another shape of the same size."),
            ("broadcast_to", "broadcast_to", "broadcast_to(x, shape)", "Repeat size-1 axes to reach shape."),
            ("trans", "trans", "trans(x)", "Swap the two axes of a 2-D tile."),
        ],
    ),
    **_table(
        "verify",
        [
            (
                "tag",
                "tag",
                "tag(x, name=value, ...)",
                "Attach symbolic tags to a value (for example the pipeline stage it holds); they flow with it.",
            ),
            (
                "assert_tag",
                "assert_tag",
                "assert_tag(x, name=value, ...) or assert_tag(condition)",
                "State a relation over tags at a use site; the verifier proves it or gives a counterexample. "
                "In a condition, x.name reads tag `name` of x.",
            ),
            (
                "partition",
                "partition",
                "partition(T, n) -> bool",
                "In `requires` only: the 1-D integer tensor T holds the cut points of 0..n into consecutive ranges, "
                "T[0] == 0 <= T[1] <= ... <= T[last] == n (MoE expert offsets). The launcher checks it; the "
                "verifier assumes it.",
            ),
            (
                "in_range",
                "in_range",
                "in_range(T, lo, hi, ignore=None) -> bool",
                "In `requires` only: every element of the integer tensor T lies in lo <= T[...] < hi (gather "
                "indices, expert ids, class targets), or equals `ignore` where given (a cross entropy's "
                "ignore_index, -100). The launcher checks it; the verifier assumes it.",
            ),
            (
                "permutation",
                "permutation",
                "permutation(T, n) -> bool",
                "In `requires` only: each of 0..n-1 occurs exactly once in the 1-D integer tensor T and every other "
                "element is n or more, padding (fused MoE's sorted token ids). The launcher checks it; the "
                "verifier assumes it: rows stored through T from different lanes never collide.",
            ),
        ],
    ),
    **_table(
        "hint",
        [
            (
                "multiple_of",
                "hint",
                "multiple_of(x, n)",
                "Promise the compiler that each run of consecutive values of x (along its last axis) starts at a "
                "multiple of n, as Triton reads it: `multiple_of(pid * B + arange(B), B)`.",
            ),
            (
                "max_contiguous",
                "hint",
                "max_contiguous(x, n)",
                "Promise the compiler that x holds runs of n consecutive values.",
            ),
        ],
    ),
    **_table(
        "loop",
        [
            ("range", "for", "range([start,] stop[, step])", "A loop over a runtime range (scf.for in Triton)."),
            (
                "static_range",
                "for",
                "static_range([start,] stop[, step])",
                "A loop unrolled at compile time; constant bounds.",
            ),
        ],
    ),
}

METHODS: dict[str, Builtin] = {
    "to": Builtin("to", "cast", "x.to(dtype)", "Convert to another dtype.", "shape"),
}


@dataclass(frozen=True)
class IrOp:
    kind: str
    operands: str  # operands, then [attrs]
    doc: str


def _ir(entries: list[tuple[str, str, str]]) -> dict[str, IrOp]:
    return {kind: IrOp(kind, operands, doc) for kind, operands, doc in entries}


# Every op kind of the tile IR (argus.dsl.ir.Op.kind). Indices and masks of memory ops are already
# broadcast-compatible with the access tile.
IR_OPS: dict[str, IrOp] = _ir(
    [
        ("const", "[value, expr]", "A folded constant; expr is the tile-constant expression it came from."),
        ("program_id", "[axis]", "This program's index along a grid axis."),
        ("num_programs", "[axis]", "The number of programs along a grid axis."),
        ("arange", "[n, n_expr]", "0, 1, ..., n-1."),
        ("zeros", "[shape, dtype, shape_exprs]", "A tile of zeros."),
        ("full", "(value) [shape, dtype, shape_exprs]", "A tile of one scalar value."),
        ("binary", "(a, b) [op]", "An arithmetic, bitwise or boolean operator (+ - * / // % ** & | ^ << >>)."),
        ("unary", "(a) [op]", "A prefix operator (- + ~ not)."),
        ("compare", "(a, b) [op]", "A comparison (< <= > >= == !=)."),
        ("math", "(x...) [fn]", "An elementwise math built-in, named by fn."),
        ("where", "(c, a, b)", "Elementwise choice."),
        ("cast", "(x) [dtype]", "Conversion to another dtype."),
        ("expand_dims", "(x) [axes]", "Size-1 axes inserted (broadcasting, x[:, None], tensor access indices)."),
        ("reshape", "(x) [shape, shape_exprs]", "The same elements in another shape."),
        ("broadcast_to", "(x) [shape, shape_exprs]", "Size-1 axes repeated."),
        ("trans", "(x)", "The two axes of a 2-D tile swapped."),
        (
            "reduce",
            "(x) [fn, axis, keep_dims]",
            "A reduction built-in along an axis (an int) or several (a tuple of two or more, increasing), named by fn.",
        ),
        ("cdiv", "(a, b)", "Ceiling division of integer scalars."),
        ("dot", "(a, b[, acc]) [input_precision, precision_constant, out_dtype]", "A (batched) matrix product."),
        ("load", "(tensor, i0..ir-1[, mask][, other]) [tensor, rank, mask, other]", "A tile read from a tensor."),
        ("store", "(tensor, i0..ir-1, value[, mask]) [tensor, rank, mask]", "A tile written into a tensor."),
        ("atomic_add", "(tensor, i0..ir-1, value[, mask]) [tensor, rank, mask]", "A tile added atomically."),
        ("atomic_max", "(tensor, i0..ir-1, value[, mask]) [tensor, rank, mask]", "The larger kept, atomically."),
        ("atomic_min", "(tensor, i0..ir-1, value[, mask]) [tensor, rank, mask]", "The smaller kept, atomically."),
        (
            "atomic_xchg",
            "(tensor, i0..ir-1, value[, mask]) [tensor, rank, mask]",
            "A tile written atomically; the result is the old values.",
        ),
        (
            "atomic_cas",
            "(tensor, i0..ir-1, cmp, value) [tensor, rank]",
            "A tile written atomically where the old value equals cmp; the result is the old values.",
        ),
        ("scan", "(x) [fn, axis, reverse]", "A scan built-in (cumsum, ...) along an axis, named by fn."),
        ("hint", "(x) [fn, n]", "A compiler hint built-in, named by fn; the verifier proves it."),
        ("tag", "(x, v...) [names]", "Tags attached to a value."),
        ("assert_tag", "(x, v...) [names]", "A relation over tags stated at a use site."),
        ("tag_read", "(x) [name]", "x.name in an assertion: the value of one tag."),
        ("assert", "(cond)", "`assert cond`: proved by the verifier."),
        ("invariant", "(cond)", "A loop invariant: proved on entry and preserved by each iteration."),
        ("partition", "(tensor, n)", "A data fact of `requires`: tensor holds the cut points of 0..n."),
        ("in_range", "(tensor, lo, hi[, ignore])", "A data fact: every element lies in lo <= x < hi (or is ignore)."),
        ("permutation", "(tensor, n)", "A data fact of `requires`: each of 0..n-1 occurs once, the rest >= n."),
        ("for", "(start, stop, step, init...) [var, static, carried]", "A loop; region body(iv, carried...)."),
        ("if", "(cond) [names]", "A branch; regions then and else, each yielding the results."),
    ]
)

# Derived views, for the layers that dispatch on them.
FLOAT_MATH = frozenset(name for name, b in BUILTINS.items() if b.kind == "transcendental")  # need floating point
ROUNDING = frozenset(name for name, b in BUILTINS.items() if b.kind == "rounding")  # the identity on integers
REDUCTIONS = frozenset(name for name, b in BUILTINS.items() if b.ir == "reduce")
SCANS = frozenset(name for name, b in BUILTINS.items() if b.ir == "scan")
