"""`Analysis`: one version of one document, checked, and every editor question about it answered as plain data.

A snapshot never changes once made (what it computes on request is memoized in it, keyed by the question), so
a request that reads one never sees a half-applied edit, and answers for an older version are answers about
that version's text. Positions are Argus positions: 0-based lines, code-point columns (argus.dsl.spans.Span).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from argus.analysis import completion, hover, lookup, outline, skill_actions, verdicts

if TYPE_CHECKING:
    from argus.analysis.completion import Completion, Signature
    from argus.analysis.host import AnalysisHost
    from argus.analysis.outline import OutlineItem
    from argus.analysis.quick_fixes import QuickFix
    from argus.dsl import ast, ir
    from argus.dsl.check import CheckResult
    from argus.dsl.diagnostics import Diagnostic
    from argus.dsl.inlay_hints import InlayHint
    from argus.dsl.scope import SymbolUse
    from argus.dsl.spans import Span
    from argus.skills.facts import KernelFacts
    from argus.skills.provider import Edit, ProviderRegistry, SkillAction
    from argus.skills.situation import Compiled
    from argus.verify.api import VerifyResult
    from argus.verify.kernel import ValueLayout


@dataclass(frozen=True, slots=True, eq=False)
class Analysis:
    uri: str
    version: int
    text: str
    check: CheckResult
    lines: Sequence[str]  # as the parser numbers them (argus.dsl.lines.split_lines)
    host: AnalysisHost | None = field(default=None, repr=False)  # what snapshots share (the verifier's cache)
    # answers that cost a verification, by question: filled once, never changed
    _verdicts: dict[tuple[str, int, int], VerifyResult] = field(default_factory=dict, repr=False)
    _fixes: dict[tuple[str, tuple[Edit, ...], int, int | None], bool] = field(default_factory=dict, repr=False)

    # ---- lookups ------------------------------------------------------------------------------------
    def symbol_at(self, line: int, col: int) -> SymbolUse | None:
        return lookup.symbol_at(self.check, line, col)

    def kernel_at(self, line: int) -> tuple[ast.Kernel, ir.KernelIR | None] | None:
        return lookup.kernel_at(self.check, line)

    # ---- hover --------------------------------------------------------------------------------------
    def hover(self, line: int, col: int, layouts: Sequence[ValueLayout] = ()) -> str | None:
        """Markdown for (line, col), or None; `layouts` are the verifier's value layouts for this text, of which
        only those already rendered are shown."""
        return hover.hover_text(self, line, col, self.symbol_at(line, col), layouts)

    def layouts_at(self, line: int, col: int, layouts: Sequence[ValueLayout]) -> list[ValueLayout]:
        """The layouts a hover at (line, col) would show, rendered or not (the caller renders them first)."""
        symbol = self.symbol_at(line, col)
        return hover.layouts_of(symbol, layouts) if symbol is not None else []

    # ---- inlay hints --------------------------------------------------------------------------------
    def inlay_hints(self, within: Span, layouts: Sequence[ValueLayout] = ()) -> list[InlayHint]:
        """Tile types after assignment targets and, from `layouts` (the verifier's, rendered: reading a
        layout's text renders it), layout summaries, on the lines of `within` (argus.dsl.inlay_hints)."""
        from argus.dsl.inlay_hints import inlay_hints  # the language core's, loaded with the first check

        return inlay_hints(self.check, within, layouts)

    # ---- completion ---------------------------------------------------------------------------------
    def completions(self, line: int, col: int) -> list[Completion]:
        """What may be typed at (line, col): only methods after a dot, else the names in scope and the
        language's own."""
        return completion.completions(self, line, col)

    def signature(self, line: int, col: int) -> Signature | None:
        """The builtin call the cursor is inside and the parameter it is at."""
        return completion.signature(self.lines, line, col)

    # ---- navigation ---------------------------------------------------------------------------------
    def definition(self, line: int, col: int) -> Span | None:
        return outline.definition(self, line, col)

    def outline(self) -> list[OutlineItem]:
        return outline.outline(self)

    # ---- the verifier -------------------------------------------------------------------------------
    def verdicts(self, part: str, timeout_ms: int, rlimit: int) -> VerifyResult:
        """The verifier's diagnostics and layouts for one part ("declared", "tune" or "all"), computed once per
        (part, budget) and sharing the host's cache. Runs z3: call it on the thread that owns z3."""
        key = (part, timeout_ms, rlimit)
        if key not in self._verdicts:
            cache = self.host.verify_cache if self.host is not None else None
            self._verdicts[key] = verdicts.verdicts(self.check, part, timeout_ms, rlimit, cache)
        return self._verdicts[key]

    # ---- quick fixes --------------------------------------------------------------------------------
    def fixes(self, diagnostic: Diagnostic) -> list[QuickFix]:
        """The fixes of one diagnostic of this text that still check; a verifier diagnostic's fix is offered
        only once `fix_verifies` says so."""
        from argus.analysis.quick_fixes import fixes_for  # loads the language core's parser

        return fixes_for(self.text, self.check.module, diagnostic)

    def fix_verdict(self, fix: QuickFix, timeout_ms: int, rlimit: int | None) -> bool | None:
        """What `fix_verifies` answered for this fix and budget, or None when it has not been asked."""
        return self._fixes.get((fix.title, fix.edits, timeout_ms, rlimit))

    def fix_verifies(self, fix: QuickFix, timeout_ms: int, rlimit: int | None = None) -> bool:
        """Whether the verifier, run on the fixed text, no longer reports the fixed diagnostic (memoized per
        fix and budget: editors ask for the light bulb again on every cursor move). Runs z3."""
        key = (fix.title, fix.edits, timeout_ms, rlimit)
        if key not in self._fixes:
            cache = self.host.verify_cache if self.host is not None else None
            self._fixes[key] = verdicts.fix_removes(self.text, fix, timeout_ms, rlimit, cache)
        return self._fixes[key]

    # ---- skills -------------------------------------------------------------------------------------
    def skill_actions(
        self,
        span: Span,
        registry: ProviderRegistry,
        compiled: Mapping[str, Compiled] | None = None,
    ) -> list[SkillAction]:
        """What `registry`'s providers propose for `span` (applicable with edits for this text, or disabled
        with the failed precondition). `compiled`: per kernel, the spill stores and the registers a thread a
        gate compile of this very text measured, where one did."""
        return skill_actions.skill_actions(self, span, registry, compiled)

    def skill_facts(self, kernel: str) -> KernelFacts | None:
        """The facts skill preconditions are stated over (argus.skills.facts), for the kernel named `kernel`."""
        from argus.skills.facts import kernel_facts

        found = next((k for k in self.check.module.kernels if k.name == kernel), None)
        return None if found is None else kernel_facts(self.check, found)
