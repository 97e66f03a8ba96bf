"""The launch runtime of a generated module, copied into it verbatim after its imports.

A generated module imports only math, torch and triton, so the checks every launcher makes (argument count,
dtype, rank, device, one value per size symbol, the kernel's `requires`) live here, driven by the kernel's
entry in `KERNELS`. Argus itself never imports this file: code generation reads it as text.
"""

import torch
import triton
import triton.language as tl


class ArgusLaunchError(ValueError):
    """An argument a kernel cannot take: the message names the parameter, what was expected and what came."""

    def __init__(self, kernel, parameter, expected, got):
        self.kernel, self.parameter, self.expected, self.got = kernel, parameter, expected, got
        super().__init__(f"{kernel}: `{parameter}`: expected {expected}, got {got}")


_TORCH_DTYPES = {
    "bool": torch.bool,
    "i8": torch.int8,
    "i16": torch.int16,
    "i32": torch.int32,
    "i64": torch.int64,
    "u8": torch.uint8,
    "f8e4m3": getattr(torch, "float8_e4m3fn", None),
    "f8e5m2": getattr(torch, "float8_e5m2", None),
    "f16": torch.float16,
    "bf16": torch.bfloat16,
    "f32": torch.float32,
    "f64": torch.float64,
}
_ARGUS_DTYPES = {torch_dtype: name for name, torch_dtype in _TORCH_DTYPES.items() if torch_dtype is not None}
_POLICY = ("num_warps", "num_stages", "num_ctas", "maxnreg", "tma", "warp_specialize", "flatten", "epilogue_warps")
_LOOP_FLAGS = {"warp_specialize": "ARGUS_WS", "flatten": "ARGUS_FLATTEN"}  # policy -> the jit's constexpr
_PRECISIONS = ("ieee", "tf32x3", "tf32", "bf16x3", "bf16x6")  # what a string tile constant may name
# Whether Triton's CPU interpreter runs the kernels (TRITON_INTERPRET=1 when triton was imported): it refuses the
# bf16x3 and bf16x6 precisions, so a dot that may use one passes "ieee" there, which it computes the same way
# (the interpreter computes every precision in fp32).
_ARGUS_INTERPRETED = tl.constexpr(bool(triton.knobs.runtime.interpret))


def _cdiv(a, b):
    return -(-a // b)


def _idiv(a, b):
    """Argus `//` at launch: between integers it truncates toward zero, as the kernel (Triton, C) does, where
    Python floors; a `requires` or grid reads the same here as the verifier reads it. Floats floor."""
    if isinstance(a, int) and isinstance(b, int):
        quotient = abs(a) // abs(b)
        return quotient if (a >= 0) == (b >= 0) else -quotient
    return a // b


def _imod(a, b):
    """Argus `%` at launch: the remainder that goes with _idiv (the dividend's sign between integers)."""
    if isinstance(a, int) and isinstance(b, int):
        return a - b * _idiv(a, b)
    return a % b


def _trips(start, stop, step):
    """Iterations of range(start, stop, step)."""
    return max(0, _cdiv(stop - start, step)) if step > 0 else max(0, _cdiv(start - stop, -step))


def _partition(cuts, total):
    """Data fact `partition(T, n)`: T holds cut points 0 = T[0] <= T[1] <= ... <= T[last] = n. Unchecked (True)
    where the tensor is not at hand (autotuner pruning, work counts)."""
    if cuts is None:
        return True
    cuts = cuts.detach().to("cpu", torch.int64)
    return bool(cuts[0] == 0 and cuts[-1] == total and torch.all(cuts[1:] >= cuts[:-1]))


def _in_range(values, lo, hi, ignore=None):
    """Data fact `in_range(T, lo, hi[, ignore])`: every element of T lies in lo <= T[...] < hi, or equals `ignore`
    where given. Unchecked (True) where the tensor is not at hand (autotuner pruning, work counts); an empty
    tensor holds it."""
    if values is None:
        return True
    if ignore is not None:
        values = values[values != ignore]
    if values.numel() == 0:
        return True
    return bool(values.min().item() >= lo and values.max().item() < hi)


def _permutation(values, n):
    """Data fact `permutation(T, n)`: each of 0..n-1 occurs exactly once in T, every other element is n or more
    (padding, which may repeat). Unchecked (True) where the tensor is not at hand."""
    if values is None:
        return True
    values = values.detach().to("cpu", torch.int64)
    real = values[values < n]
    if real.numel() != n:
        return False
    return n == 0 or bool(real.min().item() >= 0 and torch.unique(real).numel() == n)


def _short(value):
    return _describe(value) if isinstance(value, torch.Tensor) and value.numel() > 16 else value


def _describe(value):
    if isinstance(value, torch.Tensor):
        dtype = _ARGUS_DTYPES.get(value.dtype, str(value.dtype))
        return f"a {dtype} tensor of shape {list(value.shape)} on {value.device}"
    return f"{type(value).__name__} {value!r}"


def _tensor_text(param):
    return f"a {param['dtype']}[{', '.join(param['shape'])}] tensor"


def _bind(kernel, args, kwargs):
    """Parameter values by name, and the overrides of tile constants and policy."""
    name, params = kernel["name"], kernel["params"]
    names = [p["name"] for p in params]
    signature = f"({', '.join(names)})"
    if len(args) > len(params):
        raise ArgusLaunchError(name, "arguments", f"at most {len(params)} arguments {signature}", len(args))
    values = dict(zip(names, args))  # noqa: B905 (runs on the GPU machine's Python, which may be older)
    overrides = {}
    for key, value in kwargs.items():
        if key in names:
            if key in values:
                raise ArgusLaunchError(name, key, "one value", "a positional and a keyword value")
            values[key] = value
        elif key in kernel["constants"] or key in _POLICY:
            overrides[key] = value
        else:
            known = ", ".join([*names, *kernel["constants"], *_POLICY])
            raise ArgusLaunchError(name, key, f"one of {known}", "an unknown keyword argument")
    for param in params:
        if param["name"] not in values:
            if param["kind"] == "scalar" and param["default"] is not None:
                values[param["name"]] = param["default"]
            else:
                expected = f"{len(params)} arguments {signature}"
                raise ArgusLaunchError(name, param["name"], expected, f"{len(args)} arguments, none for it")
    return values, overrides


def _check_scalar(kernel, param, value):
    dtype = param["dtype"]
    if dtype == "bool":
        ok = isinstance(value, bool)
    elif dtype.startswith(("i", "u")):
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not ok:
        raise ArgusLaunchError(kernel["name"], param["name"], f"a {dtype} scalar (a Python number)", _describe(value))


def _sizes(kernel, values, constants):
    """Check each tensor's type, rank and device; read the size symbols from the shapes, one value each."""
    name = kernel["name"]
    sizes, origin, device, first = {}, {}, None, None
    for param in kernel["params"]:
        value = values[param["name"]]
        if param["kind"] == "scalar":
            _check_scalar(kernel, param, value)
            continue
        expected = _tensor_text(param)
        if not isinstance(value, torch.Tensor):
            raise ArgusLaunchError(name, param["name"], expected, _describe(value))
        if value.dtype != _TORCH_DTYPES[param["dtype"]]:
            raise ArgusLaunchError(name, param["name"], f"dtype {param['dtype']} ({expected})", _describe(value))
        if value.dim() != len(param["dims"]):
            raise ArgusLaunchError(
                name,
                param["name"],
                f"rank {len(param['dims'])} ({expected})",
                f"rank {value.dim()}: {_describe(value)}",
            )
        reach = sum((n - 1) * abs(s) for n, s in zip(value.shape, value.stride()))  # noqa: B905
        if reach >= 2**31:
            expected = "element offsets below 2**31 (the kernel computes them in 32 bits)"
            raise ArgusLaunchError(name, param["name"], expected, f"{_describe(value)}, reaching {reach}")
        if device is None:
            device, first = value.device, param["name"]
        elif value.device != device:
            raise ArgusLaunchError(name, param["name"], f"a tensor on {device}, like `{first}`", _describe(value))
        for axis, (symbol, offset, constant) in enumerate(param["dims"]):
            length = value.shape[axis]
            if symbol is None:
                want = constants[constant] if constant else offset
                if length != want:
                    what = f"{constant} = {want}" if constant else str(want)
                    raise ArgusLaunchError(
                        name, param["name"], f"axis {axis} of length {what} ({expected})", _describe(value)
                    )
                continue
            size = length - offset
            if symbol in sizes and sizes[symbol] != size:
                dim = param["shape"][axis]
                want = f"axis {axis} ({dim}) of length {sizes[symbol] + offset}, since {symbol} = {sizes[symbol]}"
                raise ArgusLaunchError(name, param["name"], f"{want} from `{origin[symbol]}`", _describe(value))
            if size < 1:
                raise ArgusLaunchError(
                    name, param["name"], f"{symbol} >= 1 (axis {axis} is {param['shape'][axis]})", _describe(value)
                )
            sizes.setdefault(symbol, size)
            origin.setdefault(symbol, param["name"])
    interpreting = type(kernel.get("jit")).__name__ == "InterpretedFunction"
    # A model has no jit function of its own: each launcher it calls checks the device for its kernel.
    if device is not None and device.type != "cuda" and "jit" in kernel and not interpreting:
        expected = "a CUDA tensor (CPU tensors need the interpreter: TRITON_INTERPRET=1)"
        raise ArgusLaunchError(name, first, expected, _describe(values[first]))
    return sizes


def _model_arguments(model, args, kwargs):
    """A model's arguments by name, its sizes (one value per size symbol, read from the tensors' shapes) and
    the device its temporaries go to, checked as a launcher checks its kernel's (ArgusLaunchError)."""
    names = [p["name"] for p in model["params"]]
    for key in kwargs:
        if key not in names:  # tile constants and policy are its kernels' own: no overrides through a model
            expected = f"one of the model's parameters ({', '.join(names)})"
            raise ArgusLaunchError(model["name"], key, expected, "an unknown keyword argument")
    values, _ = _bind(model, args, kwargs)
    sizes = _sizes(model, values, {})
    device = next((v.device for v in values.values() if isinstance(v, torch.Tensor)), None)
    return values, sizes, device


def _model_runner(autotune, check_data):
    """How a model launches each kernel: its checking launcher, or the autotuned one; with or without the
    launchers' data-fact checks (one device synchronization each)."""

    def run(launcher, *args):
        (launcher.autotuned if autotune else launcher)(*args, check_data=check_data)

    return run


def _model_inputs(inputs, names):
    """A launched kernel's tensors by its own parameter names, for its work counts (`names`: kernel parameter
    -> model parameter); the model's temporaries are not at hand there and stay out."""
    if inputs is None:
        return None
    return {param: inputs[name] for param, name in names.items() if name in inputs}


def _check_precisions(kernel, constants):
    """A string tile constant names a dot input precision, overridden or not."""
    for key, declared in kernel["constants"].items():
        if isinstance(declared, str) and constants[key] not in _PRECISIONS:
            expected = "an input precision, one of " + ", ".join(f'"{p}"' for p in _PRECISIONS)
            raise ArgusLaunchError(kernel["name"], key, expected, repr(constants[key]))


# ---- views a kernel declares (`x: f16[B, C, H, W] as [B, C * H * W]`) -------------------------------------
def _take_views(kernel, values):
    """A parameter that declares a view is indexed through it: the launcher replaces the tensor it was given by
    `tensor.view(...)` of the declared shape, which shares its memory (so a kernel's writes land in the caller's
    tensor) and has the strides the kernel gets. Torch's own rule decides: a tensor whose strides do not let
    the merged axes be one is refused (a copy would hide an output's writes and cost a pass over the data)."""
    for param in kernel["params"]:
        groups = param.get("view")
        if not groups:
            continue
        tensor = values[param["name"]]
        shape = []
        for group in groups:
            length = 1
            for axis in group:
                length *= tensor.shape[axis]
            shape.append(length)
        try:
            values[param["name"]] = tensor.view(shape)
        except RuntimeError:
            expected = _view_expected(param, tensor, groups)
            got = f"{_describe(tensor)} with strides {list(tensor.stride())}"
            raise ArgusLaunchError(kernel["name"], param["name"], expected, got) from None


def _view_expected(param, tensor, groups):
    """What a view needs, said of the first merged group whose strides do not chain (axis a's stride is axis a+1's
    times its length, size-1 axes aside)."""
    view = f"[{', '.join(param['view_shape'])}]"
    for group in groups:
        kept = [a for a in group if tensor.shape[a] != 1]
        for position in range(len(kept) - 1):
            a, b = kept[position], kept[position + 1]
            chained = tensor.stride(b) * tensor.shape[b]
            if tensor.stride(a) != chained:
                names = ", ".join(param["shape"][axis] for axis in group)
                return (
                    f"axes {group[0]}..{group[-1]} ({names}) that merge into one axis of the view {view}: the stride "
                    f"of axis {a} must be {tensor.stride(b)} x {tensor.shape[b]} = {chained} (axis {b}'s stride "
                    f"times its length), as `{param['name']}.view(...)` needs; pass a contiguous tensor"
                )
    return f"strides that allow the view {view} ({_tensor_text(param)})"


def _make_contiguous(kernel, values):
    """`layout T: K`: the kernel takes T's axis K to have stride 1. A tensor whose axis already has it (or has
    length 1) is passed as it is; any other is copied once, with that axis innermost."""
    for name, axis in kernel["layouts"].items():
        tensor = values[name]
        if tensor.stride(axis) != 1 and tensor.shape[axis] != 1:
            if tensor.numel() > 2**31:  # a broadcast view can be small in memory and its copy not
                expected = "element offsets below 2**31 (the kernel computes them in 32 bits)"
                got = f"{_describe(tensor)}, whose contiguous copy `layout` asks for reaches {tensor.numel() - 1}"
                raise ArgusLaunchError(kernel["name"], name, expected, got)
            values[name] = _innermost_copy(tensor, axis)


def _innermost_copy(tensor, axis, through_triton=None):
    """A copy of `tensor` with `axis` innermost in memory (same shape and values). On a GPU a 2- or 3-D tensor
    goes through a tiled transpose kernel: torch's strided copy ran a 4096 x 4096 f32 transpose at 1 TB/s on the
    H200 (0.126 ms, bench/h200_fp32.py), a third of what the copy engine's bandwidth allows."""
    view = tensor.movedim(axis, -1)
    if through_triton is None:
        through_triton = tensor.is_cuda and tensor.dim() in (2, 3)
    if not through_triton:
        return view.contiguous().movedim(-1, axis)
    v = view if view.dim() == 3 else view.unsqueeze(0)
    out = torch.empty(v.shape, dtype=v.dtype, device=v.device)
    batch, rows, cols = v.shape
    grid = (triton.cdiv(cols, _COPY_TILE), triton.cdiv(rows, _COPY_TILE), batch)
    _innermost_copy_kernel[grid](v, out, rows, cols, *v.stride(), TILE=_COPY_TILE)
    return (out if view.dim() == 3 else out.squeeze(0)).movedim(-1, axis)


_COPY_TILE = 64


@triton.jit
def _innermost_copy_kernel(src, dst, rows, cols, s_batch, s_row, s_col, TILE: tl.constexpr):
    # dst[b, r, c] = src[b, r, c], dst contiguous: the tile is read along src's stride-1 axis (rows, for a
    # transposed view) and written along cols; Triton moves it between the two orders through shared memory.
    b = tl.program_id(2)
    r = tl.program_id(1) * TILE + tl.arange(0, TILE)
    c = tl.program_id(0) * TILE + tl.arange(0, TILE)
    inside = (r < rows)[:, None] & (c < cols)[None, :]
    offsets = b.to(tl.int64) * s_batch + r[:, None] * s_row + c[None, :] * s_col
    tile = tl.load(src + offsets, mask=inside)
    tl.store(dst + b.to(tl.int64) * rows * cols + r[:, None] * cols + c[None, :], tile, mask=inside)


def _check_requires(kernel, scope):
    for text, holds in kernel["launch"](**scope)[1]:
        if not holds:
            words = text.replace("(", " ").replace(")", " ").replace(",", " ").split()
            shown = ", ".join(f"{k}={_short(v)}" for k, v in scope.items() if k in words)
            raise ArgusLaunchError(kernel["name"], f"requires {text}", "it to hold", shown)


def _launch(kernel, args, kwargs, autotune=False):
    name = kernel["name"]
    check_data = kwargs.pop("check_data", True)  # data facts read tensor contents: one device sync
    values, overrides = _bind(kernel, args, kwargs)
    constants = {**kernel["constants"], **{k: v for k, v in overrides.items() if k in kernel["constants"]}}
    policy = {**kernel["policy"], **{k: v for k, v in overrides.items() if k in _POLICY}}
    _check_precisions(kernel, constants)
    sizes = _sizes(kernel, values, constants)
    _take_views(kernel, values)
    _make_contiguous(kernel, values)
    scalars = {p["name"]: values[p["name"]] for p in kernel["params"] if p["kind"] == "scalar"}
    arguments = [values[p["name"]] for p in kernel["params"]]
    arguments += [sizes[s] for s in kernel["sizes"]]
    for param in kernel["params"]:
        if param["kind"] == "tensor":
            unit = kernel["layouts"].get(param["name"])  # the kernel has the constant 1 for this axis' stride
            arguments += [s for axis, s in enumerate(values[param["name"]].stride()) if axis != unit]
    facts = {name: values[name] for name in kernel["fact_tensors"]} if check_data else {}
    tma = _tma_flag(kernel, values, policy.pop("tma", 0))
    for setting, flag in _LOOP_FLAGS.items():  # loop options: constexpr flags, for kernels that declare them
        value = policy.pop(setting, None)
        if value is not None and setting in kernel["policy"]:
            # the pointer form of a kernel with TMA descriptors (policy tma = 0, or the launcher's fallback)
            # runs unspecialized: Triton's Hopper warp specialization partitions descriptor loads
            tma[flag] = 0 if setting == "warp_specialize" and tma.get("ARGUS_TMA") == 0 else int(value)
    warps = policy.pop("epilogue_warps", None)
    if warps is not None and kernel.get("gluon") and not autotune:
        # for the Gluon dispatcher (the gate may have put a recorder in its place): the Triton kernel has no
        # such parameter, and the autotuner tunes the Triton kernel only
        policy["epilogue_warps"] = warps
    if not autotune:
        scope = {**sizes, **scalars, **constants, **facts}
        _check_requires(kernel, scope)
        grid = kernel["launch"](**scope)[0]
        _start_accumulated(kernel, values)
        kernel["jit"][grid](*arguments, **constants, **tma, **policy)
        return
    tuned = {key for config in kernel["configs"] for key in config}
    clash = sorted(tuned & set(overrides))
    if clash:
        expected = "no override in the autotuned launcher (it is tuned)"
        raise ArgusLaunchError(name, clash[0], expected, overrides[clash[0]])
    fixed = {k: v for k, v in constants.items() if k not in tuned}

    def holds(config):
        chosen = {k: v for k, v in config.items() if k in constants}
        return all(ok for _, ok in kernel["launch"](**sizes, **scalars, **{**constants, **chosen})[1])

    feasible = [config for config in kernel["configs"] or [{}] if holds(config)]
    if not feasible:
        _check_requires(kernel, {**sizes, **scalars, **constants})
        raise ArgusLaunchError(name, "requires", "a tune configuration that satisfies it", "none")
    if facts:
        chosen = {k: v for k, v in feasible[0].items() if k in constants}
        _check_requires(kernel, {**sizes, **scalars, **constants, **chosen, **facts})

    def grid(meta):
        return kernel["launch"](**sizes, **scalars, **{k: meta.get(k, v) for k, v in constants.items()})[0]

    _start_accumulated(kernel, values)
    _autotuned(kernel, fixed, policy)[grid](*arguments, **fixed, **tma)


class _ArgusGluonDispatch:
    """`entry["jit"]` of a kernel with `policy epilogue_warps` (argus.codegen.gluon_gemm): launched as its Triton
    kernel is (`jit[grid](*args, **kwargs)`), it runs the Gluon kernel where that can run (an sm_90 GPU, f16
    operands TMA can read, the tile shape the MMA partition takes) and the Triton lowering of the same source
    everywhere else. Everything else (the gate's compile, the autotuner) reads the Triton kernel."""

    def __init__(self, jit, gluon_launch, names):
        self.jit, self.gluon_launch, self.names = jit, gluon_launch, names

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            warps = kwargs.pop("epilogue_warps", 0)
            if not (warps and self.gluon_launch(dict(zip(self.names, args, strict=True)), kwargs, warps)):
                self.jit[grid](*args, **kwargs)

        return launch

    def __getattr__(self, name):
        return getattr(self.jit, name)


def _gluon_ready(tensors, BM, BN, num_warps):
    """Whether the Gluon GEMM runs: Hopper, TMA-readable f16 tensors, and a tile the 8-warp wgmma layout covers
    (16 rows a warp, at most 256 columns)."""
    if not all(t.is_cuda and t.dtype == torch.float16 for t in tensors):
        return False
    if torch.cuda.get_device_capability(tensors[0].device) != (9, 0):
        return False
    aligned = all(t.stride(-1) == 1 and t.data_ptr() % 16 == 0 and t.stride(0) * 2 % 16 == 0 for t in tensors)
    return aligned and 16 * num_warps == BM and BN <= 256 and BN % 16 == 0


def _tma_flag(kernel, values, wanted):
    """`{"ARGUS_TMA": 0 or 1}` for a kernel with TMA descriptors: 1 when the policy asks for TMA and every
    tensor they read or write qualifies (innermost stride 1, other strides and the base 16-byte aligned);
    otherwise the kernel's pointer accesses run, which compute the same thing."""
    if not kernel.get("tma_tensors"):
        return {}
    ready = bool(wanted)
    for name in kernel["tma_tensors"] if ready else ():
        tensor = values[name]
        size = tensor.element_size()
        strides = tensor.stride()
        if strides[-1] != 1 or tensor.data_ptr() % 16 or any(s * size % 16 for s in strides[:-1]):
            ready = False
        folded = kernel.get("tma_folded", {}).get(name, 0)  # axes 0..folded become one axis of rows
        if any(strides[a] != tensor.shape[a + 1] * strides[a + 1] for a in range(folded)):
            ready = False
    if ready:
        _tma_allocator()
    return {"ARGUS_TMA": int(ready)}


def _tma_allocator():
    """Descriptors made inside a kernel need scratch memory from the caller: Triton asks this allocator."""
    if not _TMA_ALLOCATOR:

        def allocate(size, alignment, stream):
            device = "cpu" if torch.cuda.device_count() == 0 else "cuda"
            return torch.empty(size, dtype=torch.int8, device=device)

        triton.set_allocator(allocate)
        _TMA_ALLOCATOR.append(allocate)


_TMA_ALLOCATOR = []


def _start_accumulated(kernel, values):
    """Outputs written by atomics start where their accumulation does, whatever they held before, so the kernel
    computes their value as the reference does: 0 for atomic_add (and atomic_xchg, atomic_cas), the dtype's
    lowest value for atomic_max (-inf for floats), its highest for atomic_min (`accumulated`: name -> start)."""
    for name, start in kernel["accumulated"].items():
        _fill_start(values[name], start)


def _fill_start(tensor, start):
    if start == "zero":
        tensor.zero_()
    elif tensor.is_floating_point():
        tensor.fill_(float("-inf") if start == "lowest" else float("inf"))
    else:
        info = torch.iinfo(tensor.dtype)
        tensor.fill_(info.min if start == "lowest" else info.max)


def _shared_memory_limit():
    """What one program of this GPU may have (the sm_90 limit where no GPU is at hand)."""
    if torch.cuda.is_available():
        properties = torch.cuda.get_device_properties(torch.cuda.current_device())
        return getattr(properties, "shared_memory_per_block_optin", 232448)
    return 232448


def _fitting_configs(kernel, policy):
    """The kernel's tune configurations as triton.Configs: once each (the launcher keeps tma, warp_specialize,
    flatten and epilogue_warps at their declared values, so configurations that differ only there are one), and
    without those whose estimated shared memory (`argus check`'s, in KERNELS) this GPU cannot give a program:
    left out, and said through the `argus` logger, instead of failing at launch."""
    import logging

    constants = set(kernel["constants"])
    limit = _shared_memory_limit()
    configs, seen = [], set()
    estimates = kernel.get("shared_memory") or [None] * len(kernel["configs"])
    for config, needed in zip(kernel["configs"] or [{}], estimates or [None]):  # noqa: B905
        kept = ("tma", "epilogue_warps", *_LOOP_FLAGS)  # the autotuner tunes the Triton kernel only
        launch_settings = {k: v for k, v in config.items() if k in _POLICY and k not in kept}
        settings = {**policy, **launch_settings}
        meta = {k: v for k, v in config.items() if k in constants}
        key = (tuple(sorted(meta.items())), tuple(sorted(settings.items())))
        if key in seen:
            continue
        seen.add(key)
        if needed is not None and needed > limit:
            chosen = ", ".join(f"{k}={v}" for k, v in config.items())
            message = "%s: the autotuner leaves out %s: it needs about %d bytes of shared memory, this GPU gives %d"
            logging.getLogger("argus").warning(message, kernel["name"], chosen, needed, limit)
            continue
        configs.append(triton.Config(meta, **settings))
    if not configs:
        expected = f"a tune configuration that fits in the {limit} bytes of shared memory of this GPU's programs"
        raise ArgusLaunchError(kernel["name"], "tune configurations", expected, "none")
    return configs


def _autotuned(kernel, fixed, policy):
    """The kernel under triton.autotune over its tune configurations (made once, on first use)."""
    key = tuple(sorted(fixed.items())) + tuple(sorted(policy.items()))
    cache = kernel.setdefault("_autotuned", {})
    if key not in cache:
        configs = _fitting_configs(kernel, policy)

        def prune(configs, named_args, **kwargs):
            scope = {**named_args, **kwargs}
            keep = []
            for config in configs:
                values = {**{k: scope[k] for k in kernel["launch_args"] if k in scope}, **config.kwargs}
                if all(ok for _, ok in kernel["launch"](**values)[1]):
                    keep.append(config)
            return keep

        starts = kernel["accumulated"]

        def restart(nargs, reset_only=False):  # before each trial, as reset_to_zero would, but to each start
            for name, start in starts.items():
                _fill_start(nargs[name], start)

        restored = list(kernel.get("inout", []))  # each trial starts from the caller's values, as the real launch
        cache[key] = triton.autotune(
            configs=configs,
            key=list(kernel["sizes"]),
            prune_configs_by={"early_config_prune": prune},
            pre_hook=restart if starts else None,
            restore_value=restored or None,
        )(kernel["jit"])
    return cache[key]
