"""What analysis, hover and completion know of the language's names: the built-ins (declared once, in
argus.dsl.ops), dtypes, constants, dot input precisions and policy settings."""

from __future__ import annotations

from argus.dsl.ops import BUILTINS, FLOAT_MATH, METHODS, REDUCTIONS, Builtin
from argus.dsl.types import DTYPES as DTYPE_TABLE

__all__ = ["BUILTINS", "FLOAT_MATH", "METHODS", "REDUCTIONS", "Builtin"]


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
    "epilogue_warps": "4: a persistent GEMM's epilogue runs in 4 warps of its own, beside the MMAs of the next "
    "tile, through Gluon on Hopper (docs/codegen.md); 0: after the K loop, in the same warps",
}
