"""The profile stage (GPU only) and the machine's ceilings, measured in the same run.

Each trial: flush L2 (write a buffer larger than it), then time one launch with CUDA events; report the
median of at least 100 trials after warm-up. FLOPs and bytes come from the kernel's counts (the IR's dot and
elementwise FLOPs, the fewest bytes moved) at the `large` sizes. The reference is timed the same way, as
written (eager) and under torch.compile.

A model is timed as its function runs when a user calls it (argument checks, temporaries and every launch),
its counts summed over the launches; then each launch alone, its kernel with the arguments its launcher passed.
"""

from __future__ import annotations

import contextlib
import statistics
import time
from collections.abc import Callable
from contextlib import AbstractContextManager

from gate_common import (
    Bundle,
    Phases,
    StageStop,
    exception_text,
    launch,
    one_line,
    progress,
    sizes_text,
    stage_record,
    stopped,
)
from gate_compile import record_launch, record_model_launches
from gate_correct import reference_arguments

FLUSH_BYTES = 256 * 1024 * 1024  # H200 L2 is 50 MB: writing 256 MB evicts whatever a kernel left there
COPY_BYTES = 2 * 1024**3
GEMM_SIZE = 8192


class Timer:
    def __init__(self) -> None:
        import torch

        self.flush_buffer = torch.empty(FLUSH_BYTES, dtype=torch.int8, device="cuda")

    def time(self, fn, trials: int, warmup_ms: float = 100.0, budget_s: float | None = None) -> dict:
        """Milliseconds per call of `fn`: median and spread over `trials` timed calls, L2 flushed before each.

        With `budget_s`, stops early once that much time was spent (at least 10 trials): for slow references.
        """
        import torch

        fn()
        torch.cuda.synchronize()
        warm_start = time.perf_counter()
        while (time.perf_counter() - warm_start) * 1000 < warmup_ms:
            fn()
            torch.cuda.synchronize()
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(trials)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(trials)]
        began = time.perf_counter()
        done = 0
        for start, end in zip(starts, ends, strict=True):
            self.flush_buffer.zero_()
            start.record()
            fn()
            end.record()
            done += 1
            if budget_s is not None and done >= 10 and done % 10 == 0:
                torch.cuda.synchronize()
                if time.perf_counter() - began > budget_s:
                    break
        torch.cuda.synchronize()
        samples = sorted(s.elapsed_time(e) for s, e in zip(starts[:done], ends[:done], strict=True))
        return {
            "ms_median": statistics.median(samples),
            "ms_p10": samples[int(0.1 * (len(samples) - 1))],
            "ms_p90": samples[int(0.9 * (len(samples) - 1))],
            "trials": len(samples),
        }


def measure_ceilings(trials: int = 30) -> dict:
    """Copy bandwidth and cuBLAS fp16/bf16 GEMM rate of this GPU, on random data."""
    import torch

    timer = Timer()
    progress("ceilings: device-to-device copy")
    copy = time_copy(timer, trials)
    rates = {}
    for dtype in (torch.float16, torch.bfloat16):
        progress(f"ceilings: cuBLAS {dtype} GEMM {GEMM_SIZE}^3")
        rates[dtype] = 2 * GEMM_SIZE**3 / (time_gemm(timer, dtype, trials)["ms_median"] * 1e-3) / 1e12
    torch.cuda.empty_cache()
    return {
        "device": torch.cuda.get_device_name(),
        "copy_gb_per_s": 2 * COPY_BYTES / (copy["ms_median"] * 1e-3) / 1e9,
        "gemm_fp16_tflops": rates[torch.float16],
        "gemm_bf16_tflops": rates[torch.bfloat16],
    }


def time_copy(timer: Timer, trials: int) -> dict:
    import torch

    source = torch.randint(-100, 100, (COPY_BYTES,), dtype=torch.int8, device="cuda")
    target = torch.empty_like(source)
    return timer.time(lambda: target.copy_(source), trials)


def time_gemm(timer: Timer, dtype, trials: int) -> dict:
    import torch

    a = torch.randn(GEMM_SIZE, GEMM_SIZE, device="cuda", dtype=dtype)
    b = torch.randn(GEMM_SIZE, GEMM_SIZE, device="cuda", dtype=dtype)
    return timer.time(lambda: torch.matmul(a, b), trials)


def work_counts(entry: dict, sizes: dict, inputs: dict) -> dict:
    """FLOPs and bytes of one launch; kernels whose loop bounds live in memory read them from `inputs`."""
    try:
        return entry["counts"](**sizes, inputs=inputs)
    except TypeError:  # a counts function without the inputs keyword
        return entry["counts"](**sizes)


def time_model(phases: Phases, module, entry: dict, inputs: dict, timer: Timer, trials: int, sizes: dict,
               calls: list, launches: list[dict]) -> dict:  # fmt: skip
    """The model's function as a user calls it; then each of its recorded `calls` alone (into `launches`)."""
    model = phases.kernel
    progress(f"{model}: timing the model, {trials} trials at {sizes_text(sizes)}")
    timed = phases.run("launch", timer.time, lambda: launch(entry, inputs), trials)
    lines = [record["line"] for record in phases.facts.get("launches", [])]
    for index, (kernel, grid, args, kwargs) in enumerate(calls):
        jit = module.KERNELS[kernel]["jit"]
        line = lines[index] if index < len(lines) else phases.facts["line"]
        progress(f"{model}: timing launch {index + 1} of {len(calls)}, {kernel} (line {line})")
        alone = phases.run("launch", timer.time, lambda: jit[grid](*args, **kwargs), trials)  # noqa: B023
        launches.append({"kernel": kernel, "line": line, "timing": alone})
    return timed


def run_profile(
    bundle: Bundle,
    kernel: str,
    device: str,
    trials: int,
    ceilings: dict | None,
    time_compiled: bool = True,
    turn: Callable[[], AbstractContextManager] = contextlib.nullcontext,
) -> dict:
    if device != "cuda":
        return stage_record("skipped", "profiling needs a GPU")
    if ceilings is None:
        return stage_record("error", "the ceilings could not be measured, so no percentages")
    try:
        return profile_kernel(Phases(bundle, kernel, "profile"), max(100, trials), ceilings, time_compiled, turn)
    except StageStop as stop:
        return stopped(stop)


def profile_kernel(
    phases: Phases,
    trials: int,
    ceilings: dict,
    time_compiled: bool = True,
    turn: Callable[[], AbstractContextManager] = contextlib.nullcontext,
) -> dict:
    """Compile everything first (the kernel's JIT, torch.compile of the reference), then time inside `turn`:
    runners side by side hold the GPU (run.py's --gpu-lock) only for the seconds of timing, not for the
    compiles, which are most of a profile stage's wall time."""
    import torch

    kernel = phases.kernel
    module, problem, entry = phases.load()
    sizes = dict(problem.SIZES.get("large", problem.SIZES["small"]))
    notes = [] if "large" in problem.SIZES else ["no `large` size set: profiled at `small`"]
    inputs = phases.run("inputs", problem.make_inputs, sizes, 0, "cuda")
    timer = phases.run("measure", Timer)
    launches: list[dict] = []
    is_model = phases.bundle.is_model(kernel)
    if is_model:
        # One real run, recorded: the launchers' checks, the JIT compilations, and each launch's arguments.
        calls = phases.run("launch", record_model_launches, module, entry, inputs, True)
    else:
        phases.run("launch", launch, entry, inputs)  # the launcher's checks, once, and the JIT compilation
        # Timed: the jit function with the arguments the launcher computed, so the launcher's Python checks stay
        # out of the numbers (they run before the kernel is queued, which the events would count as idle GPU).
        grid, args, kwargs = phases.run("launch", record_launch, module, kernel, inputs)
        jit = entry["jit"]
    inouts = list(getattr(problem, "INOUTS", []))
    reference_args = reference_arguments(problem.reference, inputs, list(problem.OUTPUTS), inouts)
    compiled, compile_failure = compile_reference(problem.reference, reference_args) if time_compiled else (None, "")
    with turn():
        if is_model:
            timed = time_model(phases, module, entry, inputs, timer, trials, sizes, calls, launches)
        else:
            progress(f"{kernel}: timing the kernel, {trials} trials at {sizes_text(sizes)}")
            timed = phases.run("launch", timer.time, lambda: jit[grid](*args, **kwargs), trials)
        eager, compiled_timing = time_references(phases, timer, problem.reference, reference_args, compiled, trials)
    counts = phases.run("measure", work_counts, entry, sizes, inputs)
    flops, moved = float(counts["flops"]), float(counts["bytes"])
    seconds = timed["ms_median"] * 1e-3
    tflops, gb_per_s = flops / seconds / 1e12, moved / seconds / 1e9
    gemm = ceilings["gemm_bf16_tflops"] if phases.facts.get("dot_dtype") == "bf16" else ceilings["gemm_fp16_tflops"]
    bandwidth = ceilings["copy_gb_per_s"]
    compute_bound = flops / (gemm * 1e12) > moved / (bandwidth * 1e9)
    facts = {
        "sizes": sizes,
        "kernel": timed,
        "flops": flops,
        "bytes": moved,
        "tflops": tflops,
        "gb_per_s": gb_per_s,
        "ceilings": ceilings,
        "bound": "compute" if compute_bound else "memory",
        "percent_of_bandwidth": 100 * gb_per_s / bandwidth,
        "percent_of_compute": 100 * tflops / gemm,
        "notes": notes,
        "launches": launches,
    }
    facts["percent_of_ceiling"] = facts["percent_of_compute"] if compute_bound else facts["percent_of_bandwidth"]
    facts["eager"] = eager
    facts["speedup_over_eager"] = eager["ms_median"] / timed["ms_median"]
    if not time_compiled:
        notes.append("the torch.compile reference was not timed (--references eager)")
    elif compiled_timing is None:
        notes.append(compile_failure)
    else:
        facts["compiled"] = compiled_timing
        facts["speedup_over_compiled"] = compiled_timing["ms_median"] / timed["ms_median"]
    torch.cuda.synchronize()
    return stage_record("passed", "", facts)


def compile_reference(reference, reference_args: dict):
    """torch.compile of the reference, compiled by one call (the compile happens at the first call): the
    compiled function and "", or None and why it failed, which is a fact about torch, not about the kernel."""
    import torch

    progress("compiling the reference with torch.compile")
    try:
        compiled = torch.compile(reference)
        compiled(**reference_args)
        torch.cuda.synchronize()
        return compiled, ""
    except Exception as exc:
        return None, f"torch.compile of the reference failed: {one_line(exception_text(exc))}"


def time_references(phases: Phases, timer: Timer, reference, reference_args: dict, compiled, trials: int):
    """The reference as written (eager) and, when it compiled, under torch.compile; a slow reference gets fewer
    trials (a budget per timing, said in the result's trial count)."""
    budget = 20.0
    progress(f"{phases.kernel}: timing the reference (eager)")
    eager = phases.run("reference", timer.time, lambda: reference(**reference_args), trials, 100.0, budget)
    if compiled is None:
        return eager, None
    progress(f"{phases.kernel}: timing the reference (torch.compile)")
    return eager, timer.time(lambda: compiled(**reference_args), trials, 100.0, budget)
