"""What a checked `model` item is: its parameters, its temporaries and its kernel launches, in order.

A model runs no code of its own: code generation turns it into a Python function that allocates the
temporaries and calls each kernel's launcher (docs/codegen.md), and the gate runs that function against the
model's reference. Everything here is plain data over the kernels' own IR (argus.dsl.ir).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from argus.dsl import ir
from argus.dsl.spans import Span
from argus.dsl.types import DType, SizeExpr, TensorT


@dataclass(frozen=True, slots=True)
class Temporary:
    """`t = empty((R, 2), f32)`: a tensor the model allocates for the launches to pass each other."""

    name: str
    dtype: DType
    shape: tuple[SizeExpr, ...]  # over the model's size symbols
    zeroed: bool  # `zeros(...)`: starts at zero, so it counts as written
    span: Span  # the statement

    @property
    def type(self) -> TensorT:
        return TensorT(self.dtype, self.shape, False)


@dataclass(frozen=True, slots=True)
class LaunchArg:
    """One argument of a launch, for the kernel parameter `param`.

    kind "tensor": `value` names a model tensor parameter or a temporary; "scalar": a model scalar parameter;
    "size": a model size symbol (an int); "number": `value` is the literal number itself.
    """

    param: str
    kind: str
    value: str | int | float
    span: Span


@dataclass(slots=True)
class Launch:
    """`normalize(x, stats, y)`: one launch of a kernel of the file, its arguments in the kernel's parameter
    order (a scalar left to its default is absent), and how each of the kernel's size symbols follows from the
    model's: `bindings["M"] == SizeExpr("R")` (M is R), `SizeExpr("R", 1)` (M is R + 1), `SizeExpr(None, 2)`."""

    kernel: str
    args: list[LaunchArg]
    bindings: dict[str, SizeExpr]
    span: Span

    @property
    def line(self) -> int:
        return self.span.line + 1

    def arg(self, param: str) -> LaunchArg | None:
        return next((a for a in self.args if a.param == param), None)


@dataclass(slots=True)
class ModelIR:
    """A model, shaped like a kernel where the problem module and the gate read it: `params`, `sizes` (the
    size symbols, in order of first use) and `constants` (none: a model has no tile constants)."""

    name: str
    params: list[ir.ParamIR]
    sizes: dict[str, ir.Value]
    temporaries: list[Temporary]
    launches: list[Launch]
    span: Span
    constants: dict[str, ir.Constant] = field(default_factory=dict)

    def tensor(self, name: str) -> ir.ParamIR | None:
        return next((p for p in self.params if p.name == name and isinstance(p.type, TensorT)), None)

    def temporary(self, name: str) -> Temporary | None:
        return next((t for t in self.temporaries if t.name == name), None)

    @property
    def kernels(self) -> list[str]:
        """The kernels it launches, each once, in order of first launch."""
        return list(dict.fromkeys(launch.kernel for launch in self.launches))
