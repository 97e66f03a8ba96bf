"""Corrections of Triton's CPU interpreter (TRITON_INTERPRET=1), where it computes what no GPU would.

The correct stage runs the kernel through the interpreter on the CPU; where the interpreter itself is wrong, a
correct kernel fails there and the gate would blame the kernel. `install()` patches the interpreter's builder
(triton.runtime.interpreter.InterpreterBuilder) so these operations compute what the GPU computes:

bf16 dot             numpy has no bf16, so the interpreter stores bf16 as its uint16 bit patterns, and
                     create_dot multiplied those integers. The operands are widened to f32 (exact) first.

`notes()` names the corrections that changed something in this process, for the stage's facts: a report
that passed through one says so. Standard library at import time; numpy and triton are imported by install().
"""

from __future__ import annotations

NOTES = {
    "bf16_dot": "bf16 dot: the interpreter multiplies bf16 bit patterns as integers; its operands were widened "
    "to f32 first",
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
    _installed = True
    return True


def _bf16_to_f32(bits):
    """f32 values of bf16 bit patterns (uint16): exact."""
    import numpy as np

    return (np.asarray(bits).astype(np.uint32) << np.uint32(16)).view(np.float32)


# ---- dot ------------------------------------------------------------------------------------------------


def _patch_dot(builder, interpreter) -> None:
    original = builder.create_dot

    def create_dot(self, a, b, d, input_precision, max_num_imprecise_acc):
        import numpy as np

        bf16 = [getattr(h.dtype.scalar, "name", "") == "bf16" for h in (a, b)]
        if not any(bf16) or d.dtype.scalar.name not in ("fp32", "fp16"):
            return original(self, a, b, d, input_precision, max_num_imprecise_acc)
        a_data, b_data = (_bf16_to_f32(h.data) if wide else h.data for h, wide in zip((a, b), bf16, strict=True))
        product = np.matmul(a_data, b_data, dtype=np.float32).astype(d.data.dtype) + d.data
        _used.add("bf16_dot")
        return interpreter.TensorHandle(product, d.dtype.scalar)

    builder.create_dot = create_dot
