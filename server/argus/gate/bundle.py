"""A gate bundle: a self-contained folder that `python3 run.py` gates on any machine with torch and triton.

kernel.py              the generated Triton module (every kernel of the file)
problem_NAME.py        per kernel or model gated: sizes, an inputs recipe, the reference (torch only)
manifest.json          per kernel or model: the Argus lines errors map back to, outputs, reductions, tolerances;
                       the source map
source.argus           the source it was made from
run.py, gate_*.py      the runner (argus/gate/runner), standard library + torch + triton
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from argus.dsl.check import CheckResult, check_source
from argus.gate.manifest import manifest, problem_file
from argus.gate.result import GateError
from argus.gate.runner import RUNNER_FILES

RUNNER_DIR = Path(__file__).resolve().parent / "runner"


@dataclass
class GateSetupError(Exception):
    """The source cannot be gated at all: it does not check, names no such kernel, or code generation failed."""

    message: str
    errors: list[GateError] = field(default_factory=list)

    def __str__(self) -> str:
        return self.message


def select_kernels(check: CheckResult, kernel: str | None) -> list[str]:
    """What to gate: `kernel` (a kernel or a model), or everything the file gates on its own (every model, and
    each kernel but those a model launches that have no reference or sizes of their own)."""
    names = [*check.analysis.kernels, *check.analysis.models]
    if kernel is None:
        if not check.analysis.gated:
            raise GateSetupError("the file has no kernel to gate")
        return list(check.analysis.gated)
    if kernel not in names:
        known = ", ".join(names) or "none"
        raise GateSetupError(f"no kernel or model named `{kernel}` in the file (it has: {known})")
    return [kernel]


def checked(source: str, check: CheckResult | None = None) -> CheckResult:
    """The check of `source` (`check` where the caller has it already), or GateSetupError when it has errors."""
    check = check if check is not None else check_source(source)
    if check.has_errors:
        # syntax first: the other errors of a file that does not parse are often its consequences
        found = sorted((d for d in check.diagnostics if d.severity.value == "error"), key=lambda d: d.code[:3] != "AR0")
        errors = [GateError(code=d.code, message=d.message, line=d.line + 1) for d in found]
        first = found[0]
        message = f"the file does not check ({len(found)} errors; first, line {first.line + 1}: {first.message})"
        raise GateSetupError(message, errors)
    return check


def write_bundle(
    source: str,
    out_dir: Path,
    *,
    path: str | None = None,
    kernel: str | None = None,
    check: CheckResult | None = None,
) -> Path:
    """Generate the modules for `kernel` (every kernel when None) and write a bundle into `out_dir`.

    `check`: the check of `source` where the caller has one (an editor's snapshot), so it is not checked again.
    Returns the path of its run.py. Raises GateSetupError when the source cannot be gated.
    """
    from argus.codegen import CodegenError, generate, generate_problem

    check = checked(source, check)
    kernels = select_kernels(check, kernel)
    try:
        generated = generate(check)
        problems = {name: generate_problem(check, name) for name in kernels}
    except CodegenError as failure:
        line = failure.span.line + 1 if failure.span is not None else None
        message = f"code generation failed: {failure}"
        raise GateSetupError(message, [GateError(code="AR501", message=message, stage="compile", line=line)]) from None
    facts = manifest(check, kernels, generated.line_map, path)
    return write_files(Path(out_dir), generated.source, problems, facts, source)


def write_files(out_dir: Path, kernel_source: str, problems: dict[str, str], facts: dict, source: str) -> Path:
    """Lay out a bundle from already generated texts (the fault tests write hand-made modules this way)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "kernel.py").write_text(kernel_source, encoding="utf-8")
    for name, text in problems.items():
        (out_dir / problem_file(name)).write_text(text, encoding="utf-8")
    (out_dir / "manifest.json").write_text(json.dumps(facts, indent=2), encoding="utf-8")
    (out_dir / "source.argus").write_text(source, encoding="utf-8")
    for name in RUNNER_FILES:
        shutil.copyfile(RUNNER_DIR / name, out_dir / name)
    return out_dir / "run.py"
