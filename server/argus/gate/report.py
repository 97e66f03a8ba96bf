"""GateResults as text for a terminal: a header per kernel, one line per stage, errors in the compiler style."""

from __future__ import annotations

from argus.gate.result import GateResult, Status

MARKS = {Status.passed: "✓", Status.failed: "✗", Status.error: "✗", Status.skipped: "–"}


def _bytes(n: int | None) -> str:
    if n is None:
        return "?"
    return f"{n / 1024:.1f} KiB" if n >= 1024 else f"{n} B"


def _number(x: float | None) -> str:
    return "?" if x is None else f"{x:.3g}"


def sizes_text(sizes: dict[str, int]) -> str:
    """`M=96, N=80, K=128`, not a dict's repr."""
    return ", ".join(f"{name}={value}" for name, value in sizes.items())


def element_text(output: str, index: list[int]) -> str:
    """`C[0, 3]`: an output's element as the kernel's code indexes it."""
    return f"{output}[{', '.join(str(i) for i in index)}]"


def compile_line(result: GateResult) -> str:
    facts = result.compile.facts
    if facts is None:
        return result.compile.message
    if facts.launches:
        spills = (facts.spill_stores_bytes or 0) + (facts.spill_loads_bytes or 0)
        return (
            f"{facts.target}: {len(facts.launches)} launches, at most {facts.registers} registers, "
            f"{_bytes(spills)} spilled, {_bytes(facts.shared_memory_bytes)} shared memory"
        )
    spills = (facts.spill_stores_bytes or 0) + (facts.spill_loads_bytes or 0)
    config = ", ".join(f"{k}={v}" for k, v in facts.config.items())
    return (
        f"{facts.target}: {facts.registers if facts.registers is not None else '?'} registers, "
        f"{_bytes(spills)} spilled, {_bytes(facts.shared_memory_bytes)} shared memory ({config})"
    )


def config_lines(result: GateResult) -> list[str]:
    """Under the compile line: each other configuration the autotuner may pick that was compiled, and the
    warnings (spills)."""
    facts = result.compile.facts
    if facts is None:
        return []
    lines = []
    for launch in facts.launches:
        spills = (launch.spill_stores_bytes or 0) + (launch.spill_loads_bytes or 0)
        config = ", ".join(f"{k}={v}" for k, v in launch.config.items())
        lines.append(
            f"             {launch.kernel} (line {launch.line}): {launch.registers} registers, {_bytes(spills)} "
            f"spilled, {_bytes(launch.shared_memory_bytes)} shared memory ({config})"
        )
    if facts.configs:
        lines.append(
            f"             of the autotuner's {facts.autotune_configs} configurations, also compiled (the largest "
            "estimated shared memory first):"
        )
    for config in facts.configs:
        values = ", ".join(f"{k}={v}" for k, v in config.config.items())
        if config.shared_memory_bytes is None:
            lines.append(f"             {MARKS[config.status]} {values}: {config.message}")
            continue
        spills = (config.spill_stores_bytes or 0) + (config.spill_loads_bytes or 0)
        lines.append(
            f"             {MARKS[config.status]} {values}: {_bytes(config.shared_memory_bytes)} shared memory "
            f"(estimated {_bytes(config.estimated_shared_memory_bytes)}), {config.registers} registers, "
            f"{_bytes(spills)} spilled"
        )
    lines += [f"             warning: {w}" for w in facts.warnings]
    return lines


def correct_line(result: GateResult) -> str:
    facts = result.correct.facts
    if facts is None:
        return result.correct.message
    where = "interpreter" if facts.interpreter else "GPU"
    tolerance = ", ".join(tolerance_text(facts, name, tol) for name, tol in facts.tolerance.items())
    sizes = list(dict.fromkeys(sizes_text(s) for s in facts.sizes))
    at = f" at {'; '.join(sizes)}" if sizes else ""
    text = (
        f"{facts.trials} trial{'s' if facts.trials != 1 else ''} on the {where}{at} (seeds {facts.seeds[0]}..), "
        f"max abs err "
        f"{_number(facts.max_abs_error)}, max rel err {_number(facts.max_rel_error)} (tolerance {tolerance})"
    )
    if facts.first_mismatch is not None:
        m = facts.first_mismatch
        text += f"; first mismatch {element_text(m.output, m.index)}: got {m.got}, expected {m.expected}"
    return text


def tolerance_text(facts, name: str, tol: float) -> str:
    """`C 0.0001`, and where the output's reduction length grew the absolute part: `C 0.0001 (absolute 0.00098 at
    R = 4096)`."""
    atol = facts.absolute_tolerance.get(name, tol)
    if atol == tol:
        return f"{name} {tol:g}"
    return f"{name} {tol:g} (absolute {atol:.2g} at R = {facts.reduction_length.get(name, '?')})"


def correction_lines(result: GateResult) -> list[str]:
    """Under the correct line: each wrong result of the Triton interpreter the gate corrected for this kernel."""
    facts = result.correct.facts
    if facts is None:
        return []
    return [f"             interpreter corrected: {note}" for note in facts.interpreter_corrections]


def profile_line(result: GateResult) -> str:
    facts = result.profile.facts
    if facts is None:
        return result.profile.message
    text = (
        f"{facts.kernel.ms_median:.3f} ms (p10 {facts.kernel.ms_p10:.3f}, p90 {facts.kernel.ms_p90:.3f}, "
        f"{facts.kernel.trials} trials), {facts.tflops:.1f} TFLOP/s, {facts.gb_per_s:.0f} GB/s, "
        f"{facts.percent_of_ceiling:.0f}% of the {facts.bound} ceiling at {sizes_text(facts.sizes)}"
    )
    if facts.speedup_over_eager is not None:
        text += f", {facts.speedup_over_eager:.2f}x eager"
    if facts.speedup_over_compiled is not None:
        text += f", {facts.speedup_over_compiled:.2f}x torch.compile"
    return text


def launch_timing_lines(result: GateResult) -> list[str]:
    """Under a model's profile line: each launch timed alone."""
    facts = result.profile.facts
    if facts is None:
        return []
    return [
        f"             {launch.kernel} (line {launch.line}) alone: {launch.timing.ms_median:.3f} ms"
        for launch in facts.launches
    ]


def render(result: GateResult, path: str | None = None) -> str:
    where = path or result.source_path or "<source>"
    versions = ", ".join(f"{k} {v}" for k, v in result.versions.items() if k != "python")
    lines = [f"{where}: {result.kernel or '(no kernel)'} on {result.device}" + (f" ({versions})" if versions else "")]
    for name, stage, describe in (
        ("compile", result.compile, compile_line),
        ("correct", result.correct, correct_line),
        ("profile", result.profile, profile_line),
    ):
        detail = describe(result) if stage.status != Status.skipped else f"skipped: {stage.message}"
        timing = f" ({stage.seconds:.1f} s)" if stage.seconds else ""
        lines.append(f"  {MARKS[stage.status]} {name:<8} {detail}{timing}")
        if name == "compile":
            lines += config_lines(result)
        if name == "correct":
            lines += correction_lines(result)
        if name == "profile":
            lines += launch_timing_lines(result)
    for error in result.errors:
        line = error.line if error.line is not None else 1
        lines.append(f"{where}:{line}:{error.column or 1}: error[{error.code}]: {error.message}")
    verdict = "passed" if result.passed else "did not pass"
    lines.append(f"  {result.kernel or 'gate'}: {verdict} in {result.seconds:.1f} s")
    return "\n".join(lines)
