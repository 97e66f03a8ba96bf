"""A model's size sets against the kernels it launches (AR421).

A size set binds the model's sizes (R, C) and scalars; each launch maps them to its kernel's sizes through the
launch's bindings (the kernel's M is the model's R). At every set, each launched kernel must then get what its
launcher would accept: a positive value for each size, its fixed dimensions (a tile constant `D`, a number) as
declared, and every `requires` satisfied. That is AR406 for a kernel, seen through the launches.
"""

from __future__ import annotations

from argus.dsl import ast, ir
from argus.dsl.diagnostics import Diagnostic, make
from argus.dsl.evaluate import evaluate
from argus.dsl.model_ir import Launch, ModelIR
from argus.dsl.types import ScalarT, SizeExpr, TensorT
from argus.dsl.unparse import unparse


def set_values(size_set: ast.SizeSet, model: ModelIR) -> dict | None:
    """The set's values of the model's sizes and scalars (scalars at their defaults unless bound); None when it
    leaves a size unbound or a value does not evaluate (AR405 says so)."""
    env: dict = {p.name: p.default for p in model.params if isinstance(p.type, ScalarT) and p.default is not None}
    for binding in size_set.bindings:
        value = evaluate(binding.value, env)
        if value is None:
            return None
        env[binding.name] = value
    if any(not isinstance(env.get(name), int) for name in model.sizes):
        return None
    return env


def extent_value(extent: SizeExpr, env: dict) -> int:
    return (env[extent.symbol] if extent.symbol is not None else 0) + extent.offset


def kernel_values(launch: Launch, kernel: ir.KernelIR, env: dict) -> dict:
    """The launched kernel's sizes, scalars and tile constants at the model's values `env`."""
    values: dict = {name: c.value for name, c in kernel.constants.items()}
    values.update({name: extent_value(extent, env) for name, extent in launch.bindings.items()})
    for param in kernel.params:
        if not isinstance(param.type, ScalarT):
            continue
        arg = launch.arg(param.name)
        if arg is None:
            value = param.default
        elif arg.kind == "number":
            value = arg.value
        else:
            value = env.get(str(arg.value))
        if value is not None:
            values[param.name] = value
    return values


def check_model_sizes(
    sizes: ast.Sizes,
    model: ModelIR,
    kernels: dict[str, ast.Kernel],
    kernel_irs: dict[str, ir.KernelIR],
    diagnostics: list[Diagnostic],
) -> None:
    seen: set[str] = set()
    for size_set in sizes.sets:
        if size_set.name in seen:
            continue  # AR102, from the kernel-style check of the same block
        seen.add(size_set.name)
        env = set_values(size_set, model)
        if env is None:
            continue
        shown = ", ".join(f"{name}={env[name]}" for name in model.sizes)
        for launch in model.launches:
            kernel, kernel_ast = kernel_irs.get(launch.kernel), kernels.get(launch.kernel)
            if kernel is None or kernel_ast is None:
                continue
            problem = launch_problem(launch, model, kernel, kernel_ast, env)
            if problem is None:
                continue
            message, related = problem
            message = f"size set `{size_set.name}` ({shown}): {message}"
            related = [*related, (launch.span, f"the launch of `{launch.kernel}`")]
            diagnostics.append(make("AR421", size_set.name_span, message, related=related))


def launch_problem(
    launch: Launch, model: ModelIR, kernel: ir.KernelIR, kernel_ast: ast.Kernel, env: dict
) -> tuple[str, list] | None:
    """What the launch's kernel would refuse at the model's values `env`, and where it is declared; None if
    nothing."""
    values = kernel_values(launch, kernel, env)
    at = f"`{kernel.name}` at line {launch.line}"
    for name in launch.bindings:
        if values[name] < 1:
            return f"{at} would get {name} = {values[name]}; a size is at least 1", [
                (kernel_ast.name_span, "the kernel")
            ]
    params = {p.name: p for p in kernel_ast.params}
    for arg in launch.args:
        param = kernel.tensor(arg.param)
        shape = tensor_shape(model, str(arg.value)) if arg.kind == "tensor" else None
        if param is None or shape is None or not isinstance(param.type, TensorT):
            continue
        for axis, (dim, extent) in enumerate(zip(param.type.shape, shape, strict=True)):
            length = extent_value(extent, env)
            if dim.symbol is None and length != dim.offset:
                message = f"`{arg.value}` has length {length} on axis {axis}, and {at} takes {dim} = {dim.offset} there"
                return message, [(params[arg.param].span, f"`{arg.param}` of `{kernel.name}`")]
    for stmt in kernel_ast.body:
        if not isinstance(stmt, ast.Requires):
            continue
        for condition in stmt.conditions:
            if evaluate(condition, values) is False:
                given = ", ".join(f"{name}={values[name]}" for name in launch.bindings)
                message = f"{at} ({given}) violates `requires {unparse(condition)}`"
                return message, [(condition.span, f"the requirement of `{kernel.name}`")]
    return None


def tensor_shape(model: ModelIR, name: str) -> tuple[SizeExpr, ...] | None:
    """The shape, over the model's sizes, of a tensor a launch names: a parameter or a temporary."""
    param = model.tensor(name)
    if param is not None and isinstance(param.type, TensorT):
        return param.type.shape
    temporary = model.temporary(name)
    return temporary.shape if temporary is not None else None
