"""What the runner needs to know about each kernel (and model) that only the Argus analysis knows: the lines errors map
back to, which outputs accumulate, what each output sums over and the tolerances a reference declares (the
tolerance rule, docs/gate.md). Written as manifest.json beside the generated modules, so the runner (torch and
triton only) never needs argus.
"""

from __future__ import annotations

from argus.dsl import ast, ir
from argus.dsl.accuracy import declared_tolerances, model_reductions, reduction_factors
from argus.dsl.atomics import WRITES, accumulated_outputs
from argus.dsl.check import CheckResult
from argus.gate.resources import resource_facts

MANIFEST_FORMAT = "argus-gate-bundle/1"


def problem_file(kernel: str) -> str:
    return f"problem_{kernel}.py"


def kernel_facts(check: CheckResult, name: str) -> dict:
    """Lines are 1-based. `outputs` maps each out parameter to its first store: a wrong value is reported there.
    `reductions` gives each output's reduction factors (size symbols, or numbers for tile constants: R is their
    product at a trial's sizes); `tolerances` the tol its reference declares, where it declares one.
    `accumulated_outputs` lists the outputs atomics write, `accumulated_starts` where each starts ("zero",
    "lowest" for atomic_max, "highest" for atomic_min: argus.dsl.atomics)."""
    kernel = check.analysis.kernels[name]
    outputs: dict[str, int] = {}
    inouts = {p.name for p in kernel.params if p.is_inout}  # they accumulate onto their input value: not zeroed
    starts = {k: v for k, v in accumulated_outputs(kernel.body).items() if k not in inouts}
    dot_dtype = None
    for op in ir.walk_ops(kernel.body):
        if op.kind in WRITES:
            outputs.setdefault(op.attrs["tensor"], op.span.line + 1)
        elif op.kind == "dot":
            dot_dtype = dot_dtype or str(op.operands[0].type.dtype)
    facts = {
        "line": kernel.span.line + 1,
        "problem": problem_file(name),
        "outputs": {p.name: outputs.get(p.name) for p in kernel.params if p.is_out},
        "accumulated_outputs": list(starts),
        "accumulated_starts": starts,
        "dot_dtype": dot_dtype,
        "reductions": reduction_factors(kernel),
        "tolerances": {},
    }
    for item in check.module.items:
        if isinstance(item, ast.PythonBlock) and item.kernel == name:
            facts[f"{item.kind}_line"] = item.kernel_span.line + 1
            if item.kind == "reference":
                facts["tolerances"] = declared_tolerances(item, kernel)
    facts["resources"] = resource_facts(check, name)  # the configurations the compile stage checks
    return facts


def model_facts(check: CheckResult, name: str) -> dict:
    """A model's entry, shaped like a kernel's: `outputs` maps each out parameter to the line of the last launch
    that writes it; `reductions` gives each output the terms of its reduction length (R is their sum: a chain
    of launches adds their errors); `launches` the kernel and line of each launch, in order, which the compile
    stage compiles one by one."""
    model = check.analysis.models[name]
    kernels = check.analysis.kernels
    outputs: dict[str, int] = {}
    starts: dict[str, str] = {}  # a model output an atomic writes -> where it starts (argus.dsl.atomics)
    dot_dtype = None
    for launch in model.launches:
        kernel = kernels[launch.kernel]
        inouts = {p.name for p in kernel.params if p.is_inout}  # an in/out one adds onto what it holds
        atomic = {k: v for k, v in accumulated_outputs(kernel.body).items() if k not in inouts}
        for arg in launch.args:
            if arg.kind == "tensor" and kernel.tensor(arg.param) is not None and arg.param in kernel_outputs(kernel):
                outputs[str(arg.value)] = launch.line
                if arg.param in atomic and model.tensor(str(arg.value)):
                    starts.setdefault(str(arg.value), atomic[arg.param])
        dot_dtype = dot_dtype or next(
            (str(op.operands[0].type.dtype) for op in ir.walk_ops(kernel.body) if op.kind == "dot"), None
        )
    facts = {
        "line": model.span.line + 1,
        "problem": problem_file(name),
        "model": True,
        "outputs": {p.name: outputs.get(p.name) for p in model.params if p.is_out},
        "accumulated_outputs": list(starts),
        "accumulated_starts": starts,
        "dot_dtype": dot_dtype,
        "reductions": model_reductions(model, kernels),
        "tolerances": {},
        "launches": [{"kernel": launch.kernel, "line": launch.line} for launch in model.launches],
    }
    for item in check.module.items:
        if isinstance(item, ast.PythonBlock) and item.kernel == name:
            facts[f"{item.kind}_line"] = item.kernel_span.line + 1
            if item.kind == "reference":
                facts["tolerances"] = declared_tolerances(item, model)
    facts["resources"] = {}  # each launch compiles in its declared configuration (docs/gate.md, "Models")
    return facts


def kernel_outputs(kernel: ir.KernelIR) -> set[str]:
    return {p.name for p in kernel.params if p.is_out}


def item_facts(check: CheckResult, name: str) -> dict:
    return model_facts(check, name) if name in check.analysis.models else kernel_facts(check, name)


def manifest(check: CheckResult, kernels: list[str], source_map: dict[int, int], path: str | None) -> dict:
    return {
        "format": MANIFEST_FORMAT,
        "source_path": path,
        "kernels": {name: item_facts(check, name) for name in kernels},
        "source_map": {str(k): v for k, v in source_map.items()},
    }
