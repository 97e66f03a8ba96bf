"""Corrections of Triton's CPU interpreter (TRITON_INTERPRET=1), where it computes what no GPU would.

The correct stage runs the kernel through the interpreter on the CPU; where the interpreter itself is wrong, a
correct kernel fails there and the gate would blame the kernel. `install()` patches the interpreter's builder
(triton.runtime.interpreter.InterpreterBuilder) so these operations compute what the GPU computes:

bf16 dot             numpy has no bf16, so the interpreter stores bf16 as its uint16 bit patterns, and
                     create_dot multiplied those integers. The operands are widened to f32 (exact) first.
fp8 conversion       _convert_float rounds to e4m3/e5m2 without carrying a full mantissa into the exponent
                     (124 -> 64), rounds ties away from zero and decodes NaN as a number. Conversions to and
                     from f8e4m3 and f8e5m2 go through the formats' value tables instead: round to nearest,
                     ties to even, and saturating like the GPU's cvt.rn.satfinite (a finite value past the
                     largest one, or an infinity, becomes the largest; NaN stays NaN).
boolean splat        a comparison of two scalars (`pid < M`) carries its operands' dtype (i32) on its handle
                     although its data are booleans, so a splat of it (`(offs < N) & (pid < M)`) made an
                     int32 tile, and a load or store masked by it failed with "mask has unsupported dtype".
                     A splat of boolean data stays boolean.
float atomics        Triton lowers a float atomic_max to a signed max of the bit patterns for non-negative values
                     and an unsigned min for negative ones (atomic_min the other way round); the interpreter's
                     atomic_rmw refuses unsigned data and float exchanges ("Unsupported data type"), so every
                     float atomic_max, atomic_min and atomic_xchg failed. The unsigned min and max are done here,
                     element by element in lane order (the interpreter runs programs one after another, so
                     nothing else touches memory meanwhile; the old values returned are those before the op,
                     which Argus does not read); a float exchange swaps the bit patterns as integers of its width.

`notes()` names the corrections that changed something in this process, for the stage's facts: a report
that passed through one says so. Standard library at import time; numpy and triton are imported by install().
"""

from __future__ import annotations

NOTES = {
    "bf16_dot": "bf16 dot: the interpreter multiplies bf16 bit patterns as integers; its operands were widened "
    "to f32 first",
    "fp8_convert": "fp8 conversion: the interpreter's float <-> f8e4m3/f8e5m2 conversion (a dropped mantissa carry, "
    "124 -> 64) was replaced by round to nearest even, saturating like the GPU",
    "bool_splat": "boolean splat: the interpreter turns a scalar comparison broadcast into a tile (a mask like "
    "`(offs < N) & (pid < M)`) into int32; it was kept boolean",
    "float_atomic": "float atomic_max/atomic_min/atomic_xchg: the interpreter refuses the unsigned min/max of bit "
    "patterns Triton lowers max and min to, and float exchanges; they were done on the bit patterns",
}

_used: set[str] = set()
_installed = False


def notes() -> list[str]:
    """What the corrections changed so far in this process, one line each, in a fixed order."""
    return [text for key, text in NOTES.items() if key in _used]


def install() -> bool:
    """Patch the interpreter's builder (once per process). False where triton has no interpreter to patch."""
    global _installed
    if _installed:
        return True
    try:
        from triton.runtime import interpreter
    except ImportError:
        return False
    builder = getattr(interpreter, "InterpreterBuilder", None)
    if builder is None:
        return False
    _patch_dot(builder, interpreter)
    _patch_fp_to_fp(builder, interpreter)
    _patch_splat(builder, interpreter)
    _patch_unsigned_atomics(builder, interpreter)
    _installed = True
    return True


# ---- fp8 through the formats' value tables ------------------------------------------------------------------

# name -> (exponent bits, mantissa bits, exponent bias, has infinities): the OCP formats Triton calls fp8e4nv
# (torch.float8_e4m3fn: no infinities, only S.1111.111 is NaN) and fp8e5 (torch.float8_e5m2, IEEE-like).
FP8_FORMATS = {"fp8e4nv": (4, 3, 7, False), "fp8e5": (5, 2, 15, True)}
_tables: dict = {}


def fp8_table(name: str):
    """(values, largest finite code) of a format: the float64 value of each of the 256 codes (NaN for NaN)."""
    if name in _tables:
        return _tables[name]
    import numpy as np

    exponent_bits, mantissa_bits, bias, ieee = FP8_FORMATS[name]
    codes = np.arange(256)
    sign = np.where(codes & 0x80, -1.0, 1.0)
    exponent = (codes >> mantissa_bits) & ((1 << exponent_bits) - 1)
    mantissa = codes & ((1 << mantissa_bits) - 1)
    scale = 2.0 ** (np.maximum(exponent, 1) - bias)
    values = sign * scale * (np.where(exponent > 0, 1.0, 0.0) + mantissa / (1 << mantissa_bits))
    top = exponent == (1 << exponent_bits) - 1
    if ieee:
        values = np.where(top & (mantissa == 0), sign * np.inf, values)
        values = np.where(top & (mantissa != 0), np.nan, values)
    else:
        values = np.where(top & (mantissa == (1 << mantissa_bits) - 1), np.nan, values)
    finite = np.isfinite(values[:128])
    largest = int(np.nonzero(finite)[0].max())  # positive codes increase with their value
    _tables[name] = (values, largest)
    return _tables[name]


def fp8_decode(bits, name: str):
    """float64 values of fp8 codes (uint8)."""
    values, _ = fp8_table(name)
    return values[bits.astype("int64")]


def fp8_encode(x, name: str):
    """uint8 codes of float64 values: round to nearest, ties to the even code, saturating (cvt.rn.satfinite)."""
    import numpy as np

    values, largest = fp8_table(name)
    positive = values[: largest + 1]  # 0, the subnormals, the normals: increasing with the code
    x = np.asarray(x, dtype=np.float64)
    magnitude = np.minimum(np.abs(x), positive[-1])  # past the largest finite value (or infinite): the largest
    high = np.clip(np.searchsorted(positive, magnitude, side="left"), 0, largest)
    low = np.maximum(high - 1, 0)
    below, above = magnitude - positive[low], positive[high] - magnitude
    code = np.where(below < above, low, high)
    tie = below == above
    code = np.where(tie, np.where(low % 2 == 0, low, high), code)
    code = np.where(magnitude == positive[high], high, code)
    code = code | np.where(np.signbit(x), 0x80, 0)
    code = np.where(np.isnan(x), 0x7F, code)
    return code.astype(np.uint8)


def _as_float64(handle, interpreter):
    """A float handle's data as float64 values (bf16 and fp8 decoded from their bit patterns)."""
    import numpy as np

    dtype = handle.dtype.scalar
    name = getattr(dtype, "name", "")
    if name in FP8_FORMATS:
        return fp8_decode(handle.data, name)
    if name == "bf16":
        return _bf16_to_f32(handle.data).astype(np.float64)
    return handle.data.astype(np.float64)


def _bf16_to_f32(bits):
    """f32 values of bf16 bit patterns (uint16): exact."""
    import numpy as np

    return (np.asarray(bits).astype(np.uint32) << np.uint32(16)).view(np.float32)


def _patch_fp_to_fp(builder, interpreter) -> None:
    original = builder.create_fp_to_fp

    def create_fp_to_fp(self, src, dst_type, rounding_mode):
        source, target = src.dtype.scalar, dst_type.scalar
        names = (getattr(source, "name", ""), getattr(target, "name", ""))
        rtne = rounding_mode is None or rounding_mode == interpreter._ir.ROUNDING_MODE.RTNE
        if not any(n in FP8_FORMATS for n in names) or not rtne:
            return original(self, src, dst_type, rounding_mode)
        supported = ("fp32", "fp16", "bf16", "fp64", *FP8_FORMATS)
        if not all(n in supported for n in names):
            return original(self, src, dst_type, rounding_mode)
        values = _as_float64(src, interpreter)
        if names[1] in FP8_FORMATS:
            data = fp8_encode(values, names[1])
        elif names[1] == "bf16":  # every fp8 value is a bf16 value: exact
            data = (values.astype("float32").view("uint32") >> 16).astype("uint16")
        else:
            data = values.astype(interpreter._get_np_dtype(target))
        _used.add("fp8_convert")
        return interpreter.TensorHandle(data.reshape(src.data.shape), target)

    builder.create_fp_to_fp = create_fp_to_fp


# ---- dot ------------------------------------------------------------------------------------------------


def _patch_dot(builder, interpreter) -> None:
    original = builder.create_dot

    def create_dot(self, a, b, d, input_precision, max_num_imprecise_acc):
        import numpy as np

        kinds = {getattr(h.dtype.scalar, "name", "") for h in (a, b)}
        if not kinds & {"bf16", *FP8_FORMATS}:
            return original(self, a, b, d, input_precision, max_num_imprecise_acc)
        if d.dtype.scalar.name not in ("fp32", "fp16"):
            return original(self, a, b, d, input_precision, max_num_imprecise_acc)
        a_data, b_data = (_as_float64(h, interpreter).astype(np.float32) for h in (a, b))
        product = np.matmul(a_data, b_data, dtype=np.float32).astype(d.data.dtype) + d.data
        if "bf16" in kinds:
            _used.add("bf16_dot")
        else:
            _used.add("fp8_convert")
        return interpreter.TensorHandle(product, d.dtype.scalar)

    builder.create_dot = create_dot


# ---- splat of a scalar comparison ------------------------------------------------------------------------


def _patch_splat(builder, interpreter) -> None:
    original = builder.create_splat
    tl = interpreter.tl

    def create_splat(self, ret_ty, arg):
        import numpy as np

        data = arg.data
        scalar = not isinstance(arg.dtype, tl.block_type)
        if scalar and getattr(data, "dtype", None) == np.bool_ and arg.dtype.scalar != tl.int1:
            _used.add("bool_splat")
            return interpreter.TensorHandle(np.full(ret_ty.shape, data, dtype=np.bool_), tl.int1)
        return original(self, ret_ty, arg)

    builder.create_splat = create_splat


# ---- unsigned atomic min and max (float atomic_max and atomic_min) ------------------------------------------


def _patch_unsigned_atomics(builder, interpreter) -> None:
    original = builder.create_atomic_rmw
    ops = getattr(getattr(interpreter, "_ir", None), "ATOMIC_OP", None)
    if ops is None:
        return
    unsigned = {ops.UMIN: "min", ops.UMAX: "max"}
    tl = interpreter.tl

    def create_atomic_rmw(self, rmw_op, ptr, val, mask, sem, scope):
        import numpy as np

        if rmw_op == ops.XCHG and val.data.dtype.kind == "f" and val.data.dtype.itemsize in (4, 8):
            wide = val.data.dtype.itemsize == 8
            bits = interpreter.TensorHandle(
                val.data.view(np.int64 if wide else np.int32), tl.int64 if wide else tl.int32
            )
            _used.add("float_atomic")
            old = original(self, rmw_op, ptr, bits, mask, sem, scope)
            return interpreter.TensorHandle(old.data.view(val.data.dtype), val.dtype.scalar)
        which = unsigned.get(rmw_op)
        if which is None or val.data.dtype.kind != "u":
            return original(self, rmw_op, ptr, val, mask, sem, scope)
        dtype = val.data.dtype
        pointers = np.broadcast_to(ptr.data, val.data.shape).ravel()
        values = val.data.ravel()
        keep = np.broadcast_to(mask.data, val.data.shape).ravel()
        old = np.zeros_like(values)
        if keep.any():
            _used.add("float_atomic")
        for lane in np.flatnonzero(keep):
            at = pointers[lane : lane + 1]
            held = interpreter._interpreter.load(at, np.ones(1, dtype=bool), np.zeros(1, dtype=dtype), dtype)
            old[lane] = held[0]
            new = np.minimum(held, values[lane]) if which == "min" else np.maximum(held, values[lane])
            interpreter._interpreter.store(at, new.astype(dtype), np.ones(1, dtype=bool))
        return interpreter.TensorHandle(old.reshape(val.data.shape), val.dtype.scalar)

    builder.create_atomic_rmw = create_atomic_rmw
