"""Semantic analysis of a whole file: each kernel, each model (argus.dsl.models), and the reference, inputs and
sizes blocks beside them."""

from __future__ import annotations

import ast as pyast
from dataclasses import dataclass, field

from argus.dsl import ast, ir
from argus.dsl.accuracy import check_accuracy
from argus.dsl.diagnostics import Diagnostic, make
from argus.dsl.evaluate import evaluate
from argus.dsl.kernel_analysis import KernelAnalyzer
from argus.dsl.model_ir import ModelIR
from argus.dsl.model_sizes import check_model_sizes
from argus.dsl.models import ModelAnalyzer, launched_kernels
from argus.dsl.resources import check_resources
from argus.dsl.scope import SymbolUse
from argus.dsl.types import ScalarT
from argus.dsl.unparse import unparse


@dataclass(slots=True)
class Analysis:
    kernels: dict[str, ir.KernelIR] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    symbols: list[SymbolUse] = field(default_factory=list)
    models: dict[str, ModelIR] = field(default_factory=dict)
    # What the gate runs on its own, in file order: every model, and every kernel but those a model launches
    # that have no reference or sizes of their own (the model's cover them).
    gated: list[str] = field(default_factory=list)


def analyze(module: ast.Module) -> Analysis:
    result = Analysis()
    kernels: dict[str, ast.Kernel] = {}
    for kernel in module.kernels:
        if kernel.name in kernels:
            result.diagnostics.append(make("AR102", kernel.name_span, f"kernel `{kernel.name}` is defined twice"))
            continue
        kernels[kernel.name] = kernel
        mark = len(result.diagnostics)
        try:
            result.kernels[kernel.name] = KernelAnalyzer(kernel, result.diagnostics, result.symbols).run()
        except Exception as error:  # an analyzer bug must not take down the editor
            result.diagnostics.append(make("AR216", kernel.name_span, f"internal analyzer error: {error!r}"))
        _check_resources(kernel, result, mark)
    models = _analyze_models(module, kernels, result)
    owners: dict[str, ast.Kernel | ast.Model] = {**kernels, **models}
    blocks: dict[tuple[str, str], ast.Item] = {}
    for item in module.items:
        if isinstance(item, ast.PythonBlock | ast.Sizes):
            kind = item.kind if isinstance(item, ast.PythonBlock) else "sizes"
            if item.kernel not in owners:
                message = f"`{kind} {item.kernel}` names no kernel or model in this file"
                result.diagnostics.append(make("AR105", item.kernel_span, message))
                continue
            if (kind, item.kernel) in blocks:
                message = f"`{kind} {item.kernel}` is given twice"
                result.diagnostics.append(make("AR102", item.kernel_span, message))
                continue
            blocks[(kind, item.kernel)] = item
            target: ir.KernelIR | ModelIR | None = result.kernels.get(item.kernel) or result.models.get(item.kernel)
            if target is None:
                continue
            # A parameter that did not parse may have declared an input or a size: comparing the block with
            # what is left of the header would report the parser's one error again as the block's.
            header_known = not owners[item.kernel].broken_params
            try:
                if isinstance(item, ast.PythonBlock):
                    _check_python_block(item, target, result.diagnostics, header_known)
                elif header_known:
                    _check_sizes(item, owners[item.kernel], target, result.diagnostics)
                    if isinstance(target, ModelIR):
                        check_model_sizes(item, target, kernels, result.kernels, result.diagnostics)
            except RecursionError:
                result.diagnostics.append(make("AR216", item.kernel_span, "expression nested too deeply"))
    launched = {name for model in models.values() for name in launched_kernels(model)}
    for name, owner in owners.items():
        what = "kernel" if isinstance(owner, ast.Kernel) else "model"
        covered = name in launched and (("reference", name) not in blocks or ("sizes", name) not in blocks)
        if not covered:  # a kernel a model launches is gated through the model unless it has both blocks
            _check_gate_blocks(what, name, owner, blocks, result.diagnostics)
            if name in result.kernels or name in result.models:
                result.gated.append(name)
        if isinstance(owner, ast.Kernel) and name in result.kernels:
            kernel = owner
            sizes = blocks.get(("sizes", name))
            try:  # dot precisions against the outputs' tolerances (AR219), and a reference's declared tolerance
                check_accuracy(kernel, result.kernels[name], blocks.get(("reference", name)), sizes, result.diagnostics)
            except Exception as error:  # an analyzer bug must not take down the editor
                message = f"internal accuracy-check error: {error!r}"
                result.diagnostics.append(make("AR216", kernel.name_span, message))
    result.gated.sort(key=lambda name: owners[name].span.line)
    return result


def _check_gate_blocks(
    what: str, name: str, owner: ast.Kernel | ast.Model, blocks: dict[tuple[str, str], ast.Item], diagnostics: list
) -> None:
    """AR107 and AR108: the blocks the gate needs to run an item on its own."""
    if ("reference", name) not in blocks:
        message = f"{what} `{name}` has no `reference {name}(...)`: the gate cannot check its results"
        diagnostics.append(make("AR107", owner.name_span, message))
    sizes = blocks.get(("sizes", name))
    if sizes is None:
        message = f"{what} `{name}` has no `sizes {name}:` block: the gate has no problem to run"
        diagnostics.append(make("AR108", owner.name_span, message))
    elif isinstance(sizes, ast.Sizes) and not any(s.name == "small" for s in sizes.sets):
        message = f"`sizes {name}` has no `small` set, the one the gate runs on the CPU"
        diagnostics.append(make("AR108", sizes.kernel_span, message))


def _analyze_models(module: ast.Module, kernels: dict[str, ast.Kernel], result: Analysis) -> dict[str, ast.Model]:
    """Each model, after every kernel: its launches are checked against the kernels' analyses. Kernels and
    models share one namespace."""
    names = {model.name for model in module.models}
    models: dict[str, ast.Model] = {}
    for model in module.models:
        if model.name in kernels or model.name in models:
            what = "a kernel" if model.name in kernels else "a model"
            message = f"`{model.name}` is already {what} of this file: kernels and models share one namespace"
            result.diagnostics.append(make("AR102", model.name_span, message))
            continue
        models[model.name] = model
        try:
            analyzer = ModelAnalyzer(model, kernels, result.kernels, names, result.diagnostics, result.symbols)
            result.models[model.name] = analyzer.run()
        except Exception as error:  # an analyzer bug must not take down the editor
            result.diagnostics.append(make("AR216", model.name_span, f"internal analyzer error: {error!r}"))
    return models


def _check_resources(kernel: ast.Kernel, result: Analysis, mark: int) -> None:
    """AR410 for a kernel that analyzed without errors: each configuration it may launch with fits in an sm_90
    program's shared memory (argus.dsl.resources)."""
    kernel_ir = result.kernels.get(kernel.name)
    if kernel_ir is None or any(d.severity.value == "error" for d in result.diagnostics[mark:]):
        return
    try:
        result.diagnostics.extend(check_resources(kernel, kernel_ir))
    except Exception as error:  # an estimate bug must not take down the editor
        result.diagnostics.append(make("AR216", kernel.name_span, f"internal resource-check error: {error!r}"))


def _inputs(kernel: ir.KernelIR) -> list[str]:
    """What a reference (and an inputs block) takes: every parameter that holds input data, an in/out one too."""
    return [p.name for p in kernel.params if not p.is_out or p.is_inout]


def _check_python_block(
    block: ast.PythonBlock, kernel: ir.KernelIR, diagnostics: list[Diagnostic], header_known: bool = True
) -> None:
    if header_known:
        _check_block_params(block, kernel, diagnostics)
    try:
        tree = pyast.parse(block.body)
    except SyntaxError:
        return  # already reported by the parser
    returns = [n for n in pyast.walk(tree) if isinstance(n, pyast.Return) and n.value is not None]
    if block.body.strip() and not returns:
        what = "the expected output" if block.kind == "reference" else "the inputs it generates"
        message = f"`{block.kind} {kernel.name}` must return {what}"
        diagnostics.append(make("AR111", block.kernel_span, message))


def _check_block_params(block: ast.PythonBlock, kernel: ir.KernelIR, diagnostics: list[Diagnostic]) -> None:
    expected = _inputs(kernel)
    given = [p.id for p in block.params or []]
    span = block.kernel_span if not block.params else block.params[0].span.cover(block.params[-1].span)
    if block.kind == "inputs":
        unknown = [name for name in given if name not in expected]
        if not given or unknown:
            what = f"`{unknown[0]}` is not an input of `{kernel.name}`" if unknown else "it names no parameter"
            message = f"`inputs {kernel.name}(...)` names the inputs it generates; {what}"
            diagnostics.append(make("AR106", span, message, expected=expected, given=given))
    elif given != expected:
        message = f"`reference {kernel.name}` takes the kernel's inputs in order: ({', '.join(expected)})"
        diagnostics.append(make("AR106", span, message, expected=expected, given=given))


def _check_sizes(sizes: ast.Sizes, kernel_ast: ast.Kernel, kernel: ir.KernelIR, diagnostics: list[Diagnostic]) -> None:
    scalars = {p.name: p.default for p in kernel.params if isinstance(p.type, ScalarT)}
    constants = {name: c.value for name, c in kernel.constants.items()}
    requires = [c for stmt in kernel_ast.body if isinstance(stmt, ast.Requires) for c in stmt.conditions]
    seen_sets: set[str] = set()
    for size_set in sizes.sets:
        if size_set.name in seen_sets:
            diagnostics.append(make("AR102", size_set.name_span, f"size set `{size_set.name}` is given twice"))
            continue
        seen_sets.add(size_set.name)
        env: dict = dict(constants)
        env.update({k: v for k, v in scalars.items() if v is not None})
        bound: set[str] = set()
        for binding in size_set.bindings:
            if binding.name in bound:
                diagnostics.append(make("AR102", binding.name_span, f"`{binding.name}` is bound twice"))
                continue
            bound.add(binding.name)
            if binding.name not in kernel.sizes and binding.name not in scalars:
                known = ", ".join(kernel.sizes) or "none"
                message = f"`{binding.name}` is not a size or scalar parameter of `{kernel.name}` (sizes: {known})"
                diagnostics.append(make("AR405", binding.name_span, message))
                continue
            value = evaluate(binding.value, env)
            if binding.name in kernel.sizes and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                message = f"size `{binding.name}` must be a positive integer"
                diagnostics.append(make("AR405", binding.value.span, message))
                continue
            if value is None:
                diagnostics.append(make("AR405", binding.value.span, f"`{binding.name}` needs a constant value"))
                continue
            env[binding.name] = value
        missing = [name for name in kernel.sizes if name not in bound]
        if missing:
            message = f"size set `{size_set.name}` does not bind {', '.join(missing)}"
            diagnostics.append(make("AR405", size_set.name_span, message, missing=missing))
            continue
        for condition in requires:
            if evaluate(condition, env) is False:
                values = ", ".join(f"{n}={env[n]}" for n in kernel.sizes)
                message = f"size set `{size_set.name}` ({values}) violates `requires {unparse(condition)}`"
                diagnostics.append(
                    make("AR406", size_set.name_span, message, related=[(condition.span, "the requirement")])
                )
