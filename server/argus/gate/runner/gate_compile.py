"""The compile stage: Triton compilation of one kernel for an sm_90 target, which needs no GPU.

The launcher decides the kernel's arguments (strides, sizes, constants, num_warps), so we run it once with the
jit function swapped for a recorder, then hand what it passed to triton.compile for the target. ptxas' own
report (TRITON_DUMP_PTXAS_LOG, printed while compiling into a fresh cache) gives registers and spills; the
compiled metadata gives shared memory. Runs without TRITON_INTERPRET, which would replace triton.jit.

Every compile is specialized as a launch at sizes and strides divisible by 16 would be (the `large` sizes, and
the most shared memory any launch needs: misaligned operands are not pipelined through shared memory), with the
TMA path when the policy asks for it. After the declared configuration come the others the autotuner may pick
(the manifest's `resources`: argus.dsl.resources' estimates, largest first), up to `--compile-configs` of them
within half the stage's time; one over the limit is AR410 at the tune value that brought it, one Triton refuses
AR501, and a configuration that spills registers is a warning.

A model is compiled launch by launch: its function runs once at the `small` sizes with every launched kernel's
jit function swapped for a recorder, and each recorded launch is compiled as a kernel's declared configuration
is. Its facts are the worst of the launches, and each launch's own.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import tempfile
import textwrap
import time

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


def record_launch(module, kernel: str, inputs: dict, overrides: dict | None = None) -> tuple[object, tuple, dict]:
    """(grid, args, kwargs) the launcher passes to its jit function for these inputs (and tile constants or
    policy settings overridden), launching nothing."""
    entry = module.KERNELS[kernel]
    jit = entry["jit"]
    names = [name for name, value in vars(module).items() if value is jit]
    recorder = InterpretedFunction(jit)
    entry["jit"] = recorder
    for name in names:
        setattr(module, name, recorder)
    try:
        launch(entry, inputs, overrides)
    finally:
        entry["jit"] = jit
        for name in names:
            setattr(module, name, jit)
    if not recorder.calls:
        raise RuntimeError(f"the launcher of `{kernel}` never launched its kernel")
    return recorder.calls[0]


class ModelRecorder(LaunchRecorder):
    """One launched kernel's stand-in while a model runs: each launch goes, with the kernel's name, onto a list
    the model's launches share, in order; with `launching`, the real jit function runs it too."""

    def __init__(self, jit, kernel: str, calls: list, launching: bool) -> None:
        super().__init__(jit)
        self.kernel, self.calls, self.launching = kernel, calls, launching

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            self.calls.append((self.kernel, grid, args, kwargs))
            if self.launching:
                self.jit[grid](*args, **kwargs)

        return launch


ModelRecorder.__name__ = "InterpretedFunction"  # the name launchers accept CPU tensors for (InterpretedFunction)


def record_model_launches(module, entry: dict, inputs: dict, launching: bool = False) -> list[tuple]:
    """[(kernel, grid, args, kwargs)] of each launch the model's function makes for these inputs, in order.
    Without `launching` nothing runs, so the data facts' checks (which would read temporaries no kernel wrote)
    are skipped."""
    calls: list[tuple] = []
    swapped = []
    for kernel in entry["kernels"]:
        kernel_entry = module.KERNELS[kernel]
        jit = kernel_entry["jit"]
        names = [name for name, value in vars(module).items() if value is jit]
        recorder = ModelRecorder(jit, kernel, calls, launching)
        kernel_entry["jit"] = recorder
        for name in names:
            setattr(module, name, recorder)
        swapped.append((kernel_entry, jit, names))
    try:
        launch(entry, inputs, None if launching else {"check_data": False})
    finally:
        for kernel_entry, jit, names in swapped:
            kernel_entry["jit"] = jit
            for name in names:
                setattr(module, name, jit)
    return calls


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
    failure = getattr(exc, "compiler_failure", "")
    if failure:
        return failure
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


DEFAULT_CONFIGS = 8  # configurations compiled per kernel, the declared one included (run.py --compile-configs)


def aligned(args: tuple) -> tuple:
    """The launch's arguments as at sizes and strides divisible by 16: every integer but 1 (a unit stride, or a
    size the JIT makes a constant) times 16. It only changes how the JIT specializes: nothing runs."""
    return tuple(
        16 * a if isinstance(a, int) and not isinstance(a, bool) and a != 1 and abs(16 * a) < 2**31 else a for a in args
    )


def worst_case(entry: dict, args: tuple, kwargs: dict, config: dict) -> tuple[tuple, dict]:
    """What a launch at the large sizes compiles: aligned arguments, and the TMA path where the policy asks for
    it (the launcher takes the pointer path when small tensors' strides are not 16-byte aligned)."""
    kwargs = dict(kwargs)
    if "ARGUS_TMA" in kwargs:
        kwargs["ARGUS_TMA"] = int(bool(config.get("tma", entry.get("policy", {}).get("tma", 0))))
    return aligned(args), kwargs


def compile_launch(entry: dict, target, device: str, grid, args: tuple, kwargs: dict):
    """(the compiled kernel, ptxas' facts) of one recorded launch, compiled into a fresh cache. A failure
    inside one of Triton's own passes carries `compiler_failure`, what compile_error_message says."""
    log = io.StringIO()
    native: list[str] = []
    # a Gluon kernel's dispatcher (policy epilogue_warps) compiles its Triton lowering here; the Gluon kernel
    # itself is compiled where it launches, on an sm_90 GPU
    kwargs = {k: v for k, v in kwargs.items() if k != "epilogue_warps"}
    os.environ["TRITON_DUMP_PTXAS_LOG"] = "1"
    try:
        with tempfile.TemporaryDirectory(prefix="argus-triton-cache-") as cache:
            os.environ["TRITON_CACHE_DIR"] = cache  # a fresh cache, so ptxas runs and prints its report
            with contextlib.redirect_stdout(log), native_stderr(native):
                if device == "cuda":
                    compiled = compile_with_jit(entry["jit"], grid, args, kwargs)
                else:
                    compiled = compile_for_target(entry["jit"], target, args, kwargs)
    except Exception as exc:
        failure = pass_failure("".join(native))
        if failure:
            exc.compiler_failure = failure
        raise
    return compiled, ptxas_facts(log.getvalue())


FAILED_PASS = re.compile(r"Pipeline failed while executing \[`(\w+)`")
FAILED_ASSERTION = re.compile(r"Assertion `(.+?)' failed")


def pass_failure(native: str) -> str:
    """What a failure inside Triton's MLIR pipeline was, from what its C++ wrote (Python sees only
    `PassManager::run failed`): the pass and the assertion, said to be the compiler's fault, or ""."""
    found = FAILED_PASS.search(native)
    if found is None:
        return ""
    import triton

    assertion = FAILED_ASSERTION.search(native)
    what = f" (assertion `{assertion.group(1)}`)" if assertion else ""
    return (
        f"Triton's own {found.group(1)} pass failed{what}: a fault inside the compiler (triton {triton.__version__}),"
        " not an error the kernel makes; another Triton version, or other policy or tile values, may compile it"
    )


@contextlib.contextmanager
def native_stderr(into: list[str]):
    """Collect what C++ code writes to file descriptor 2 while the block runs (an MLIR pass that fails names
    itself and its assertion there, not in the Python exception) into `into`, and write it on to stderr."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            captured.seek(0)
            text = captured.read().decode("utf-8", errors="replace")
            into.append(text)
            sys.stderr.write(text)
            sys.stderr.flush()


OUT_OF_SHARED_MEMORY = re.compile(r"shared memory, Required: (\d+), Hardware limit: (\d+)")


def out_of_shared_memory(exc: BaseException) -> tuple[int, int] | None:
    """(required, limit) of Triton's OutOfResources for shared memory, which loading a module on a GPU raises;
    None for any other failure."""
    while exc is not None:
        found = OUT_OF_SHARED_MEMORY.search(str(exc)) if type(exc).__name__ == "OutOfResources" else None
        if found:
            return int(found.group(1)), int(found.group(2))
        exc = exc.__cause__ or exc.__context__
    return None


def config_text(config: dict) -> str:
    return ", ".join(f"{name}={value}" for name, value in config.items())


def spill_warning(what: str, facts: dict) -> str | None:
    stores, loads = facts.get("spill_stores_bytes") or 0, facts.get("spill_loads_bytes") or 0
    if not (stores or loads):
        return None
    return (
        f"{what} spills registers: {stores} bytes of spill stores, {loads} of spill loads "
        f"({facts.get('registers')} registers a thread)"
    )


def tune_blame(resources: dict, declared: dict, config: dict) -> list[tuple[str, object, list]]:
    """(setting, value, [value, line, column, end column]) of each tune value where `config` differs from the
    declared configuration."""
    found = []
    for name, value in config.items():
        if value == declared.get(name):
            continue
        for entry in resources.get("tune_spans", {}).get(name, []):
            if entry[0] == value and type(entry[0]) is type(value):
                found.append((name, value, entry))
                break
    return found


def run_compile(bundle: Bundle, kernel: str, device: str, max_configs: int = DEFAULT_CONFIGS,
                budget_s: float | None = None) -> dict:  # fmt: skip
    try:
        if bundle.is_model(kernel):
            return compile_model(Phases(bundle, kernel, "compile"), device)
        return compile_kernel(Phases(bundle, kernel, "compile"), device, max_configs, budget_s)
    except StageStop as stop:
        return stopped(stop)


WORST = ("shared_memory_bytes", "registers", "spill_stores_bytes", "spill_loads_bytes", "stack_frame_bytes")


def compile_model(phases: Phases, device: str) -> dict:
    """Each launch of a model compiled as its kernel's launcher passed it while the model ran at `small`."""
    import triton

    model = phases.kernel
    module, problem, entry = phases.load()
    inputs = phases.run("inputs", problem.make_inputs, problem.SIZES["small"], 0, device)
    calls = phases.run("launch", record_model_launches, module, entry, inputs)
    target, shared_limit = target_for(device)
    arch = f"sm_{target.arch}"
    lines = [launch["line"] for launch in phases.facts.get("launches", [])]
    facts = {"target": arch, "triton_version": triton.__version__, "config": {}, **dict.fromkeys(WORST),
             "autotune_configs": 0, "configs": [], "warnings": [], "launches": []}  # fmt: skip
    errors = []
    for index, (kernel, grid, args, kwargs) in enumerate(calls):
        kernel_entry = module.KERNELS[kernel]
        line = lines[index] if index < len(lines) else phases.facts["line"]
        progress(f"{model}: compiling launch {index + 1} of {len(calls)}, {kernel} (line {line}), for {arch}")
        began = time.perf_counter()
        try:
            compiled, ptxas = compile_launch(
                kernel_entry, target, device, grid, *worst_case(kernel_entry, args, kwargs, {})
            )
        except Exception as exc:
            generated = compile_error_line(exc, module)
            at = argus_line(phases.kernel_source_map, generated) or line
            message = (
                f"Triton cannot compile `{kernel}` (launched at line {line}) for {arch}: {compile_error_message(exc)}"
            )
            errors.append(error("AR501", message, "compile", at, detail=exception_text(exc), generated_line=generated))
            continue
        shared = int(getattr(compiled.metadata, "shared", 0) or 0)
        options = {k: v for k, v in kwargs.items() if k in RUN_OPTIONS and v is not None}
        constants = {k: v for k, v in kwargs.items() if k in kernel_entry.get("constants", {})}
        record = {"kernel": kernel, "line": line, "config": {**constants, **options}, "shared_memory_bytes": shared,
                  **ptxas, "seconds": time.perf_counter() - began}  # fmt: skip
        facts["launches"].append(record)
        for key in WORST:
            if record.get(key) is not None:
                facts[key] = max(facts[key] or 0, record[key])
        warning = spill_warning(f"`{kernel}` at line {line}", ptxas)
        if warning:
            facts["warnings"].append(warning)
        if shared > shared_limit:
            message = (
                f"`{kernel}` (launched at line {line}) needs {shared} bytes of shared memory; {arch} allows "
                f"{shared_limit} per program"
            )
            errors.append(error("AR501", message, "compile", line))
    if errors:
        return stage_record("failed", errors[0]["message"], facts, errors)
    return stage_record("passed", "", facts)


def compile_kernel(phases: Phases, device: str, max_configs: int = DEFAULT_CONFIGS, budget_s: float | None = None):
    import triton

    started = time.perf_counter()
    kernel = phases.kernel
    module, problem, entry = phases.load()
    inputs = phases.run("inputs", problem.make_inputs, problem.SIZES["small"], 0, device)
    grid, args, kwargs = phases.run("launch", record_launch, module, kernel, inputs)
    options = {k: v for k, v in kwargs.items() if k in RUN_OPTIONS and v is not None}
    target, shared_limit = target_for(device)
    arch = f"sm_{target.arch}"
    how = "Triton's JIT" if device == "cuda" else "triton.compile, no GPU"
    progress(f"{kernel}: compiling for {arch} ({how})")
    resources = phases.facts.get("resources", {})
    try:
        compiled, ptxas = compile_launch(entry, target, device, grid, *worst_case(entry, args, kwargs, {}))
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
        **ptxas,
        "estimated_shared_memory_bytes": resources.get("estimate"),
        "autotune_configs": resources.get("autotune_configs", len(entry.get("configs") or [])),
        "configs": [],
        "warnings": [],
    }
    warning = spill_warning("the declared configuration", ptxas)
    if warning:
        facts["warnings"].append(warning)
    if shared > shared_limit:
        message = f"`{kernel}` needs {shared} bytes of shared memory; {arch} allows {shared_limit} per program"
        record = error("AR501", message, "compile", phases.facts["line"])
        return stage_record("failed", message, facts, [record])
    budget = (budget_s if budget_s is not None else 60.0) / 2 - (time.perf_counter() - started)
    errors = compile_configs(phases, module, entry, inputs, target, device, shared_limit, facts, max_configs - 1,
                             time.perf_counter() + budget)  # fmt: skip
    if errors:
        return stage_record("failed", errors[0]["message"], facts, errors)
    return stage_record("passed", "", facts)


def compile_configs(phases, module, entry, inputs, target, device, limit, facts, bound, deadline) -> list[dict]:
    """Compile the configurations the autotuner may pick besides the declared one (the manifest lists them,
    largest estimate first), until `bound` are compiled or the deadline passes; their records go into
    facts["configs"], and the errors of those that fail come back."""
    kernel = phases.kernel
    resources = phases.facts.get("resources", {})
    declared = {**entry.get("constants", {}), **entry.get("policy", {})}
    arch = f"sm_{target.arch}"
    errors = []
    waiting = list(resources.get("configs", []))
    for planned in waiting[: max(bound, 0)]:
        if time.perf_counter() > deadline:
            break
        config = planned["config"]
        record = {
            "config": config,
            "status": "passed",
            "message": "",
            "estimated_shared_memory_bytes": planned.get("estimate"),
            "covers": planned.get("covers", 1),
        }
        facts["configs"].append(record)
        began = time.perf_counter()
        progress(f"{kernel}: compiling {config_text(config)}")
        try:
            grid, args, kwargs = record_launch(module, kernel, inputs, config)
        except Exception as exc:  # the launcher's checks (`requires` at the small sizes): it would prune it too
            record.update(status="skipped", message=one_line(str(exc)))
            continue
        try:
            compiled, ptxas = compile_launch(entry, target, device, grid, *worst_case(entry, args, kwargs, config))
        except Exception as exc:
            refused = out_of_shared_memory(exc)  # on a GPU: the module did not load
            if refused is not None:
                record.update(shared_memory_bytes=refused[0], seconds=time.perf_counter() - began)
                errors += overflow_errors(phases, resources, declared, config, refused[0], refused[1], arch, record)
                continue
            generated = compile_error_line(exc, module)
            line = argus_line(phases.kernel_source_map, generated) or phases.facts["line"]
            message = (
                f"Triton cannot compile `{kernel}` with {config_text(config)} for {arch}: {compile_error_message(exc)}"
            )
            record.update(status="failed", message=message, seconds=time.perf_counter() - began)
            errors.append(
                error("AR501", message, "compile", line, detail=exception_text(exc), generated_line=generated)
            )
            continue
        shared = int(getattr(compiled.metadata, "shared", 0) or 0)
        record.update({k: ptxas.get(k) for k in ("registers", "spill_stores_bytes", "spill_loads_bytes")})
        record.update(shared_memory_bytes=shared, seconds=time.perf_counter() - began)
        warning = spill_warning(config_text(config), ptxas)
        if warning:
            facts["warnings"].append(warning)
        if shared > limit:
            errors += overflow_errors(phases, resources, declared, config, shared, limit, arch, record)
    return errors


def overflow_errors(phases, resources, declared, config, shared, limit, arch, record) -> list[dict]:
    """AR410 at each tune value that takes this configuration away from the declared one."""
    blamed = tune_blame(resources, declared, config) or [(None, None, None)]
    changed = ", ".join(f"{name} = {value}" for name, value, _ in blamed if name is not None) or config_text(config)
    message = (
        f"{changed} needs {shared} bytes of shared memory when compiled for {arch} "
        f"(estimated {record.get('estimated_shared_memory_bytes')}); {arch} allows {limit} per program"
    )
    record.update(status="failed", message=message)
    found = []
    for _, _, span in blamed:
        line, column, end = (span[1], span[2], span[3]) if span else (phases.facts["line"], None, None)
        found.append(error("AR410", message, "compile", line, column=column, end_column=end))
    return found
