"""A document a skill looks at: its text, the checker's result and the facts of each kernel, computed once."""

from __future__ import annotations

from dataclasses import dataclass, field

from argus.dsl import ast
from argus.dsl.check import CheckResult, check_source
from argus.dsl.spans import Span
from argus.skills.facts import KernelFacts, kernel_facts
from argus.skills.text import text_at


@dataclass(slots=True)
class Document:
    text: str
    check: CheckResult
    facts: dict[str, KernelFacts] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str, check: CheckResult | None = None) -> Document:
        check = check if check is not None else check_source(text)
        facts = {k.name: kernel_facts(check, k) for k in check.module.kernels if k.name}
        return cls(text=text, check=check, facts=facts)

    def kernels(self) -> list[ast.Kernel]:
        return [k for k in self.check.module.kernels if k.name in self.facts]

    def kernel_at(self, line: int) -> ast.Kernel | None:
        return next((k for k in self.kernels() if k.span.line <= line <= k.span.end_line), None)

    def source(self, span: Span) -> str:
        return text_at(self.text, span)
