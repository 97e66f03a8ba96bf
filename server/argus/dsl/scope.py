"""What a name means inside a kernel, and the values expressions produce during analysis."""

from __future__ import annotations

from dataclasses import dataclass, field

from argus.dsl import ir
from argus.dsl.spans import Span
from argus.dsl.types import ErrorT, Shape, Type


@dataclass(slots=True)
class Ref:
    """A tensor access `T[i, j]` with its indices already broadcast-compatible with the access tile."""

    tensor: ir.Value
    name: str
    indices: list[ir.Value]
    shape: Shape


@dataclass(slots=True)
class V:
    """The analysis result of an expression: a type, and the IR value computing it when it has one."""

    type: Type
    value: ir.Value | None = None
    ref: Ref | None = None
    elts: list[V] | None = None
    span: Span | None = None

    @property
    def const(self):
        return getattr(self.type, "const", None)


ERROR = V(ErrorT())


@dataclass(slots=True)
class Binding:
    kind: str  # param | size | constant | variable | loop | unavailable
    v: V
    span: Span  # where it was defined
    note: str = ""  # for unavailable names: why


@dataclass(slots=True)
class Scope:
    names: dict[str, Binding] = field(default_factory=dict)
    parent: Scope | None = None

    def lookup(self, name: str) -> Binding | None:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.names:
                return scope.names[name]
            scope = scope.parent
        return None

    def child(self) -> Scope:
        return Scope(parent=self)

    def all_names(self) -> set[str]:
        names: set[str] = set()
        scope: Scope | None = self
        while scope is not None:
            names |= scope.names.keys()
            scope = scope.parent
        return names


@dataclass(slots=True)
class SymbolUse:
    """A name in the source and what it resolved to: for hover and go-to-definition."""

    span: Span
    name: str
    kind: str  # param | size | constant | variable | loop | builtin | dtype | policy
    type: str
    definition: Span | None
