"""The correct stage: the kernel against its PyTorch reference on random inputs, several trials, fresh seeds.

Outputs are poisoned before each launch (NaN for floats, the most negative value for integers) so an element
the kernel never writes fails the comparison. On the CPU this process runs with TRITON_INTERPRET=1 and the
`small` sizes; on a GPU the trials use `small` and the last one `large`.
"""

from __future__ import annotations

import inspect
import random
import time

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

# atol = rtol = tol by output dtype: an element passes when |got - expected| <= tol * (1 + |expected|), i.e. when
# its error relative to 1 + |expected| (absolute near zero, relative for large values) is at most tol.
TOLERANCES = {
    "float64": 1e-7,
    "float32": 1e-4,
    "float16": 1e-2,
    "bfloat16": 1e-2,
    "float8_e4m3fn": 1.25e-1,
    "float8_e5m2": 2.5e-1,
}
TF32_TOLERANCE = 1e-2  # a dot with tf32 inputs keeps 10 mantissa bits, like f16


def tolerance(dtype, tf32: bool) -> float:
    name = str(dtype).removeprefix("torch.")
    if name == "float32" and tf32:
        return TF32_TOLERANCE
    return TOLERANCES.get(name, 0.0)  # integers and booleans must match exactly


def poison(tensor) -> None:
    import torch

    if tensor.dtype.is_floating_point:
        tensor.fill_(float("nan"))
    elif tensor.dtype == torch.bool:
        tensor.fill_(True)
    else:
        tensor.fill_(torch.iinfo(tensor.dtype).min)


def reference_arguments(reference, inputs: dict, outputs: list[str]) -> dict:
    """The reference takes the kernel's inputs by name (clones, so nothing the kernel did can leak in)."""
    given = {name: value for name, value in inputs.items() if name not in outputs}
    parameters = inspect.signature(reference).parameters
    if not any(p.kind == inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        given = {name: value for name, value in given.items() if name in parameters}
    return {name: value.clone() if hasattr(value, "clone") else value for name, value in given.items()}


def as_outputs(expected, outputs: list[str]) -> dict:
    values = expected if isinstance(expected, tuple | list) else (expected,)
    if len(values) != len(outputs):
        raise ValueError(f"the reference returned {len(values)} values for {len(outputs)} outputs ({outputs})")
    return dict(zip(outputs, values, strict=True))


def compare(name: str, got, expected, tol: float) -> dict:
    """Largest errors and the first mismatching element (row-major) of one output."""
    import torch

    expected = torch.as_tensor(expected)
    if tuple(expected.shape) != tuple(got.shape):
        raise ValueError(f"the reference returned shape {tuple(expected.shape)} for `{name}` of {tuple(got.shape)}")
    g = got.detach().to(torch.float64)
    e = expected.detach().to(device=got.device, dtype=torch.float64)
    same = (g == e) | (torch.isnan(g) & torch.isnan(e))  # equal infinities and NaN where NaN is expected pass
    diff = torch.where(same, torch.zeros_like(g), (g - e).abs())
    diff = torch.where(torch.isnan(diff), torch.full_like(diff, float("inf")), diff)  # NaN on one side only
    within = diff <= tol * (1 + e.abs())  # False where the reference is NaN: a number where NaN was expected fails
    bad = ~same & (~within | torch.isinf(e))
    record = {
        "max_abs_error": float(diff.max()) if diff.numel() else 0.0,
        "max_rel_error": float((diff / (1 + e.abs())).nan_to_num(nan=float("inf")).max()) if diff.numel() else 0.0,
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

    kernel = phases.kernel
    _, problem, entry = phases.load()
    outputs = list(problem.OUTPUTS)
    tf32 = bool(phases.facts.get("tf32"))
    accumulated = set(phases.facts.get("accumulated_outputs", []))
    base = random.randrange(1, 2**31 - 1000) if seed is None else seed
    plan = trial_sizes(problem, device, max(1, trials))
    seeds = [base + i for i in range(len(plan))]
    worst_abs = worst_rel = 0.0
    tolerances: dict[str, float] = {}
    for number_, (sizes, trial_seed) in enumerate(zip(plan, seeds, strict=True), 1):
        started = time.perf_counter()
        inputs = phases.run("inputs", problem.make_inputs, dict(sizes), trial_seed, device)
        reference_args = phases.run("reference", reference_arguments, problem.reference, inputs, outputs)
        for name in outputs:
            if name in accumulated:
                inputs[name].zero_()  # atomic_add targets start from zero; unwritten elements stay undetected
            else:
                poison(inputs[name])
        phases.run("launch", launch, entry, inputs)
        if device == "cuda":
            phases.run("launch", torch.cuda.synchronize)
        expected = phases.run("reference", problem.reference, **reference_args)
        expected = phases.run("reference", as_outputs, expected, outputs)
        for name in outputs:
            tol = tolerances.setdefault(name, tolerance(inputs[name].dtype, tf32))
            record = phases.run("reference", compare, name, inputs[name], expected[name], tol)
            worst_abs = max(worst_abs, record["max_abs_error"])
            worst_rel = max(worst_rel, record["max_rel_error"])
            if record["mismatch"] is not None:
                done = plan[:number_]
                facts = correct_facts(done, seeds[:number_], tolerances, worst_abs, worst_rel, record["mismatch"])
                return mismatch_result(phases, record["mismatch"], trial_seed, sizes, facts)
        seconds = time.perf_counter() - started
        progress(f"{kernel}: correct trial {number_}/{len(plan)} passed ({seconds:.1f} s, sizes {sizes_text(sizes)})")
    return stage_record("passed", "", correct_facts(plan, seeds, tolerances, worst_abs, worst_rel, None))


def correct_facts(plan, seeds, tolerances, worst_abs, worst_rel, mismatch) -> dict:
    return {
        "trials": len(plan),
        "seeds": list(seeds),
        "sizes": [dict(s) for s in plan],
        "interpreter": interpreting(),
        "tolerance": {f"{name}": tol for name, tol in tolerances.items()},
        "max_abs_error": worst_abs if worst_abs != float("inf") else None,
        "max_rel_error": worst_rel if worst_rel != float("inf") else None,
        "first_mismatch": mismatch,
    }


def mismatch_result(phases: Phases, mismatch: dict, seed: int, sizes: dict, facts: dict) -> dict:
    where = ", ".join(str(i) for i in mismatch["index"])
    got = "NaN or inf (never written?)" if mismatch["got"] is None else mismatch["got"]
    expected = "NaN or inf" if mismatch["expected"] is None else mismatch["expected"]
    message = (
        f"{phases.kernel}: `{mismatch['output']}[{where}]` is {got}, the reference gives {expected} "
        f"({mismatch['count']} of {mismatch['elements']} elements differ; seed {seed}, sizes {sizes_text(sizes)})"
    )
    line = phases.facts.get("outputs", {}).get(mismatch["output"]) or phases.facts["line"]
    record = error("AR502", message, "correct", line)
    return stage_record("failed", message, facts, [record])
