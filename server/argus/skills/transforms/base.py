"""What a transform is: a rewrite of the AST delivered as minimal text edits, in two directions.

`forward` is the optimization a skill applies; `inverse` is its deoptimization, what the lineage walker applies
to an expert kernel. Both return Applications: where the rewrite would go, its edits, and every precondition
checked there (a named predicate from argus.skills.preconditions with what was found). An Application whose
preconditions do not all hold has no effect when applied: callers refuse it and name the first that failed.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from argus.dsl import ast
from argus.dsl.check import check_source
from argus.dsl.spans import Span
from argus.skills.document import Document
from argus.skills.facts import KernelFacts
from argus.skills.provider import Edit
from argus.skills.text import apply_edits

Direction = Literal["forward", "inverse"]
Param = int | float | str


@dataclass(frozen=True, slots=True)
class Check:
    """One precondition evaluated at one place: its registered name, whether it holds, and what was found."""

    name: str
    holds: bool
    found: str = ""


@dataclass(frozen=True, slots=True)
class Application:
    transform: str
    direction: Direction
    kernel: str
    anchor: Span  # the code the rewrite is about; a cursor on its lines matches it
    title: str
    params: dict[str, Param]
    edits: tuple[Edit, ...]
    checks: tuple[Check, ...] = ()

    @property
    def failed(self) -> Check | None:
        return next((c for c in self.checks if not c.holds), None)

    @property
    def applicable(self) -> bool:
        return self.failed is None and bool(self.edits)

    def result(self, text: str) -> str:
        return apply_edits(text, self.edits)


@dataclass(frozen=True)
class Transform:
    """Subclasses set the class attributes and implement `sites` (forward) and `inverse_sites`."""

    name: str = ""
    title: str = ""
    intent: str = ""
    anchor: str = ""  # the code shape it applies to, in words
    preconditions: tuple[str, ...] = field(default=())  # names, in the order they are checked
    # Whether the name of the setting a use changes makes it another skill: BM and BK of tile_size do different
    # things; the precision constant PREC is a name a kernel chose, and the skill is the same on a literal.
    setting_is_skill: bool = True

    def forward(self, doc: Document, params: dict[str, Param] | None = None, where=None) -> list[Application]:
        """Every forward site; `where(kernel, app)`, when given, picks sites before the (costly) re-check."""
        found = []
        for kernel in doc.kernels():
            for app in self.sites(doc, kernel, doc.facts[kernel.name], params or {}):
                if where is None or where(kernel, app):
                    found.append(finish(doc, kernel, app))
        return found

    def inverse(self, doc: Document) -> list[Application]:
        found = []
        for kernel in doc.kernels():
            for app in self.inverse_sites(doc, kernel, doc.facts[kernel.name]):
                found.append(finish(doc, kernel, app))
        return found

    def restoring(self, inverse: Application) -> dict[str, Param]:
        """The forward parameters that undo an inverse application exactly (text for text)."""
        return dict(inverse.params)

    def sites(self, doc: Document, kernel: ast.Kernel, facts: KernelFacts, params: dict) -> list[Application]:
        raise NotImplementedError

    def inverse_sites(self, doc: Document, kernel: ast.Kernel, facts: KernelFacts) -> list[Application]:
        raise NotImplementedError

    def app(self, direction: Direction, kernel: ast.Kernel, anchor: Span, title: str, params, edits, checks=()):
        return Application(self.name, direction, kernel.name, anchor, title, dict(params), tuple(edits), tuple(checks))


def finish(doc: Document, kernel: ast.Kernel, app: Application) -> Application:
    """Add the check every rewrite shares: the rewritten kernel must check with no more errors than before."""
    if not app.edits or app.failed is not None:
        return app
    edited = check_source(app.result(doc.text))
    errors = [
        d
        for d in edited.diagnostics
        if d.severity.value == "error"
        and any(k.name == kernel.name for k in kernel_span_at(edited, d.range.start.line))
    ]
    before = doc.facts[kernel.name].check_errors
    holds = len(errors) <= before
    found = "" if holds else f"the kernel would not check: {errors[0].code} {errors[0].message}"
    return replace(app, checks=(*app.checks, Check("still_checks", holds, found)))


def kernel_span_at(check, line: int) -> list[ast.Kernel]:
    return [k for k in check.module.kernels if k.span.line <= line <= k.span.end_line]
