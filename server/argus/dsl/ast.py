"""The Argus syntax tree. Every node carries the exact span of the text it came from."""

from __future__ import annotations

from dataclasses import dataclass, field

from argus.dsl.spans import Span

# ---- expressions ---------------------------------------------------------------------------------


@dataclass(slots=True)
class Name:
    id: str
    span: Span


@dataclass(slots=True)
class Int:
    value: int
    span: Span


@dataclass(slots=True)
class Float:
    value: float
    span: Span


@dataclass(slots=True)
class Bool:
    value: bool
    span: Span


@dataclass(slots=True)
class NoneLit:
    span: Span


@dataclass(slots=True)
class Str:
    value: str
    span: Span


@dataclass(slots=True)
class BinOp:
    op: str  # + - * / // % @ ** & | ^ << >>
    left: Expr
    right: Expr
    span: Span


@dataclass(slots=True)
class UnaryOp:
    op: str  # - + ~ not
    operand: Expr
    span: Span


@dataclass(slots=True)
class Compare:
    op: str  # < <= > >= == !=
    left: Expr
    right: Expr
    span: Span


@dataclass(slots=True)
class BoolOp:
    op: str  # and | or
    left: Expr
    right: Expr
    span: Span


@dataclass(slots=True)
class Keyword:
    name: str
    name_span: Span
    value: Expr
    span: Span


@dataclass(slots=True)
class Call:
    func: Expr  # a Name for builtins, an Attribute for methods such as x.to(f16)
    args: list[Expr]
    keywords: list[Keyword]
    span: Span


@dataclass(slots=True)
class Attribute:
    value: Expr
    attr: str
    attr_span: Span
    span: Span


@dataclass(slots=True)
class FullSlice:
    """A bare `:` inside a subscript."""

    span: Span


@dataclass(slots=True)
class Subscript:
    value: Expr
    indices: list[Expr | FullSlice]
    span: Span


@dataclass(slots=True)
class Tuple:
    elts: list[Expr]
    span: Span


@dataclass(slots=True)
class List:
    elts: list[Expr]
    span: Span


Expr = (
    Name
    | Int
    | Float
    | Bool
    | NoneLit
    | Str
    | BinOp
    | UnaryOp
    | Compare
    | BoolOp
    | Call
    | Attribute
    | Subscript
    | Tuple
    | List
)

# ---- statements ----------------------------------------------------------------------------------


@dataclass(slots=True)
class Setting:
    """`NAME = value [tune [a, b, ...]]` inside `tile` and `policy` declarations."""

    name: str
    name_span: Span
    value: Expr
    tune: List | None
    span: Span


@dataclass(slots=True)
class TileDecl:
    settings: list[Setting]
    span: Span


@dataclass(slots=True)
class PolicyDecl:
    settings: list[Setting]
    span: Span


@dataclass(slots=True)
class LayoutDecl:
    """`layout B: K`: tensor parameter B's axis named K is contiguous in memory (stride 1)."""

    tensor: Name
    axis: Name
    span: Span


@dataclass(slots=True)
class Requires:
    conditions: list[Expr]
    span: Span


@dataclass(slots=True)
class Grid:
    dims: list[Expr]
    span: Span


@dataclass(slots=True)
class Invariant:
    condition: Expr
    span: Span


@dataclass(slots=True)
class Assign:
    targets: list[Name]
    value: Expr
    span: Span


@dataclass(slots=True)
class AugAssign:
    target: Name
    op: str  # the binary operator: + - * / // % & |
    value: Expr
    span: Span


@dataclass(slots=True)
class ExprStmt:
    expr: Expr
    span: Span


@dataclass(slots=True)
class Pass:
    span: Span


@dataclass(slots=True)
class ErrorStmt:
    """A statement that did not parse; its diagnostic is already reported.

    `names` are the names it seems to assign (`x, y = ...`, `for k in ...`): later layers treat them as
    defined but of unknown type, so one broken line does not cause an error at every use of its names.
    """

    span: Span
    body: list[Stmt] = field(default_factory=list)
    names: list[str] = field(default_factory=list)


@dataclass(slots=True)
class For:
    var: Name
    iter: Expr  # range(...) or static_range(...)
    body: list[Stmt]
    span: Span


@dataclass(slots=True)
class If:
    condition: Expr
    body: list[Stmt]
    orelse: list[Stmt]
    span: Span


Stmt = (
    TileDecl
    | PolicyDecl
    | LayoutDecl
    | Requires
    | Grid
    | Invariant
    | Assign
    | AugAssign
    | ExprStmt
    | Pass
    | ErrorStmt
    | For
    | If
)

# ---- top-level items -----------------------------------------------------------------------------


@dataclass(slots=True)
class Param:
    name: str
    name_span: Span
    is_out: bool  # the kernel writes it: `out` or `inout`
    dtype: Name
    shape: list[Expr] | None  # None for a scalar parameter
    default: Expr | None
    span: Span
    is_inout: bool = False  # `inout`: read and written in place (is_out is True too)
    view: list[Expr] | None = None  # `as [B, C * H * W]`: the view the kernel indexes (shape: as stored)
    view_span: Span | None = None  # the `as [...]` clause

    @property
    def mode(self) -> str:
        """The word before the dtype: "out", "inout" or "" for an input."""
        return "inout" if self.is_inout else "out" if self.is_out else ""


@dataclass(slots=True)
class Kernel:
    name: str
    name_span: Span
    params: list[Param]
    body: list[Stmt]
    span: Span
    broken_params: list[str] = field(default_factory=list)  # names of parameters that did not parse


@dataclass(slots=True)
class Model:
    """`model NAME(params):`: kernel launches in order, with the temporaries they pass each other. Its body
    parses as a kernel's; the analyzer (argus.dsl.models) accepts only temporaries and launches."""

    name: str
    name_span: Span
    params: list[Param]
    body: list[Stmt]
    span: Span
    broken_params: list[str] = field(default_factory=list)  # names of parameters that did not parse


@dataclass(slots=True)
class Tolerance:
    """`tolerance 2e-3` (every floating output) or `tolerance C = 2e-3, D = 1e-3` on a reference's header: the
    tol the gate compares those outputs with, in place of their dtype's (docs/gate.md)."""

    value: Expr | None
    bindings: list[Binding]
    span: Span


@dataclass(slots=True)
class PythonBlock:
    """`reference NAME(args):` or `inputs NAME:` followed by a Python body (PyTorch code)."""

    kind: str  # "reference" | "inputs"
    kernel: str
    kernel_span: Span
    params: list[Name] | None
    body: str  # the dedented body text
    body_line: int  # line of the body's first line in the file
    body_indent: int  # columns removed by dedenting
    span: Span
    tolerance: Tolerance | None = None  # a reference's declared tolerance


@dataclass(slots=True)
class Binding:
    name: str
    name_span: Span
    value: Expr
    span: Span


@dataclass(slots=True)
class SizeSet:
    name: str
    name_span: Span
    bindings: list[Binding]
    span: Span


@dataclass(slots=True)
class Sizes:
    kernel: str
    kernel_span: Span
    sets: list[SizeSet]
    span: Span


@dataclass(slots=True)
class ErrorItem:
    """A top-level item that did not parse."""

    span: Span


Item = Kernel | Model | PythonBlock | Sizes | ErrorItem


@dataclass(slots=True)
class Module:
    items: list[Item]
    span: Span

    @property
    def kernels(self) -> list[Kernel]:
        return [item for item in self.items if isinstance(item, Kernel)]

    @property
    def models(self) -> list[Model]:
        return [item for item in self.items if isinstance(item, Model)]


def walk_stmts(stmts: list[Stmt]):
    """Every statement in a body, nested ones included, in source order."""
    for stmt in stmts:
        yield stmt
        if isinstance(stmt, For | ErrorStmt):
            yield from walk_stmts(stmt.body)
        elif isinstance(stmt, If):
            yield from walk_stmts(stmt.body)
            yield from walk_stmts(stmt.orelse)
