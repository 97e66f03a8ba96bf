"""The Triton form of the elementwise math Triton has no portable function for: log1p, expm1, log10, tan, sinh,
cosh, trunc, round, sign and powers (`x ** y`, `pow`).

Triton's libdevice (`tl.extra.cuda.libdevice.log1p`, ...) compiles for sm_90, but the CPU interpreter
(TRITON_INTERPRET=1, the gate's correct stage) cannot run it: every libdevice call fails there. So each of these
is written with the functions both paths have (`tl.log`, `tl.exp`, `tl.floor`, ...), as a small @triton.jit
helper the generated module defines once (`HELPERS`, written before the kernels by argus.codegen.module) and a
kernel calls like a built-in; Triton inlines it. How accurate each is, measured: docs/codegen.md.

- log1p: Goldberg's correction `log(u) * (x / (u - 1))`, u = 1 + x: the rounding of 1 + x cancels out.
- expm1: Kahan's `(u - 1) * (x / log(u))`, u = e^x: exact to a few ulps near 0, where e^x - 1 cancels, and
  insensitive to exp's own error there (GPU `tl.exp` is ex2.approx), since log(u) sees the u that exp made.
- sinh: through expm1 below |x| = 1, (e^x - e^-x) / 2 above, (e^(x/2) / 2) e^(x/2) where e^|x| overflows;
  cosh likewise.
- round: torch.round, halves to even: adding and removing 2**23 (2**52 in f64) rounds to the nearest integer
  with IEEE's own ties-to-even; from 2**23 on every float is an integer already.
- sign: torch.sign, `(x > 0) - (x < 0)` in x's dtype: NaN gives 0, as PyTorch's does.
- x ** n, n a constant integer with |n| <= MULTIPLIED_POWERS: multiplications (`v * v * v`, `1.0 / (v * v)`),
  exact in sign for a negative base, as torch.pow does it for 2, 3, -1 and -2.
- any other x ** y: exp2(y * log2(|x|)) in f64, then rounded to the result's dtype (in f32 the product would lose
  about |y log2 x| ulps); the sign of an odd integer power of a negative base, NaN for a negative base with a
  non-integer exponent, 1 for y == 0 or x == 1, as torch.pow.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from argus.codegen.dtypes import triton_dtype
from argus.codegen.expr import Expr, atom, binary, call, method
from argus.dsl import ir

if TYPE_CHECKING:
    from argus.codegen.body import BodyEmitter

MULTIPLIED_POWERS = 8  # x ** n by multiplications for a constant integer 1 <= |n| <= this

# name -> (the helpers it calls, its body): each becomes `@triton.jit\ndef name(x):` + body in the module.
HELPERS: dict[str, tuple[tuple[str, ...], str]] = {
    "_argus_log1p": (
        (),
        '''def _argus_log1p(x):
    """log(1 + x), accurate near 0: the rounding of u = 1 + x is undone by the factor x / (u - 1)."""
    u = x + 1.0
    d = u - 1.0
    y = tl.log(u) * (x / d)
    y = tl.where(d == u, tl.log(u), y)  # u huge or inf: the 1 is lost anyway
    return tl.where(d == 0.0, x, y)  # 1 + x rounds to 1: log1p(x) is x to within rounding''',
    ),
    "_argus_expm1": (
        (),
        '''def _argus_expm1(x):
    """e^x - 1, accurate near 0: (u - 1) * (x / log(u)) for u = e^x."""
    u = tl.exp(x)
    d = u - 1.0
    y = d * (x / tl.log(u))
    y = tl.where(d == u, u, y)  # u huge or inf
    y = tl.where(d == -1.0, d, y)  # u is 0: -1
    return tl.where(d == 0.0, x, y)  # e^x rounds to 1: expm1(x) is x to within rounding''',
    ),
    "_argus_tan": (
        (),
        """def _argus_tan(x):
    return tl.sin(x) / tl.cos(x)""",
    ),
    "_argus_sinh": (
        ("_argus_expm1",),
        '''def _argus_sinh(x):
    """(e^x - e^-x) / 2: through expm1 below |x| = 1 (no cancellation), (e^(x/2) / 2) e^(x/2) where e^|x|
    overflows and the result does not."""
    a = tl.abs(x)
    e = tl.exp(a)
    half = tl.exp(0.5 * a)
    m = _argus_expm1(a)
    r = tl.where(a < 1.0, 0.5 * (m + m / (m + 1.0)), 0.5 * e - 0.5 / e)
    r = tl.where(e + e == e, (0.5 * half) * half, r)
    return tl.where(x < 0, -r, r)''',
    ),
    "_argus_cosh": (
        (),
        '''def _argus_cosh(x):
    """(e^x + e^-x) / 2, and (e^(x/2) / 2) e^(x/2) where e^|x| overflows and the result does not."""
    a = tl.abs(x)
    e = tl.exp(a)
    half = tl.exp(0.5 * a)
    return tl.where(e + e == e, (0.5 * half) * half, 0.5 * e + 0.5 / e)''',
    ),
    "_argus_trunc": (
        (),
        """def _argus_trunc(x):
    return tl.where(x < 0, tl.ceil(x), tl.floor(x))""",
    ),
    "_argus_round": (
        (),
        '''def _argus_round(x):
    """torch.round, halves to even: |x| + 2**23 - 2**23 (2**52 in f64) rounds as IEEE addition does."""
    big = 4503599627370496.0 if x.dtype == tl.float64 else 8388608.0
    a = tl.abs(x)
    r = (a + big) - big
    r = tl.where(x < 0, -r, r)
    return tl.where(a < big, r, x)  # from 2**23 on (and inf, NaN) x is its own rounding''',
    ),
    "_argus_sign": (
        (),
        '''def _argus_sign(x):
    """torch.sign: -1, 0 or 1 in x's dtype; NaN gives 0."""
    return (x > 0).to(x.dtype) - (x < 0).to(x.dtype)''',
    ),
    "_argus_pow": (
        (),
        '''def _argus_pow(x, y):
    """torch.pow in f64 (the caller rounds): |x| ** y, the sign of an odd integer power of a negative x, NaN for a
    negative finite x and a non-integer y, 1 for y == 0, x == 1, and |x| == 1 with an infinite y."""
    x, y = tl.broadcast(tl.cast(x, tl.float64), tl.cast(y, tl.float64))  # one shape: no scalar condition splats
    a = tl.abs(x)
    r = tl.exp2(y * tl.log2(a))
    whole = tl.floor(y) == y
    odd = (y - 2.0 * tl.floor(0.5 * y)) == 1.0
    r = tl.where((x < 0) & odd, -r, r)
    r = tl.where((x < 0) & (a <= 1.7976931348623157e308) & ~whole, float("nan"), r)
    one = (y == 0) | (x == 1) | ((a == 1) & (tl.abs(y) > 1.7976931348623157e308))
    return tl.where(one, 1.0, r)''',
    ),
}


def helper(name: str) -> Callable[[list[Expr]], Expr]:
    return lambda operands: call(name, *operands)


def log10(operands: list[Expr]) -> Expr:
    return binary(call("tl.log", operands[0]), "*", atom("0.4342944819032518"))  # 1 / ln 10


# The Triton form of each math built-in above (by its `fn`), merged into argus.codegen.body.MATH.
MATH: dict[str, Callable[[list[Expr]], Expr]] = {
    "log1p": helper("_argus_log1p"),
    "expm1": helper("_argus_expm1"),
    "log10": log10,
    "tan": helper("_argus_tan"),
    "sinh": helper("_argus_sinh"),
    "cosh": helper("_argus_cosh"),
    "floor": lambda operands: call("tl.floor", operands[0]),
    "ceil": lambda operands: call("tl.ceil", operands[0]),
    "trunc": helper("_argus_trunc"),
    "round": helper("_argus_round"),
    "sign": helper("_argus_sign"),
}


def constant_exponent(emitter: BodyEmitter, op: ir.Op) -> int | None:
    """The exponent of `x ** n` as an integer when it is a constant of integral value."""
    source = emitter.plan.resolve(op.operands[1]).op
    if source is None or source.kind != "const":
        return None
    value = source.attrs["value"]
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value) if float(value).is_integer() else None


def power(emitter: BodyEmitter, op: ir.Op, operands: list[Expr]) -> Expr:
    """`x ** y`: multiplications for a small constant integer exponent (any on integers: the analyzer allows
    no other), else _argus_pow in f64 rounded to the result's dtype."""
    base, exponent = operands
    dtype = op.result.type.dtype
    base_type = emitter.plan.resolve(op.operands[0]).type
    n = constant_exponent(emitter, op)
    if n is not None and (dtype.is_integer or 1 <= abs(n) <= MULTIPLIED_POWERS):
        narrow = dtype.is_float and dtype.bits < 32  # f16, bf16: multiplied in f32 and rounded once, as torch
        if narrow:
            base = method(base, "to", "tl.float32")
        elif base_type.dtype != dtype:
            base = method(base, "to", triton_dtype(dtype))  # an integer tile to a float power: `i ** 2.0`
        if n == 0:
            return binary(binary(base, "*", atom("0")), "+", atom("1"))  # integers only: no NaN to keep
        product = base
        for _ in range(abs(n) - 1):
            product = binary(product, "*", base)
        product = binary(atom("1.0"), "/", product) if n < 0 else product
        return method(product, "to", triton_dtype(dtype)) if narrow else product
    return method(call("_argus_pow", base, exponent), "to", triton_dtype(dtype))


def helpers_used(texts: list[str]) -> list[str]:
    """The helpers the generated text calls, with the ones they call, in HELPERS' order."""
    wanted: set[str] = set()
    pending = [name for name in HELPERS if any(re.search(rf"\b{name}\(", text) for text in texts)]
    while pending:
        name = pending.pop()
        if name not in wanted:
            wanted.add(name)
            pending.extend(HELPERS[name][0])
    return [name for name in HELPERS if name in wanted]


def helper_source(name: str) -> list[str]:
    """The lines of one helper's definition."""
    return ["@triton.jit", *HELPERS[name][1].splitlines()]
