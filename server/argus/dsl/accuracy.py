"""Which dot input precisions keep an output's accuracy, and why not: the gate's tolerance rule, an error model
per precision, and the check behind AR219.

The tolerance (docs/gate.md, "Correctness: what passes"; the gate's runner has its own copy of the numbers,
which tests/gate/test_tolerance_rule.py holds equal): an element of an output passes when

    |got - expected| <= atol + tol * |expected|,    atol = max(tol, 4 u R)

with tol by the output's dtype (1e-4 for f32) or as the file's `reference ... tolerance` declares, R the
output's reduction length (`reduction_factors`: the sizes each element sums over) and u the unit roundoff the
kernel accumulates in (2**-24: f32 for every float dtype but f64).

The error model (constants measured by bench/fp32_accuracy.py: spreads on emulated tensor-core products on the
CPU, worst elements of Triton's own dots on an H200; tables in docs/gate.md). A dot of length R with f32
operands errs in two ways:

- accumulation: each partial sum rounded to f32. For an FMA chain (cuBLAS's SGEMM, Triton's `ieee`) on
  unit-normal inputs the error of an element spreads as 0.30 u R: it grows like R, not sqrt(R), because the
  partial sums of zero-mean terms wander as far as sqrt(R) while the result may end near zero.
- input rounding: the tensor core multiplies the operands cut to fewer mantissa bits. Each product is off by a
  relative error with spread `rho` (random: adds up as rho sqrt(R) near zero, rho / sqrt(R) relative on
  all-positive inputs) and mean `bias` (tf32 truncates, so on all-positive inputs every product is low by
  about 6.5e-4, whatever R).

The worst of some 16 million elements (an H200 trial at 4096 x 4096) is taken as 4.5 spreads of the
accumulation error and 4 of the rounding error (WORST_ACCUMULATION, WORST_ROUNDING). A
precision keeps an output's tolerance when its expected worst error near zero (unit-normal inputs) is within
atol and its expected relative error on all-positive inputs within tol.

Pure Python: the checker, the gate's manifest and the skills' precision transform import it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from argus.dsl import ast, ir
from argus.dsl.atomics import WRITES
from argus.dsl.diagnostics import Diagnostic, make
from argus.dsl.evaluate import evaluate
from argus.dsl.model_ir import ModelIR
from argus.dsl.spans import Span
from argus.dsl.types import DType, TensorT

# ---- the tolerance rule --------------------------------------------------------------------------------------

# tol by output dtype (Argus names); integers and booleans must match exactly (0)
BASE_TOLERANCE = {"f64": 1e-7, "f32": 1e-4, "f16": 1e-2, "bf16": 1e-2, "f8e4m3": 0.125, "f8e5m2": 0.25}
F32_ROUNDOFF = 2.0**-24
ACCUMULATION_ROUNDOFF = {"f64": 2.0**-53}  # every other float dtype accumulates in f32
ACCUMULATION_FACTOR = 4  # atol grows as 4 u R: about 2.4 times the worst of two fp32 FMA chains compared
# unit roundoff of each output dtype: the kernel and the reference may round one ulp apart
OUTPUT_ROUNDOFF = {"f64": 2.0**-53, "f32": 2.0**-24, "f16": 2.0**-11, "bf16": 2.0**-8, "f8e4m3": 2.0**-4}
OUTPUT_ROUNDOFF["f8e5m2"] = 2.0**-3


def dtype_name(dtype: DType | str) -> str:
    return dtype if isinstance(dtype, str) else dtype.name


def tolerance_at(
    out_dtype: DType | str, reduction_length: int = 1, tolerance: float | None = None
) -> tuple[float, float]:
    """(tol, atol) of an output of `out_dtype` whose elements each sum `reduction_length` terms; `tolerance`
    replaces the dtype's tol (a file's declared one). (0, 0) for integers and booleans: they must match."""
    name = dtype_name(out_dtype)
    if name not in BASE_TOLERANCE:
        return 0.0, 0.0
    tol = BASE_TOLERANCE[name] if tolerance is None else float(tolerance)
    u = ACCUMULATION_ROUNDOFF.get(name, F32_ROUNDOFF)
    return tol, max(tol, ACCUMULATION_FACTOR * u * max(1, reduction_length))


# ---- the error model -----------------------------------------------------------------------------------------

# The worst element, in spreads: of the 16.8 M elements of a 4096 x 4096 output on the H200, an FMA chain's
# worst was 4.3 spreads (its error varies from element to element), Triton's tf32 and bf16x3 at 3.3 and 3.7.
WORST_ACCUMULATION = 4.5
WORST_ROUNDING = 4.0
ACCUMULATION_SPREAD = 0.30  # an fp32 FMA chain on unit-normal inputs: the error spreads as 0.30 u R


@dataclass(frozen=True, slots=True)
class Precision:
    """One of dot's input precisions for f32 operands, as bench/fp32_accuracy.py measured it."""

    name: str
    bits: int  # significand bits each operand keeps (the leading one included)
    how: str  # what the tensor core multiplies, in words
    rho: float  # spread of one product's relative error (random part)
    bias: float = 0.0  # mean relative error of one product (tf32's truncation)

    @property
    def digits(self) -> int:
        return round(self.bits * math.log10(2))


PRECISIONS: dict[str, Precision] = {
    p.name: p
    for p in (
        Precision("ieee", 24, "f32 operands as they are, one FMA per term", 0.0),
        Precision("tf32x3", 21, "each operand split into two tf32 parts, three products", 8.4e-8),
        Precision("tf32", 11, "10 mantissa bits, truncated as the tensor core reads f32", 3.8e-4, 6.5e-4),
        Precision("bf16x3", 16, "each operand split into two bf16 parts, three products", 5.0e-6),
        Precision("bf16x6", 24, "each operand split into three bf16 parts, six products", 6.1e-9),
    )
}


@dataclass(frozen=True, slots=True)
class ExpectedError:
    absolute: float  # the worst element near zero, unit-normal inputs (the gate's default data)
    relative: float  # the worst element relative to the result, all-positive inputs


def expected_error(precision: str, out_dtype: DType | str, reduction_length: int) -> ExpectedError:
    """A dot of `reduction_length` terms with f32 operands at `precision`, stored as `out_dtype`, against an
    f32 reference: how far its worst element is expected to land."""
    p = PRECISIONS[precision]
    r = max(1, reduction_length)
    u = F32_ROUNDOFF
    near_zero = math.hypot(WORST_ACCUMULATION * ACCUMULATION_SPREAD * u * r, WORST_ROUNDING * p.rho * math.sqrt(r))
    relative = math.hypot(
        WORST_ACCUMULATION * ACCUMULATION_SPREAD * u * math.sqrt(r), WORST_ROUNDING * p.rho / math.sqrt(r)
    )
    rounding = 2 * OUTPUT_ROUNDOFF.get(dtype_name(out_dtype), 0.0)
    return ExpectedError(near_zero, abs(p.bias) + relative + rounding)


def precision_keeps_accuracy(
    precision: str, out_dtype: DType | str, reduction_length: int, tolerance: float | None = None
) -> tuple[bool, str]:
    """Whether a dot at `precision` feeding an output of `out_dtype` whose elements sum `reduction_length` terms
    keeps that output's tolerance (the dtype's, or `tolerance` where the file declares one), and why or why
    not, in words. Raises ValueError for a precision without a model."""
    if precision not in PRECISIONS:
        raise ValueError(f"no accuracy model for input precision {precision!r} (known: {', '.join(PRECISIONS)})")
    name = dtype_name(out_dtype)
    r = max(1, reduction_length)
    if name not in BASE_TOLERANCE:
        return False, f"a {name} output must match exactly, and no floating-point dot keeps that"
    p = PRECISIONS[precision]
    tol, atol = tolerance_at(name, r, tolerance)
    error = expected_error(precision, name, r)
    whose = "the declared tolerance" if tolerance is not None else f"the {name} tolerance"
    expected = (
        f"its error is expected to reach {error.absolute:.1e} near zero (unit-normal inputs) and "
        f"{error.relative:.1e} relative (all-positive inputs)"
    )
    limits = f"{whose} is {atol:.1e} absolute and {tol:.1e} relative"
    if error.absolute <= atol and error.relative <= tol:
        return True, f'"{precision}" keeps {whose} at R = {r}: {expected}, and {limits}'
    digits = f'"{precision}" keeps about {p.digits} decimal digits ({p.how})'
    return False, f"{digits}: at R = {r} {expected}, where {limits}"


def tolerance_needed(precision: str, out_dtype: DType | str, reduction_length: int) -> float:
    """The smallest round tolerance (1, 2 or 5 times a power of ten) that `precision` keeps at that R."""
    error = expected_error(precision, out_dtype, reduction_length)
    worst = max(error.absolute, error.relative)
    exponent = math.floor(math.log10(worst)) if worst > 0 else -7
    for power in range(exponent, 1):
        for mantissa in (1, 2, 5):
            tol = mantissa * 10.0**power
            if precision_keeps_accuracy(precision, out_dtype, reduction_length, tol)[0]:
                return float(f"{tol:.0e}")
    return 1.0


# ---- reduction lengths ---------------------------------------------------------------------------------------


def reduction_factors(kernel: ir.KernelIR) -> dict[str, list[str | int]]:
    """Per out tensor, what its elements sum over: the size symbols (and named tile constants, as numbers)
    that occur in the shapes of the kernel's input tensors but not in the output's shape. A GEMM C[M, N] of
    A[M, K] and B[K, N] sums over K; a row sum out[M] of x[M, N] over N; an elementwise output over nothing.
    A symbol that selects rather than sums (E, the expert of a grouped GEMM) counts too: R is an upper bound
    there, and the tolerance a little looser than it need be."""
    inputs = [p.type for p in kernel.params if isinstance(p.type, TensorT) and (not p.is_out or p.is_inout)]
    result: dict[str, list[str | int]] = {}
    for param in kernel.params:
        if not (param.is_out and isinstance(param.type, TensorT)):
            continue
        own = {dim_key(d) for d in param.type.stored_shape}  # a view's products are its stored axes
        factors: dict[str, str | int] = {}
        for tensor in inputs:
            for dim in tensor.stored_shape:
                key = dim_key(dim)
                if key is not None and key not in own and key not in factors:
                    factors[key] = dim.symbol if dim.symbol is not None else dim.offset
        result[param.name] = list(factors.values())
    return result


def dim_key(dim) -> str | None:
    """A dimension by name: its size symbol, or the tile constant it was written as (a bare number has none)."""
    return dim.symbol if dim.symbol is not None else (dim.label or None)


def model_reductions(model: ModelIR, kernels: dict[str, ir.KernelIR]) -> dict[str, list[list[str | int]]]:
    """Per out tensor of a model, the terms of its reduction length: R is their sum, each term the product of
    its factors (the model's sizes, or numbers). A launch's output sums what its kernel's rule says
    (`reduction_factors`, the kernel's sizes read as the model's through the launch's bindings) on top of what
    its inputs already summed: a GEMM's logits[M, N] carry K, the logsumexp of them N more, so R = K + N. Errors
    of a chain add, so the sum bounds them (a product would allow far more)."""
    terms: dict[str, list[tuple[str | int, ...]]] = {}
    for launch in model.launches:
        kernel = kernels[launch.kernel]
        outputs = {p.name for p in kernel.params if p.is_out and not p.is_inout}  # an in/out one carries too
        carried: list[tuple[str | int, ...]] = []
        for arg in launch.args:
            if arg.kind == "tensor" and arg.param not in outputs:
                carried += [t for t in terms.get(str(arg.value), []) if t not in carried]
        for param, factors in reduction_factors(kernel).items():
            arg = launch.arg(param)
            if arg is None:
                continue
            own = tuple(model_factor(f, launch.bindings) for f in factors)
            terms[str(arg.value)] = ([own] if own else []) + [t for t in carried if t != own]
    return {p.name: [list(t) for t in terms.get(p.name, [])] for p in model.params if p.is_out}


def model_factor(factor: str | int, bindings: dict) -> str | int:
    """A kernel's reduction factor as the model's: its size symbol's binding (the offset dropped: R is an
    estimate), or the number itself."""
    if isinstance(factor, int):
        return factor
    bound = bindings.get(factor)
    if bound is None:
        return factor
    return bound.symbol if bound.symbol is not None else max(bound.offset, 1)


def reduction_length(factors: list, sizes: dict) -> int:
    """R of one output at some sizes: the product of its factors; for a model's output, a list of such
    products (`model_reductions`), their sum."""
    if factors and all(isinstance(term, list) for term in factors):
        return max(1, sum(reduction_length(term, sizes) for term in factors))
    length = 1
    for factor in factors:
        value = sizes.get(factor) if isinstance(factor, str) else factor
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            length *= value
    return length


# ---- the check: declared tolerances, and AR219 ----------------------------------------------------------------


def declared_tolerances(
    reference: ast.PythonBlock | None, kernel: ir.KernelIR, diagnostics: list[Diagnostic] | None = None
) -> dict[str, float]:
    """The tol a reference's `tolerance` clause gives each floating out tensor; what is wrong with the clause
    goes to `diagnostics` (when given) and is left out."""
    clause = reference.tolerance if reference is not None else None
    if clause is None:
        return {}
    report = diagnostics.append if diagnostics is not None else (lambda _d: None)
    outputs = {p.name: p for p in kernel.params if p.is_out and isinstance(p.type, TensorT)}
    floating = [name for name, p in outputs.items() if p.type.dtype.is_float]
    declared: dict[str, float] = {}
    if clause.value is not None:
        value = tolerance_value(clause.value, report)
        if value is not None:
            declared = dict.fromkeys(floating, value)
    for binding in clause.bindings:
        param = kernel.tensor(binding.name) or next((p for p in kernel.params if p.name == binding.name), None)
        if binding.name in declared and clause.value is None:
            report(make("AR102", binding.name_span, f"`{binding.name}` is given a tolerance twice"))
            continue
        if param is None:
            message = f"`{binding.name}` is not a parameter of `{kernel.name}`; a tolerance names out tensors"
            report(make("AR101", binding.name_span, message))
            continue
        if param.name not in outputs:
            report(make("AR218", binding.name_span, f"`{binding.name}` is an input; a tolerance names out tensors"))
            continue
        if param.name not in floating:
            message = f"`{binding.name}` is {param.type.dtype}: integer and boolean outputs must match exactly"
            report(make("AR204", binding.name_span, message))
            continue
        value = tolerance_value(binding.value, report)
        if value is not None:
            declared[param.name] = value
    return declared


def tolerance_value(expr: ast.Expr, report) -> float | None:
    value = evaluate(expr, {})
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
        report(make("AR218", expr.span, "a tolerance is a number between 0 and 1, such as 2e-3"))
        return None
    return float(value)


def size_sets(sizes: ast.Sizes | None, kernel: ir.KernelIR) -> dict[str, dict]:
    """Each size set's values (those that evaluate; the analyzer reports the rest)."""
    if sizes is None:
        return {}
    result = {}
    for size_set in sizes.sets:
        env: dict = {name: c.value for name, c in kernel.constants.items()}
        for binding in size_set.bindings:
            value = evaluate(binding.value, env)
            if value is not None:
                env[binding.name] = value
        result.setdefault(size_set.name, env)
    return result


def dot_outputs(kernel: ir.KernelIR, dot: ir.Op) -> list[str]:
    """The out tensors whose stored (or atomically written) values depend on the dot's result, in store order."""
    tainted = {dot.result}
    outputs: list[str] = []
    changed = True
    while changed:
        changed = False
        for op in ir.walk_ops(kernel.body):
            if op.kind in WRITES:
                value = ir.memory_access(op).value
                if value in tainted and op.attrs["tensor"] not in outputs:
                    outputs.append(op.attrs["tensor"])
                continue
            for region in op.regions:
                carried = region.args[len(region.args) - len(region.yields) :] if op.kind == "for" else []
                for arg, value in zip(carried, region.yields, strict=False):
                    if value in tainted and arg not in tainted:
                        tainted.add(arg)
                        changed = True
            if any(v in tainted for v in op.operands) or any(y in tainted for r in op.regions for y in r.yields):
                for result in op.results:
                    if result not in tainted:
                        tainted.add(result)
                        changed = True
    return outputs


def syntax_nodes(node):
    """Every syntax node under `node` (statements, expressions), depth first."""
    if isinstance(node, list):
        for item in node:
            yield from syntax_nodes(item)
        return
    if not hasattr(node, "__dataclass_fields__") or isinstance(node, Span):
        return
    yield node
    for name in node.__dataclass_fields__:
        yield from syntax_nodes(getattr(node, name))


@dataclass(frozen=True, slots=True)
class Choice:
    """A precision a dot may run at, and where the file says so."""

    precision: str
    span: Span
    constant: str | None = None  # the string tile constant, when it is one of its values
    tuned: bool = False  # a tune value, not the default


def precision_choices(kernel_ast: ast.Kernel, kernel: ir.KernelIR, dot: ir.Op) -> list[Choice]:
    """The precisions a dot may run at: its literal, or its string tile constant's default and tune values."""
    constant = dot.attrs.get("precision_constant")
    if constant is not None:
        setting = next(
            (
                s
                for stmt in kernel_ast.body
                if isinstance(stmt, ast.TileDecl)
                for s in stmt.settings
                if s.name == constant
            ),
            None,
        )
        if setting is None:
            return []
        choices = [Choice(str(kernel.constants[constant].value), setting.value.span, constant)]
        for element in setting.tune.elts if setting.tune is not None else []:
            if isinstance(element, ast.Str) and all(c.precision != element.value for c in choices):
                choices.append(Choice(element.value, element.span, constant, tuned=True))
        return choices
    call = next((n for n in syntax_nodes(kernel_ast.body) if isinstance(n, ast.Call) and n.span == dot.span), None)
    if call is None:
        return []
    written = next((k.value for k in call.keywords if k.name == "input_precision"), None)
    if written is None and len(call.args) > 3:
        written = call.args[3]
    if written is None:
        return []  # the default, "ieee", keeps every tolerance
    return [Choice(dot.attrs["input_precision"], written.span)]


def check_accuracy(
    kernel_ast: ast.Kernel,
    kernel: ir.KernelIR,
    reference: ast.PythonBlock | None,
    sizes: ast.Sizes | None,
    diagnostics: list[Diagnostic],
) -> None:
    """AR219: a dot whose input precision (a literal, or any value of a string tile constant) cannot keep the
    tolerance of an output it feeds at one of the kernel's size sets. The declared tolerance's problems too."""
    declared = declared_tolerances(reference, kernel, diagnostics)
    factors = reduction_factors(kernel)
    sets = size_sets(sizes, kernel) or {"": {}}
    reported: set[Span] = set()
    for dot in ir.walk_ops(kernel.body):
        if dot.kind != "dot" or dot.operands[0].type.dtype.name != "f32":
            continue  # input_precision only matters for f32 operands
        outputs = dot_outputs(kernel, dot)
        for choice in precision_choices(kernel_ast, kernel, dot):
            if choice.span in reported or choice.precision not in PRECISIONS:
                continue
            problem = first_problem(choice, outputs, kernel, factors, sets, declared)
            if problem is not None:
                reported.add(choice.span)
                diagnostics.append(make("AR219", choice.span, problem, precision=choice.precision))


def first_problem(choice: Choice, outputs, kernel, factors, sets, declared) -> str | None:
    for output in outputs:
        tensor = kernel.tensor(output)
        if tensor is None or not tensor.type.dtype.is_float:
            continue
        dtype = tensor.type.dtype.name
        for set_name, values in sets.items():
            length = reduction_length(factors.get(output, []), values)
            keeps, why = precision_keeps_accuracy(choice.precision, dtype, length, declared.get(output))
            if keeps:
                continue
            where = reduction_text(factors.get(output, []), length) + (f" in size set `{set_name}`" if set_name else "")
            what = (
                f'tune value "{choice.precision}" of `{choice.constant}` (the autotuner may pick it)'
                if choice.tuned
                else f'`{choice.constant}` = "{choice.precision}"'
                if choice.constant
                else f'input_precision "{choice.precision}"'
            )
            keeping = sorted(
                (p for p in PRECISIONS if precision_keeps_accuracy(p, dtype, length, declared.get(output))[0]),
                key=lambda p: PRECISIONS[p].bits,
            )
            instead = f'"{keeping[0]}" keeps it; ' if keeping else ""
            lengths = [reduction_length(factors.get(output, []), v) for v in sets.values()]
            needed = f"{max(tolerance_needed(choice.precision, dtype, n) for n in lengths):g}"
            return (
                f"{what} cannot keep the tolerance of `{output}` ({dtype}, {where}): {why}. {instead}or declare "
                f"the tolerance this precision needs: `reference {kernel.name}(...) tolerance {output} = {needed}`"
            )
    return None


def reduction_text(factors: list[str | int], length: int) -> str:
    if not factors:
        return "no reduction, R = 1"
    names = " * ".join(str(f) for f in factors)
    return f"R = {length}" if names == str(length) else f"R = {names} = {length}"
