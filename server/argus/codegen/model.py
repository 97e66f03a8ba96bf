"""A model becomes one Python function of the generated module: it checks its arguments as a launcher does,
allocates the temporaries on the arguments' device and calls each kernel's launcher in order. Its entry in
`MODELS` is what the gate reads (docs/codegen.md, "Models")."""

from __future__ import annotations

from dataclasses import dataclass, field

from argus.codegen.body import RESERVED, Lines
from argus.codegen.dtypes import torch_dtype
from argus.codegen.errors import CodegenError
from argus.dsl import ir
from argus.dsl.model_ir import Launch, LaunchArg, ModelIR
from argus.dsl.types import ScalarT, SizeExpr, TensorT

# Names the model function itself uses, besides the module's own (MODULE_NAMES in argus.codegen.module).
FUNCTION_NAMES = {"args", "kwargs", "autotune", "check_data", "values", "sizes", "device", "run", "inputs"}


@dataclass(slots=True)
class ModelInfo:
    name: str
    params: list[dict]  # as KernelInfo's
    kernels: list[str]  # the kernels it launches, in order of first launch
    line_map: dict[int, int] = field(default_factory=dict)  # generated line -> Argus line, this model's lines


def size_text(extent: SizeExpr) -> str:
    """A model size as Python over the function's size locals: `R`, `(R + 1)`, `2`."""
    if extent.symbol is None:
        return str(extent.offset)
    if extent.offset:
        return f"({extent.symbol} {'+' if extent.offset > 0 else '-'} {abs(extent.offset)})"
    return extent.symbol


def check_model_names(model: ModelIR, kernels: dict[str, ir.KernelIR], taken: set[str], module_names: set[str]) -> None:
    """The model's names become Python names of one function that also calls the kernels' launchers by name:
    refuse what would shadow one of them, or a name the module uses."""
    if model.name in RESERVED | module_names or model.name.startswith("_") or model.name in taken:
        raise CodegenError(f"a model named `{model.name}` would shadow a name the generated module uses", model.span)
    launched = set(model.kernels)
    locals_ = [p.name for p in model.params] + list(model.sizes) + [t.name for t in model.temporaries]
    for name in locals_:
        if name in launched or name in RESERVED | module_names | FUNCTION_NAMES or name.startswith("_"):
            what = f"the kernel `{name}` it launches" if name in launched else "a name its generated function uses"
            raise CodegenError(f"`{name}` in model `{model.name}` would shadow {what}: rename it", model.span)
    if len(set(locals_)) != len(locals_):
        raise CodegenError(f"model `{model.name}` uses one name for a size and a tensor", model.span)


def parameter_specs(model: ModelIR) -> list[dict]:
    specs = []
    for param in model.params:
        if isinstance(param.type, TensorT):
            specs.append(
                {
                    "name": param.name,
                    "kind": "tensor",
                    "dtype": param.type.dtype.name,
                    "shape": [str(SizeExpr(d.symbol, d.offset)) for d in param.type.shape],
                    "out": param.is_out,
                    "default": None,
                    "dims": [(d.symbol, d.offset, None) for d in param.type.shape],
                    **({"inout": True} if param.is_inout else {}),
                }
            )
        elif isinstance(param.type, ScalarT):
            specs.append(
                {
                    "name": param.name,
                    "kind": "scalar",
                    "dtype": param.type.dtype.name,
                    "shape": [],
                    "out": False,
                    "default": param.default,
                    "dims": [],
                }
            )
    return specs


def model_info(model: ModelIR) -> ModelInfo:
    params = [{k: v for k, v in spec.items() if k != "dims"} for spec in parameter_specs(model)]
    return ModelInfo(model.name, params, model.kernels)


def argument_text(arg: LaunchArg) -> str:
    return repr(arg.value) if arg.kind == "number" else str(arg.value)


def model_lines(model: ModelIR, kernels: dict[str, ir.KernelIR]) -> Lines:
    lines = Lines()
    lines.extend(counts_lines(model, kernels))
    lines.add(0, "")
    lines.add(0, "")
    lines.extend(entry_lines(model, kernels))
    lines.add(0, "")
    lines.add(0, "")
    lines.extend(function_lines(model))
    lines.add(0, "")
    lines.add(0, "")
    lines.add(0, f'_{model.name}_model["launcher"] = {model.name}')
    return lines


def function_lines(model: ModelIR) -> Lines:
    name, header = model.name, model.span.line + 1
    lines = Lines()
    lines.add(0, f"def {name}(*args, autotune=False, check_data=True, **kwargs):", header)
    signature = ", ".join(p.name for p in model.params)
    lines.add(1, f'"""Run model `{name}({signature})`: allocate its temporaries on the arguments\' device and')
    lines.add(1, "launch its kernels in order. Checks every argument first (ArgusLaunchError). autotune=True")
    lines.add(1, 'launches each kernel\'s autotuned launcher; check_data=False skips the data facts\' checks."""')
    lines.add(1, f"values, sizes, device = _model_arguments(_{name}_model, args, kwargs)", header)
    names = [p.name for p in model.params]
    if names:
        lines.add(1, f"{', '.join(names)} = {', '.join(f'values[{n!r}]' for n in names)}")
    symbols = list(model.sizes)
    if symbols:
        lines.add(1, f"{', '.join(symbols)} = {', '.join(f'sizes[{s!r}]' for s in symbols)}")
    lines.add(1, "run = _model_runner(autotune, check_data)")
    launches = iter(model.launches)
    pending = next(launches, None)
    for temporary in model.temporaries:
        # temporaries and launches in source order, so each generated line sits beside its neighbours in Argus
        while pending is not None and pending.span.line < temporary.span.line:
            lines.add(1, launch_text(pending), pending.line)
            pending = next(launches, None)
        make = "torch.zeros" if temporary.zeroed else "torch.empty"
        shape = ", ".join(size_text(d) for d in temporary.shape) + ("," if len(temporary.shape) == 1 else "")
        text = f"{temporary.name} = {make}(({shape}), dtype={torch_dtype(temporary.dtype)}, device=device)"
        lines.add(1, text, temporary.span.line + 1)
    while pending is not None:
        lines.add(1, launch_text(pending), pending.line)
        pending = next(launches, None)
    return lines


def launch_text(launch: Launch) -> str:
    return f"run({', '.join([launch.kernel, *(argument_text(a) for a in launch.args)])})"


def entry_lines(model: ModelIR, kernels: dict[str, ir.KernelIR]) -> Lines:
    """The model's `MODELS` entry: what its function checks (through the launchers' runtime) and the gate reads."""
    name = model.name
    lines = Lines()
    lines.add(0, f"_{name}_model = {{")
    lines.add(1, f'"name": {name!r},')
    lines.add(1, '"launcher": None,  # set below, once the function is defined')
    lines.add(1, '"params": [')
    for param, spec in zip(model.params, parameter_specs(model), strict=True):
        lines.add(2, f"{spec!r},", param.span.line + 1)
    lines.add(1, "],")
    lines.add(1, f'"sizes": {list(model.sizes)!r},')
    lines.add(1, '"constants": {},  # a model has none: its kernels keep theirs')
    temporaries = [
        {"name": t.name, "dtype": t.dtype.name, "shape": [str(d) for d in t.shape], "zeroed": t.zeroed}
        for t in model.temporaries
    ]
    lines.add(1, f'"temporaries": {temporaries!r},')
    lines.add(1, '"launches": [')
    for launch in model.launches:
        record = {
            "kernel": launch.kernel,
            "line": launch.line,
            "args": {a.param: a.value for a in launch.args},
            "sizes": {k: [v.symbol, v.offset] for k, v in launch.bindings.items()},
        }
        lines.add(2, f"{record!r},", launch.line)
    lines.add(1, "],")
    lines.add(1, f'"kernels": {model.kernels!r},')
    lines.add(1, f'"counts": _{name}_counts,')
    lines.add(0, "}")
    return lines


def counts_lines(model: ModelIR, kernels: dict[str, ir.KernelIR]) -> Lines:
    """`_NAME_counts(*, sizes, scalars=defaults, inputs=None) -> {"flops", "bytes"}`: the sum over the launches
    of each kernel's counts at the sizes the launch gives it. Bytes count every launch's tensors, temporaries
    included: what the launches move between them."""
    name = model.name
    scalars = [p for p in model.params if isinstance(p.type, ScalarT)]
    arguments = [*model.sizes, *(p.name if p.default is None else f"{p.name}={p.default!r}" for p in scalars)]
    lines = Lines()
    lines.add(0, f"def _{name}_counts(*, {', '.join([*arguments, 'inputs=None'])}):")
    lines.add(1, f'"""Work of one `{name}` run: the sum of its launches\' counts."""')
    lines.add(1, "flops = moved = 0")
    for launch in model.launches:
        kernel = kernels[launch.kernel]
        given = [f"{symbol}={size_text(extent)}" for symbol, extent in launch.bindings.items()]
        given += [f"{a.param}={argument_text(a)}" for a in launch.args if a.kind != "tensor"]
        tensors = {a.param: str(a.value) for a in launch.args if a.kind == "tensor" and model.tensor(str(a.value))}
        given.append(f"inputs=_model_inputs(inputs, {tensors!r})")
        missing = [s for s in kernel.sizes if s not in launch.bindings]
        if missing:  # every kernel size is bound by a tensor argument; a gap is a bug upstream
            raise CodegenError(f"launch of `{launch.kernel}` leaves {', '.join(missing)} unbound", launch.span)
        lines.add(1, f"counts = _{launch.kernel}_counts({', '.join(given)})", launch.line)
        lines.add(1, 'flops, moved = flops + counts["flops"], moved + counts["bytes"]')
    lines.add(1, 'return {"flops": int(flops), "bytes": int(moved)}')
    return lines
