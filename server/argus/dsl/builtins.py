"""The builtins of the language: signatures and documentation, one source for analysis, hover and completion."""

from __future__ import annotations

from dataclasses import dataclass

from argus.dsl.types import DTYPES as DTYPE_TABLE


@dataclass(frozen=True)
class Builtin:
    name: str
    signature: str
    doc: str
    kind: str  # program | creation | memory | math | reduction | shape | scalar | verify | hint | loop


def _table(kind: str, entries: list[tuple[str, str, str]]) -> dict[str, Builtin]:
    return {name: Builtin(name, signature, doc, kind) for name, signature, doc in entries}


BUILTINS: dict[str, Builtin] = {
    **_table(
        "program",
        [
            ("program_id", "program_id(axis) -> i32", "Index of this program along grid axis 0, 1 or 2."),
            ("num_programs", "num_programs(axis) -> i32", "Number of programs along grid axis 0, 1 or 2."),
        ],
    ),
    **_table(
        "creation",
        [
            ("arange", "arange(n) -> i32[n]", "The vector 0, 1, ..., n-1; n is a compile-time power of two."),
            ("zeros", "zeros(shape, dtype=f32) -> dtype[shape]", "A tile of zeros; the shape is a tuple of constants."),
            ("full", "full(shape, value, dtype) -> dtype[shape]", "A tile filled with one scalar value."),
        ],
    ),
    **_table(
        "memory",
        [
            (
                "load",
                "load(T[i0, i1, ...], mask=None, other=None) -> T.dtype[tile]",
                "Read a tile of tensor T. Each index is a vector for one axis (the tile is their outer product) "
                "or tiles that broadcast together. Masked-off elements read `other`.",
            ),
            (
                "store",
                "store(T[i0, i1, ...], value, mask=None)",
                "Write a tile into output tensor T (declared `out`). Masked-off elements are not written.",
            ),
            (
                "atomic_add",
                "atomic_add(T[i0, i1, ...], value, mask=None)",
                "Atomically add a tile into output tensor T; several programs may add into the same element.",
            ),
        ],
    ),
    **_table(
        "math",
        [
            (
                "dot",
                'dot(a, b, acc=None, input_precision="ieee", out_dtype=f32) -> [M, N]',
                "Matrix product of a [M, K] and b [K, N] tiles (or batched [B, M, K] @ [B, K, N]), added to acc. "
                'M, N and K are at least 16. For f32 inputs, input_precision is "ieee", "tf32x3", "tf32", "bf16x3" '
                'or "bf16x6", written as a string or as a string tile constant (which a tune list can vary).',
            ),
            ("exp", "exp(x)", "e to the x, elementwise (floating point)."),
            ("exp2", "exp2(x)", "2 to the x, elementwise (floating point); cheaper than exp on GPUs."),
            ("log", "log(x)", "Natural logarithm, elementwise (floating point)."),
            ("log2", "log2(x)", "Base-2 logarithm, elementwise (floating point)."),
            ("sqrt", "sqrt(x)", "Square root, elementwise (floating point)."),
            ("rsqrt", "rsqrt(x)", "1 / sqrt(x), elementwise (floating point)."),
            ("sigmoid", "sigmoid(x)", "1 / (1 + exp(-x)), elementwise (floating point)."),
            ("tanh", "tanh(x)", "Hyperbolic tangent, elementwise (floating point)."),
            ("erf", "erf(x)", "The error function, elementwise (floating point); used by exact GELU."),
            ("sin", "sin(x)", "Sine, elementwise (floating point)."),
            ("cos", "cos(x)", "Cosine, elementwise (floating point)."),
            ("abs", "abs(x)", "Absolute value, elementwise."),
            ("maximum", "maximum(a, b)", "Elementwise maximum, with broadcasting."),
            ("minimum", "minimum(a, b)", "Elementwise minimum, with broadcasting."),
            ("where", "where(cond, a, b)", "Elementwise choice: a where cond is true, else b, with broadcasting."),
            ("cdiv", "cdiv(a, b) -> int", "Ceiling division of integers: (a + b - 1) // b."),
        ],
    ),
    **_table(
        "reduction",
        [
            ("sum", "sum(x, axis, keep_dims=False)", "Sum along an axis."),
            ("max", "max(x, axis, keep_dims=False)", "Maximum along an axis (for two values, use maximum)."),
            ("min", "min(x, axis, keep_dims=False)", "Minimum along an axis (for two values, use minimum)."),
            ("argmax", "argmax(x, axis, keep_dims=False) -> i32", "Index of the maximum along an axis."),
            ("argmin", "argmin(x, axis, keep_dims=False) -> i32", "Index of the minimum along an axis."),
        ],
    ),
    **_table(
        "shape",
        [
            ("cast", "cast(x, dtype)", "Convert to another dtype; the same as x.to(dtype)."),
            ("reshape", "reshape(x, shape)", "The same elements in another shape of the same size."),
            ("broadcast_to", "broadcast_to(x, shape)", "Repeat size-1 axes to reach shape."),
            ("trans", "trans(x)", "Swap the two axes of a 2-D tile."),
        ],
    ),
    **_table(
        "verify",
        [
            (
                "tag",
                "tag(x, name=value, ...)",
                "Attach symbolic tags to a value (for example the pipeline stage it holds); they flow with it.",
            ),
            (
                "assert_tag",
                "assert_tag(x, name=value, ...) or assert_tag(condition)",
                "State a relation over tags at a use site; the verifier proves it or gives a counterexample. "
                "In a condition, x.name reads tag `name` of x.",
            ),
            (
                "partition",
                "partition(T, n) -> bool",
                "In `requires` only: the 1-D integer tensor T holds the cut points of 0..n into consecutive ranges, "
                "T[0] == 0 <= T[1] <= ... <= T[last] == n (MoE expert offsets). The launcher checks it; the "
                "verifier assumes it.",
            ),
            (
                "in_range",
                "in_range(T, lo, hi) -> bool",
                "In `requires` only: every element of the integer tensor T lies in lo <= T[...] < hi (gather "
                "indices, expert ids, class targets). The launcher checks it; the verifier assumes it.",
            ),
            (
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
                "multiple_of(x, n)",
                "Promise the compiler that each run of consecutive values of x (along its last axis) starts at a "
                "multiple of n, as Triton reads it: `multiple_of(pid * B + arange(B), B)`.",
            ),
            (
                "max_contiguous",
                "max_contiguous(x, n)",
                "Promise the compiler that x holds runs of n consecutive values.",
            ),
        ],
    ),
    **_table(
        "loop",
        [
            ("range", "range([start,] stop[, step])", "A loop over a runtime range (scf.for in Triton)."),
            (
                "static_range",
                "static_range([start,] stop[, step])",
                "A loop unrolled at compile time; constant bounds.",
            ),
        ],
    ),
}

METHODS: dict[str, Builtin] = {
    "to": Builtin("to", "x.to(dtype)", "Convert to another dtype.", "shape"),
}

DTYPES: dict[str, str] = {name: dtype.doc for name, dtype in DTYPE_TABLE.items()}

CONSTANTS: dict[str, str] = {
    "inf": "positive infinity (f32); write -inf for negative infinity",
    "nan": "not a number (f32)",
}

# dot's input_precision for f32 operands: what each does. Triton 3.6's tl.dot on NVIDIA accepts all five (its
# allowed_dot_input_precisions); its CPU interpreter accepts the first three and computes every one in fp32.
INPUT_PRECISIONS: dict[str, str] = {
    "ieee": "exact fp32 on the CUDA cores (FMA): no input rounding; the slowest",
    "tf32x3": "three tf32 tensor-core products of split inputs (big*big + big*small + small*big): about fp32 accuracy",
    "tf32": "one tf32 tensor-core product: inputs rounded to 10 mantissa bits; the fastest and the least accurate",
    "bf16x3": "three bf16 tensor-core products of split inputs: about 16 mantissa bits, between tf32 and fp32",
    "bf16x6": "six bf16 tensor-core products of inputs split in three: about fp32 accuracy",
}

# Policy settings (0 or 1) that become options of the outermost runtime `range` loops (Triton's tl.range).
LOOP_FLAGS = ("warp_specialize", "flatten")

POLICY_SETTINGS: dict[str, str] = {
    "num_warps": "warps per program: 1, 2, 4, 8, 16 or 32",
    "num_stages": "software pipelining depth of loops (1 or more)",
    "num_ctas": "programs per cluster on Hopper: 1, 2 or 4",
    "maxnreg": "register cap per thread (Triton's maxnreg)",
    "tma": "1: block loads and stores go through TMA descriptors where the tensors allow (Hopper); 0: pointers",
    "warp_specialize": "1: the outermost `range` loops ask Triton for automatic warp specialization "
    "(tl.range(..., warp_specialize=True)); 0: not",
    "flatten": "1: the outermost `range` loops ask Triton to flatten the loops nested in them into one pipelined "
    "loop (tl.range(..., flatten=True), for persistent kernels); 0: not",
}
