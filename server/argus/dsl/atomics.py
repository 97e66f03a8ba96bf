"""What each atomic write means to the layers that pair accesses up or start outputs (issue 20 item 3).

`atomic_add`, `atomic_max` and `atomic_min` *accumulate*: each is commutative and associative, so programs may
combine into one element in any order and the result is the same; an output they write starts at the
combination's identity (0, the dtype's lowest value, its highest), set by the launcher and the gate.
`atomic_xchg` and `atomic_cas` return the value the element held and leave one that depends on which program
came last (or first): the verifier treats them as plain writes (AR302 against any other program's write of the
element), and their outputs start at 0 so that the old value a program reads is defined.

One output takes atomics of one start: `atomic_add` and `atomic_max` into one tensor have no start that is the
identity of both (AR220, argus.dsl.calls.atomics).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from argus.dsl import ir
from argus.dsl.diagnostics import make
from argus.dsl.spans import Span

if TYPE_CHECKING:
    from argus.dsl.kernel_analysis import KernelAnalyzer
    from argus.dsl.scope import Ref

ATOMICS = ("atomic_add", "atomic_max", "atomic_min", "atomic_xchg", "atomic_cas")
WRITES = ("store", *ATOMICS)  # the IR kinds that write a tensor
ACCUMULATING = ("atomic_add", "atomic_max", "atomic_min")  # any order of programs gives the same result
RETURNS_OLD = ("atomic_xchg", "atomic_cas")  # a result: the values the elements held

# Where the launcher (codegen/runtime.py) and the gate (gate_correct.py) start an output an atomic writes:
# "zero", "lowest" (-inf for floats, the minimum of an integer dtype) or "highest".
START = {
    "atomic_add": "zero",
    "atomic_max": "lowest",
    "atomic_min": "highest",
    "atomic_xchg": "zero",
    "atomic_cas": "zero",
}
START_TEXT = {
    "zero": "0",
    "lowest": "its dtype's lowest value (-inf for floats)",
    "highest": "its dtype's highest value (inf for floats)",
}

# The dtypes Triton 3.9 takes for each (triton/language/semantic.py: no f16, bf16, i16 or 8-bit atomic max, min
# or xchg; atomic_cas on 16, 32 and 64 bits), that Argus has. atomic_add is not restricted here (as before).
DTYPES = {
    "atomic_max": ("i32", "i64", "f32", "f64"),
    "atomic_min": ("i32", "i64", "f32", "f64"),
    "atomic_xchg": ("i32", "i64", "f32", "f64"),
    "atomic_cas": ("i16", "i32", "i64", "f16", "bf16", "f32", "f64"),
}


def accumulated_outputs(body: ir.Block) -> dict[str, str]:
    """Each tensor an atomic of the body writes -> where it starts ("zero", "lowest", "highest"), in program
    order. The analyzer refuses one tensor written by atomics of different starts (AR220); should one reach
    here anyway, the first atomic's start is kept."""
    starts: dict[str, str] = {}
    for op in ir.walk_ops(body):
        if op.kind in START:
            starts.setdefault(op.attrs["tensor"], START[op.kind])
    return starts


def one_start(an: KernelAnalyzer, ref: Ref, kind: str, span: Span) -> bool:
    """AR220 when the tensor is already written by an atomic that starts it elsewhere."""
    first = an.atomics.setdefault(ref.name, (kind, span))
    if START[first[0]] == START[kind]:
        return True
    other, where = first
    message = (
        f"`{ref.name}` is written by {other} (line {where.line + 1}), which starts it at {START_TEXT[START[other]]}, "
        f"and by {kind}, which needs {START_TEXT[START[kind]]}: no start is the identity of both; accumulate each "
        "into an output of its own"
    )
    an.diagnostics.append(make("AR220", span, message, related=[(where, f"`{ref.name}` is written by {other} here")]))
    return False
