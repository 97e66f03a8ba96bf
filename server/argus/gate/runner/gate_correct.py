"""The correct stage: the kernel against its PyTorch reference on random inputs, several trials, fresh seeds.

Outputs are poisoned before each launch (NaN for floats, the most negative value for integers) so an element
the kernel never writes fails the comparison. On the CPU this process runs with TRITON_INTERPRET=1 and the
`small` sizes; on a GPU the trials use `small` and the last one `large`.
"""

from __future__ import annotations

import inspect
import random
import time

import gate_interpreter
from gate_common import (
    Bundle,
    Phases,
    StageStop,
    error,
    interpreting,
    launch,
    progress,
    sizes_text,
    stage_record,
    stopped,
)

# The tolerance rule (docs/gate.md, "Correctness: what passes"). An element of an output passes when
#
#     |got - expected| <= atol + tol * |expected|,    atol = max(tol, ACCUMULATION_FACTOR * u * R)
#
# tol by the output's dtype (TOLERANCES) unless the file's reference declares one (`tolerance C = 2e-3`); R is the
# output's reduction length at the trial's sizes: the product of the sizes it sums over (the manifest's
# `reductions`, from argus); u the unit roundoff the kernel accumulates in (f32 for every float dtype but f64).
# For R <= tol / (4u) (R <= 419 for f32) that is the old rule, atol = rtol = tol. Past it the absolute part grows
# like R, as the worst element of an fp32 FMA chain does (bench/fp32_accuracy.py: about u * R on randn inputs,
# where elements near zero take all the absolute error), while the relative part stays tol: a sum without
# cancellation stays accurate in fp32 at any K here, and a kernel that rounds its inputs (tf32) does not.
TOLERANCES = {
    "float64": 1e-7,
    "float32": 1e-4,
    "float16": 1e-2,
    "bfloat16": 1e-2,
    "float8_e4m3fn": 1.25e-1,
    "float8_e5m2": 2.5e-1,
}
ACCUMULATION_ROUNDOFF = {"float64": 2.0**-53}  # every other float dtype accumulates in f32: 2**-24
ACCUMULATION_FACTOR = 4


def tolerance(dtype, reduction_length: int = 1, declared: float | None = None) -> tuple[float, float]:
    """(tol, atol) for an output of `dtype` that sums `reduction_length` terms per element."""
    name = str(dtype).removeprefix("torch.")
    if name not in TOLERANCES:
        return 0.0, 0.0  # integers and booleans must match exactly
    tol = TOLERANCES[name] if declared is None else float(declared)
    u = ACCUMULATION_ROUNDOFF.get(name, 2.0**-24)
    return tol, max(tol, ACCUMULATION_FACTOR * u * max(1, reduction_length))


def reduction_length(factors: list, sizes: dict) -> int:
    """R of one output: the product of its manifest factors, size symbols (taken from the trial's sizes) or
    numbers (tile constants); for a model's output, whose manifest gives a list of such products (the
    launches it went through), their sum."""
    if factors and all(isinstance(term, list) for term in factors):
        return max(1, sum(reduction_length(term, sizes) for term in factors))
    length = 1
    for factor in factors:
        value = sizes.get(factor) if isinstance(factor, str) else factor
        if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
            length *= int(value)
    return length


def start(tensor, where: str) -> None:
    """An output atomics write starts where the launcher starts it (the manifest's `accumulated_starts`): 0, or
    the dtype's lowest value for atomic_max (-inf for floats), its highest for atomic_min."""
    import torch

    if where == "zero":
        tensor.zero_()
    elif tensor.dtype.is_floating_point:
        tensor.fill_(float("-inf") if where == "lowest" else float("inf"))
    else:
        info = torch.iinfo(tensor.dtype)
        tensor.fill_(info.min if where == "lowest" else info.max)


def poison(tensor) -> None:
    import torch

    if tensor.dtype.is_floating_point:
        tensor.fill_(float("nan"))
    elif tensor.dtype == torch.bool:
        tensor.fill_(True)
    else:
        tensor.fill_(torch.iinfo(tensor.dtype).min)


def reference_arguments(reference, inputs: dict, outputs: list[str], inouts: list[str] = ()) -> dict:
    """The reference takes the kernel's inputs by name (clones, so nothing the kernel did can leak in: an in/out
    tensor arrives with its initial value, the kernel then updates the original), and its outputs as shape-only
    stand-ins: tensors of their shape and dtype on torch's meta device, which hold no data. The generated
    reference reads every size symbol from the shapes (sizes_of), and a symbol only an output's shape has
    (`z: out f32[M, N]` from `x: f32[N]`) has no other source."""
    given = {
        name: shape_only(value) if name in outputs and name not in inouts else value for name, value in inputs.items()
    }
    parameters = inspect.signature(reference).parameters
    if not any(p.kind == inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        given = {name: value for name, value in given.items() if name in parameters}
    return {name: value.clone() if hasattr(value, "clone") else value for name, value in given.items()}


def shape_only(tensor):
    """A tensor of `tensor`'s shape and dtype that holds no data (torch's meta device)."""
    import torch

    return torch.empty(tuple(tensor.shape), dtype=tensor.dtype, device="meta")


def as_outputs(expected, outputs: list[str]) -> dict:
    values = expected if isinstance(expected, tuple | list) else (expected,)
    if len(values) != len(outputs):
        raise ValueError(f"the reference returned {len(values)} values for {len(outputs)} outputs ({outputs})")
    return dict(zip(outputs, values, strict=True))


def compare(name: str, got, expected, tol: float, atol: float | None = None) -> dict:
    """Largest errors and the first mismatching element (row-major) of one output: an element passes when
    |got - expected| <= atol + tol * |expected| (atol = tol by default). The relative error reported is
    |got - expected| / (atol / tol + |expected|), at most tol where every element passes (with atol = tol, the
    error relative to 1 + |expected|)."""
    import torch

    atol = tol if atol is None else atol
    floor = atol / tol if tol > 0 else 1.0

    expected = torch.as_tensor(expected)
    if tuple(expected.shape) != tuple(got.shape):
        raise ValueError(f"the reference returned shape {tuple(expected.shape)} for `{name}` of {tuple(got.shape)}")
    g = got.detach().to(torch.float64)
    e = expected.detach().to(device=got.device, dtype=torch.float64)
    same = (g == e) | (torch.isnan(g) & torch.isnan(e))  # equal infinities and NaN where NaN is expected pass
    diff = torch.where(same, torch.zeros_like(g), (g - e).abs())
    diff = torch.where(torch.isnan(diff), torch.full_like(diff, float("inf")), diff)  # NaN on one side only
    within = diff <= atol + tol * e.abs()  # False where the reference is NaN: a number where NaN was expected fails
    bad = ~same & (~within | torch.isinf(e))
    record = {
        "max_abs_error": float(diff.max()) if diff.numel() else 0.0,
        "max_rel_error": float((diff / (floor + e.abs())).nan_to_num(nan=float("inf")).max()) if diff.numel() else 0.0,
        "mismatch": None,
    }
    count = int(bad.sum())
    if count:
        flat = int(torch.nonzero(bad.flatten())[0])
        index = list(torch.unravel_index(torch.tensor(flat), got.shape)) if got.dim() else []
        index = [int(i) for i in index]
        record["mismatch"] = {
            "output": name,
            "index": index,
            "got": number(g.flatten()[flat]),
            "expected": number(e.flatten()[flat]),
            "count": count,
            "elements": got.numel(),
        }
    return record


def number(value) -> float | None:
    """A JSON-safe float: NaN and infinities become None (JSON has no spelling for them)."""
    x = float(value)
    return x if x == x and abs(x) != float("inf") else None


def trial_sizes(problem, device: str, trials: int) -> list[dict]:
    sizes = problem.SIZES
    if device == "cuda" and "large" in sizes and trials > 1:
        return [sizes["small"]] * (trials - 1) + [sizes["large"]]
    return [sizes["small"]] * trials


def run_correct(bundle: Bundle, kernel: str, device: str, trials: int, seed: int | None = None) -> dict:
    try:
        return check_kernel(Phases(bundle, kernel, "correct"), device, trials, seed)
    except StageStop as stop:
        return stopped(stop)


def check_kernel(phases: Phases, device: str, trials: int, seed: int | None) -> dict:
    import torch

    # The reference computes in the dtypes it writes: no TF32 behind an f32 matmul or convolution.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    if interpreting():
        gate_interpreter.install()  # where the interpreter computes what no GPU would (gate_interpreter.py)
    kernel = phases.kernel
    _, problem, entry = phases.load()
    outputs = list(problem.OUTPUTS)
    inouts = list(
        getattr(problem, "INOUTS", [])
    )  # outputs that hold input data: copied for the reference, not poisoned
    accumulated = set(phases.facts.get("accumulated_outputs", []))
    starts = phases.facts.get("accumulated_starts", {})
    reductions = phases.facts.get("reductions", {})
    declared = phases.facts.get("tolerances", {})
    base = random.randrange(1, 2**31 - 1000) if seed is None else seed
    plan = trial_sizes(problem, device, max(1, trials))
    seeds = [base + i for i in range(len(plan))]
    worst_abs = worst_rel = 0.0
    rule = Rule()
    for number_, (sizes, trial_seed) in enumerate(zip(plan, seeds, strict=True), 1):
        started = time.perf_counter()
        inputs = phases.run("inputs", problem.make_inputs, dict(sizes), trial_seed, device)
        reference_args = phases.run("reference", reference_arguments, problem.reference, inputs, outputs, inouts)
        for name in outputs:
            if name in inouts:
                continue  # its input value is what the kernel updates; unwritten elements must keep it
            if name in accumulated:
                start(inputs[name], starts.get(name, "zero"))  # atomics accumulate: unwritten elements stay undetected
            else:
                poison(inputs[name])
        phases.run("launch", launch, entry, inputs)
        if device == "cuda":
            phases.run("launch", torch.cuda.synchronize)
        expected = phases.run("reference", problem.reference, **reference_args)
        expected = phases.run("reference", as_outputs, expected, outputs)
        for name in outputs:
            length = reduction_length(reductions.get(name, []), sizes)
            tol, atol = rule.add(name, tolerance(inputs[name].dtype, length, declared.get(name)), length)
            record = phases.run("reference", compare, name, inputs[name], expected[name], tol, atol)
            worst_abs = max(worst_abs, record["max_abs_error"])
            worst_rel = max(worst_rel, record["max_rel_error"])
            if record["mismatch"] is not None:
                done = plan[:number_]
                facts = correct_facts(done, seeds[:number_], rule, worst_abs, worst_rel, record["mismatch"])
                return mismatch_result(phases, record["mismatch"], trial_seed, sizes, facts, (tol, atol, length))
        seconds = time.perf_counter() - started
        progress(f"{kernel}: correct trial {number_}/{len(plan)} passed ({seconds:.1f} s, sizes {sizes_text(sizes)})")
    return stage_record("passed", "", correct_facts(plan, seeds, rule, worst_abs, worst_rel, None))


class Rule:
    """Each output's tolerance as the trials used it: tol, and atol and R of the trial with the largest R."""

    def __init__(self) -> None:
        self.tol: dict[str, float] = {}
        self.atol: dict[str, float] = {}
        self.length: dict[str, int] = {}

    def add(self, name: str, tolerances: tuple[float, float], length: int) -> tuple[float, float]:
        tol, atol = tolerances
        self.tol.setdefault(name, tol)
        if length >= self.length.get(name, 0):
            self.atol[name], self.length[name] = atol, length
        return tol, atol


def correct_facts(plan, seeds, rule: Rule, worst_abs, worst_rel, mismatch) -> dict:
    return {
        "trials": len(plan),
        "seeds": list(seeds),
        "sizes": [dict(s) for s in plan],
        "interpreter": interpreting(),
        "interpreter_corrections": gate_interpreter.notes(),
        "tolerance": dict(rule.tol),
        "absolute_tolerance": dict(rule.atol),
        "reduction_length": dict(rule.length),
        "max_abs_error": worst_abs if worst_abs != float("inf") else None,
        "max_rel_error": worst_rel if worst_rel != float("inf") else None,
        "first_mismatch": mismatch,
    }


def mismatch_result(
    phases: Phases, mismatch: dict, seed: int, sizes: dict, facts: dict, rule: tuple[float, float, int]
) -> dict:
    where = ", ".join(str(i) for i in mismatch["index"])
    got = "NaN or inf (never written?)" if mismatch["got"] is None else mismatch["got"]
    expected = "NaN or inf" if mismatch["expected"] is None else mismatch["expected"]
    message = (
        f"{phases.kernel}: `{mismatch['output']}[{where}]` is {got}, the reference gives {expected} "
        f"({mismatch['count']} of {mismatch['elements']} elements differ{beyond(*rule)}; seed {seed}, "
        f"sizes {sizes_text(sizes)})"
    )
    line = phases.facts.get("outputs", {}).get(mismatch["output"]) or phases.facts["line"]
    record = error("AR502", message, "correct", line)
    return stage_record("failed", message, facts, [record])


def beyond(tol: float, atol: float, length: int) -> str:
    """What the differing elements exceed, where the tolerance is not the exact match of integers."""
    if tol <= 0:
        return ""
    summed = f", R = {length}" if length > 1 else ""
    return f" by more than {atol:.2g} + {tol:.2g}·|reference|{summed}"
