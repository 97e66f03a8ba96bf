"""The compile stage: Triton compilation of one kernel for an sm_90 target, which needs no GPU.

The launcher decides the kernel's arguments (strides, sizes, constants, num_warps), so we run it once with the
jit function swapped for a recorder, then hand what it passed to triton.compile for the target. ptxas' own
report (TRITON_DUMP_PTXAS_LOG, printed while compiling into a fresh cache) gives registers and spills; the
compiled metadata gives shared memory. Runs without TRITON_INTERPRET, which would replace triton.jit.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import tempfile
import textwrap

from gate_common import (
    Bundle,
    Phases,
    StageStop,
    argus_line,
    error,
    exception_text,
    launch,
    one_line,
    progress,
    stage_record,
    stopped,
)

# What one sm_90 program may use (227 KiB, cudaFuncAttributeMaxDynamicSharedMemorySize on an H100 or H200).
SM90_SHARED_MEMORY_BYTES = 232448
RUN_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


class LaunchRecorder:
    """Stands in for a @triton.jit function: `kernel[grid](*args, **kwargs)` records instead of launching."""

    def __init__(self, jit) -> None:
        self.jit = jit
        self.calls: list[tuple[object, tuple, dict]] = []  # (grid, args, kwargs)

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            self.calls.append((grid, args, kwargs))

        return launch

    def run(self, *args, grid=None, warmup=False, **kwargs):
        self.calls.append((grid, args, kwargs))

    def __getattr__(self, name):
        return getattr(self.jit, name)


class InterpretedFunction(LaunchRecorder):
    """The recorder under the name generated launchers accept CPU tensors for (the Triton interpreter's): it
    launches nothing, so the compile stage can record a launch on the CPU without a GPU or the interpreter."""


def record_launch(module, kernel: str, inputs: dict) -> tuple[object, tuple, dict]:
    """(grid, args, kwargs) the launcher passes to its jit function for these inputs, launching nothing."""
    entry = module.KERNELS[kernel]
    jit = entry["jit"]
    names = [name for name, value in vars(module).items() if value is jit]
    recorder = InterpretedFunction(jit)
    entry["jit"] = recorder
    for name in names:
        setattr(module, name, recorder)
    try:
        launch(entry, inputs)
    finally:
        entry["jit"] = jit
        for name in names:
            setattr(module, name, jit)
    if not recorder.calls:
        raise RuntimeError(f"the launcher of `{kernel}` never launched its kernel")
    return recorder.calls[0]


TRITON_DTYPES = {
    "float16": "fp16",
    "bfloat16": "bf16",
    "float32": "fp32",
    "float64": "fp64",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "uint8": "u8",
    "bool": "i1",
    "float8_e4m3fn": "fp8e4nv",
    "float8_e5m2": "fp8e5",
}


def argument_type(value) -> str:
    import torch

    if isinstance(value, torch.Tensor):
        return "*" + TRITON_DTYPES[str(value.dtype).removeprefix("torch.")]
    if isinstance(value, bool):
        return "i1"
    if isinstance(value, int):
        return "i32" if -(2**31) <= value < 2**31 else "i64"
    if isinstance(value, float):
        return "fp32"
    raise TypeError(f"cannot pass {type(value).__name__} to a Triton kernel")


def divisible_by_16(value) -> bool:
    """What the JIT specializes on: 16-byte aligned pointers and integers divisible by 16."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.data_ptr() % 16 == 0
    return isinstance(value, int) and not isinstance(value, bool) and value % 16 == 0


def compile_request(jit, args: tuple, kwargs: dict):
    """ASTSource arguments (signature, constexprs, attrs) and compile options from one recorded launch."""
    bound = dict(zip(jit.arg_names, args, strict=False))
    bound.update({k: v for k, v in kwargs.items() if k in jit.arg_names})
    options = {k: v for k, v in kwargs.items() if k in RUN_OPTIONS and v is not None}
    signature, constexprs, attrs = {}, {}, {}
    for index, param in enumerate(jit.params):
        name = param.name
        if param.is_constexpr:
            signature[name] = "constexpr"
            constexprs[(index,)] = bound.get(name, param.default)
            continue
        value = bound[name]
        signature[name] = argument_type(value)
        if divisible_by_16(value):
            attrs[(index,)] = [["tt.divisibility", 16]]
    return signature, constexprs, attrs, options


PTXAS_NUMBERS = {
    "registers": re.compile(r"Used (\d+) registers"),
    "stack_frame_bytes": re.compile(r"(\d+) bytes stack frame"),
    "spill_stores_bytes": re.compile(r"(\d+) bytes spill stores"),
    "spill_loads_bytes": re.compile(r"(\d+) bytes spill loads"),
}


def ptxas_facts(log: str) -> dict:
    facts = {}
    for key, pattern in PTXAS_NUMBERS.items():
        found = pattern.findall(log)
        facts[key] = max(int(n) for n in found) if found else None
    return facts


def function_def_lines(module) -> dict[str, int]:
    """Each jit function's source text (as Triton holds it) mapped to the file line of its `def`."""
    import inspect

    found = {}
    for value in vars(module).values():
        fn = getattr(value, "fn", None)
        src = getattr(value, "src", None)
        if fn is None or src is None:
            continue
        try:
            lines, start = inspect.getsourcelines(fn)
        except (OSError, TypeError):
            continue
        offset = next((i for i, line in enumerate(lines) if line.lstrip().startswith("def ")), 0)
        found[src] = start + offset
        found[textwrap.dedent("".join(lines[offset:]))] = start + offset
    return found


def compile_error_line(exc: BaseException, module) -> int | None:
    """The generated line a Triton CompilationError points at: the innermost one inside kernel.py."""
    defs = function_def_lines(module)
    found = None
    while exc is not None:
        node, src = getattr(exc, "node", None), getattr(exc, "src", None)
        if src in defs and getattr(node, "lineno", None):
            found = defs[src] + node.lineno - 1
        exc = exc.__cause__ or exc.__context__
    return found


def compile_error_message(exc: BaseException) -> str:
    inner = exc
    while inner.__cause__ is not None:
        inner = inner.__cause__
    message = getattr(inner, "error_message", None) or getattr(exc, "error_message", None)
    return one_line(str(message)) if message else one_line(exception_text(exc).splitlines()[-1])


def target_for(device: str):
    from triton.backends.compiler import GPUTarget

    if device == "cuda":
        import torch

        major, minor = torch.cuda.get_device_capability()
        properties = torch.cuda.get_device_properties(torch.cuda.current_device())
        limit = getattr(properties, "shared_memory_per_block_optin", SM90_SHARED_MEMORY_BYTES)
        return GPUTarget("cuda", major * 10 + minor, 32), limit
    return GPUTarget("cuda", 90, 32), SM90_SHARED_MEMORY_BYTES


def compile_for_target(jit, target, args: tuple, kwargs: dict):
    """Without a GPU: what the JIT would compile for these arguments (its own specialization: 16-divisible
    integers and aligned pointers, integers equal to 1 as constants), compiled for `target`. Triton versions
    whose JIT internals differ get the nearest approximation, compile_request's."""
    import triton
    from triton.compiler import ASTSource

    try:
        from triton.compiler import make_backend
        from triton.runtime.jit import create_function_from_signature

        backend = make_backend(target)
        binder = create_function_from_signature(jit.signature, jit.params, backend)
        bound, specialization, options = binder(*args, **kwargs)
        packed, signature, constexprs, attrs = jit._pack_args(backend, options, bound, specialization, options)
        options = packed.__dict__
    except (ImportError, AttributeError, TypeError, ValueError):
        signature, constexprs, attrs, options = compile_request(jit, args, kwargs)
    return triton.compile(ASTSource(jit, signature, constexprs, attrs), target=target, options=options)


def compile_with_jit(jit, grid, args: tuple, kwargs: dict):
    """On a GPU, the real path: the JIT specializes on the actual arguments, compiles, and loads the module
    (which is where Triton refuses a kernel that needs more shared memory than the GPU has)."""
    compiled = jit.warmup(*args, grid=grid, **kwargs)
    load = getattr(compiled, "_init_handles", None)
    if load is not None:
        load()
    return compiled


def run_compile(bundle: Bundle, kernel: str, device: str) -> dict:
    try:
        return compile_kernel(Phases(bundle, kernel, "compile"), device)
    except StageStop as stop:
        return stopped(stop)


def compile_kernel(phases: Phases, device: str) -> dict:
    import triton

    kernel = phases.kernel
    module, problem, entry = phases.load()
    inputs = phases.run("inputs", problem.make_inputs, problem.SIZES["small"], 0, device)
    grid, args, kwargs = phases.run("launch", record_launch, module, kernel, inputs)
    options = {k: v for k, v in kwargs.items() if k in RUN_OPTIONS and v is not None}
    target, shared_limit = target_for(device)
    arch = f"sm_{target.arch}"
    how = "Triton's JIT" if device == "cuda" else "triton.compile, no GPU"
    progress(f"{kernel}: compiling for {arch} ({how})")
    log = io.StringIO()
    os.environ["TRITON_DUMP_PTXAS_LOG"] = "1"
    try:
        with tempfile.TemporaryDirectory(prefix="argus-triton-cache-") as cache:
            os.environ["TRITON_CACHE_DIR"] = cache  # a fresh cache, so ptxas runs and prints its report
            with contextlib.redirect_stdout(log):
                if device == "cuda":
                    compiled = compile_with_jit(entry["jit"], grid, args, kwargs)
                else:
                    compiled = compile_for_target(entry["jit"], target, args, kwargs)
    except Exception as exc:
        generated = compile_error_line(exc, module)
        line = argus_line(phases.kernel_source_map, generated) or phases.facts["line"]
        message = f"Triton cannot compile `{kernel}` for {arch}: {compile_error_message(exc)}"
        record = error("AR501", message, "compile", line, detail=exception_text(exc), generated_line=generated)
        return stage_record("failed", message, None, [record])
    shared = int(getattr(compiled.metadata, "shared", 0) or 0)
    constants = {k: v for k, v in kwargs.items() if k in entry.get("constants", {})}
    facts = {
        "target": arch,
        "triton_version": triton.__version__,
        "config": {**constants, **options},
        "shared_memory_bytes": shared,
        **ptxas_facts(log.getvalue()),
    }
    if shared > shared_limit:
        message = f"`{kernel}` needs {shared} bytes of shared memory; {arch} allows {shared_limit} per program"
        record = error("AR501", message, "compile", phases.facts["line"])
        return stage_record("failed", message, facts, [record])
    return stage_record("passed", "", facts)
