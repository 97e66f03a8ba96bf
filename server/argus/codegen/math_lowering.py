"""The Triton form of the elementwise math Triton has no portable function for: log1p, expm1, log10, tan, sinh,
cosh, trunc, round and sign.

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
"""

from __future__ import annotations

import re
from collections.abc import Callable

from argus.codegen.expr import Expr, atom, binary, call

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
