"""What a gate run reports, one GateResult per kernel: the data that crosses from the gate to the editor.

The runner that fills these in (argus/gate/runner) needs only torch and triton, so it writes plain JSON with
the same field names; `read_result` validates that JSON against these models. docs/gate.md holds the JSON
schema generated from them (`python -m argus.gate.schema`).
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

# The JSON format the runner writes; bumped when a field changes meaning.
RESULT_FORMAT = "argus-gate/1"


class Status(StrEnum):
    passed = "passed"
    failed = "failed"  # the kernel ran and was wrong (correct), or did not compile (compile)
    skipped = "skipped"  # not asked for, not possible here (profile on a CPU), or an earlier stage failed
    error = "error"  # the stage could not finish: a crash, a time-out, no memory, a broken reference


class Model(BaseModel):
    # The runner writes plain JSON: an unknown field is a runner/model mismatch and should be loud.
    model_config = ConfigDict(extra="forbid")


class GateError(Model):
    code: str = Field(description="a stable AR5xx code (docs/diagnostics.md)")
    message: str
    stage: str | None = Field(None, description="compile, correct or profile; None for the gate as a whole")
    line: int | None = Field(None, description="1-based line in the Argus source the error maps back to")
    column: int | None = Field(None, description="1-based column on that line where the error's text starts, if known")
    end_column: int | None = Field(None, description="1-based column just past the error's text, if known")
    generated_line: int | None = Field(None, description="1-based line in the generated kernel.py, if any")
    detail: str = Field("", description="the underlying error text (Triton's message, a traceback tail)")


class StageResult(Model):
    status: Status = Status.skipped
    seconds: float = Field(0.0, description="wall time of the stage, process start included")
    message: str = Field("", description="one line saying why, when the stage did not pass")


class ConfigCompile(Model):
    """One configuration the autotuner may pick, compiled for the target like the declared one."""

    config: dict[str, int | float | str] = Field(description="the tuned settings' values")
    status: Status = Field(
        description="passed; failed: over the shared-memory limit, or Triton refused it (the errors say which); "
        "skipped: the launcher refuses it at the small sizes"
    )
    message: str = ""
    estimated_shared_memory_bytes: int | None = Field(None, description="argus check's estimate (argus.dsl.resources)")
    shared_memory_bytes: int | None = None
    registers: int | None = None
    spill_stores_bytes: int | None = None
    spill_loads_bytes: int | None = None
    covers: int = Field(
        1,
        description="autotuner configurations this compile stands for (they differ only in settings no buffer "
        "depends on)",
    )
    seconds: float = 0.0


class LaunchCompile(Model):
    """One launch of a model, compiled for the target with the arguments its kernel's launcher passed while the
    model ran at the `small` sizes (specialized as at sizes divisible by 16, as a kernel's own compile is)."""

    kernel: str = Field(description="the kernel launched")
    line: int = Field(description="1-based Argus line of the launch in the model")
    config: dict[str, int | float | str] = Field(description="the kernel's tile constants and policy compiled with")
    shared_memory_bytes: int | None = None
    registers: int | None = None
    spill_stores_bytes: int | None = None
    spill_loads_bytes: int | None = None
    stack_frame_bytes: int | None = None
    seconds: float = 0.0


class CompileFacts(Model):
    target: str = Field(description="what was compiled for, e.g. sm_90")
    triton_version: str
    config: dict[str, int | float | str] = Field(description="the tile constants and policy compiled with")
    shared_memory_bytes: int | None = None
    registers: int | None = Field(None, description="registers per thread, from ptxas")
    spill_stores_bytes: int | None = None
    spill_loads_bytes: int | None = None
    stack_frame_bytes: int | None = None
    estimated_shared_memory_bytes: int | None = Field(None, description="argus check's estimate (argus.dsl.resources)")
    autotune_configs: int = Field(0, description="configurations the autotuned launcher hands triton.autotune")
    configs: list[ConfigCompile] = Field(
        default_factory=list,
        description="the other configurations compiled, largest estimated shared memory first, up to the runner's "
        "--compile-configs bound and within half the stage's time",
    )
    warnings: list[str] = Field(default_factory=list, description="facts worth a look that fail nothing: spills")
    launches: list[LaunchCompile] = Field(
        default_factory=list,
        description="a model's launches, each compiled (then the fields above hold the worst of them: the most "
        "shared memory, registers, spills and stack frame; `config` is empty); empty for a kernel",
    )


class CompileResult(StageResult):
    facts: CompileFacts | None = None


class Mismatch(Model):
    output: str = Field(description="the out parameter that differs")
    index: list[int] = Field(description="first mismatching element, row-major order")
    got: float | None
    expected: float | None
    count: int = Field(description="mismatching elements in that output")
    elements: int


class CorrectFacts(Model):
    trials: int
    seeds: list[int]
    sizes: list[dict[str, int | float]] = Field(
        description="the problem sizes of each trial, with the scalar parameters a size set binds (eps = 1e-6)"
    )
    interpreter: bool = Field(description="ran through TRITON_INTERPRET=1 (on the CPU)")
    interpreter_corrections: list[str] = Field(
        default_factory=list,
        description="where the interpreter computes what no GPU would and the gate corrected it for this kernel "
        "(a bf16 dot, an fp8 conversion, a boolean splat), one line each (docs/gate.md)",
    )
    tolerance: dict[str, float] = Field(
        description="per output, tol: an element passes when |got - ref| <= atol + tol * |ref| (docs/gate.md)"
    )
    absolute_tolerance: dict[str, float] = Field(
        default_factory=dict,
        description="per output, atol = max(tol, 4 u R), at the trial of the largest R; tol where R is short",
    )
    reduction_length: dict[str, int] = Field(
        default_factory=dict,
        description="per output, R: the product of the sizes each element sums over, at its largest trial",
    )
    max_abs_error: float | None = None
    max_rel_error: float | None = Field(
        None,
        description="max of |got - ref| / (atol / tol + |ref|) (with atol = tol: relative to 1 + |ref|), the measure "
        "the tolerance bounds: passes when <= tol",
    )
    first_mismatch: Mismatch | None = None


class CorrectResult(StageResult):
    facts: CorrectFacts | None = None


class Timing(Model):
    ms_median: float
    ms_p10: float
    ms_p90: float
    trials: int


class Ceilings(Model):
    """The machine's measured limits, from the same run: what a percentage of ceiling is relative to."""

    device: str
    copy_gb_per_s: float = Field(description="device-to-device copy, bytes read plus written per second")
    gemm_fp16_tflops: float = Field(description="cuBLAS fp16 GEMM, 8192^3, via torch.matmul")
    gemm_bf16_tflops: float = Field(description="cuBLAS bf16 GEMM, 8192^3, via torch.matmul")


class LaunchTiming(Model):
    """One launch of a model, timed alone: its kernel with the arguments its launcher passed in the model's run."""

    kernel: str
    line: int = Field(description="1-based Argus line of the launch in the model")
    timing: Timing


class ProfileFacts(Model):
    sizes: dict[str, int | float]
    kernel: Timing
    flops: float = Field(description="from the IR's counts: dot and elementwise FLOPs")
    bytes: float = Field(description="from the IR's counts: the fewest bytes the kernel must move")
    tflops: float
    gb_per_s: float
    ceilings: Ceilings
    bound: str = Field(description="memory or compute: which ceiling the counts put the kernel against")
    percent_of_ceiling: float = Field(description="achieved rate over the bounding ceiling, in percent")
    percent_of_bandwidth: float
    percent_of_compute: float
    eager: Timing | None = Field(None, description="the reference as written, in eager PyTorch")
    compiled: Timing | None = Field(None, description="the reference under torch.compile")
    speedup_over_eager: float | None = None
    speedup_over_compiled: float | None = None
    notes: list[str] = Field(default_factory=list)
    launches: list[LaunchTiming] = Field(
        default_factory=list,
        description="a model's launches, each timed alone (`kernel` is then the whole model as its function runs, "
        "argument checks and temporaries included); empty for a kernel",
    )


class ProfileResult(StageResult):
    facts: ProfileFacts | None = None


class GateResult(Model):
    format: str = RESULT_FORMAT
    kernel: str = Field(description="the kernel gated, or the model")
    source_path: str | None = None
    device: str = Field(description="what it ran on: a GPU's name, or cpu")
    versions: dict[str, str] = Field(default_factory=dict, description="python, torch, triton")
    compile: CompileResult = Field(default_factory=CompileResult)
    correct: CorrectResult = Field(default_factory=CorrectResult)
    profile: ProfileResult = Field(default_factory=ProfileResult)
    errors: list[GateError] = Field(default_factory=list)
    seconds: float = Field(0.0, description="wall time of this kernel's gate run")

    @property
    def stages(self) -> dict[str, StageResult]:
        return {"compile": self.compile, "correct": self.correct, "profile": self.profile}

    @property
    def passed(self) -> bool:
        """Every stage that ran passed, none ended in an error, and at least one ran."""
        ran = [s for s in self.stages.values() if s.status != Status.skipped]
        return bool(ran) and all(s.status == Status.passed for s in ran) and not self.errors


def kernel_ms(result: GateResult | None) -> float | None:
    """The median kernel time of a result's profile; None without a profile that passed."""
    if result is None or result.profile.status != Status.passed or result.profile.facts is None:
        return None
    return result.profile.facts.kernel.ms_median


class GateRun(Model):
    """What one runner invocation writes: a result per kernel, in file order."""

    format: str = RESULT_FORMAT
    results: list[GateResult]
