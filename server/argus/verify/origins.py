"""Where a tag was set: the related information of a failed tag assertion or invariant.

Walks the IR backward from the value an assertion reads: through the ops tags flow through, into a loop's
carried values (both what enters the loop and what the body yields), until a `tag(...)` op that sets the
tag, or a `load` that tags its tile by itself.
"""

from __future__ import annotations

from argus.dsl import ir
from argus.dsl.spans import Span

FLOWS = ("binary", "unary", "math", "where", "cast", "expand_dims", "reshape", "broadcast_to", "trans", "reduce")
MAX_SITES = 4


class TagOrigins:
    def __init__(self, kernel: ir.KernelIR):
        self.carried: dict[int, list[ir.Value]] = {}  # loop body argument -> init value and yielded value
        self.results: dict[int, list[ir.Value]] = {}  # loop or if result -> the values that flow into it
        for op in ir.walk_ops(kernel.body):
            if op.kind == "for":
                body = op.regions[0]
                inits = op.operands[3:]
                for arg, init, yielded in zip(body.args[1:], inits, body.yields, strict=False):
                    self.carried[arg.id] = [init, yielded]
                for result, init, yielded in zip(op.results, inits, body.yields, strict=False):
                    self.results[result.id] = [init, yielded]
            elif op.kind == "if":
                for index, result in enumerate(op.results):
                    self.results[result.id] = [r.yields[index] for r in op.regions if index < len(r.yields)]

    def sites(self, value: ir.Value, name: str) -> list[tuple[Span, str]]:
        found: list[tuple[Span, str]] = []
        seen: set[int] = set()
        stack = [value]
        while stack and len(found) < MAX_SITES:
            v = stack.pop()
            if v.id in seen:
                continue
            seen.add(v.id)
            if v.id in self.carried:
                stack.extend(self.carried[v.id])
                continue
            if v.id in self.results:
                stack.extend(self.results[v.id])
                continue
            op = v.op
            if op is None:
                continue
            if op.kind == "tag" and name in op.attrs["names"]:
                found.append((op.span, f"tag `{name}` of `{v.name or 'the value'}` is set here"))
                continue
            if op.kind == "load":
                found.append((op.span, f"tag `{name}` comes from this load's index"))
                continue
            if op.kind in FLOWS or op.kind in ("tag", "dot", "hint"):
                stack.extend(reversed(op.operands[:1] if op.kind in ("tag", "hint") else op.operands))
        return list(reversed(found))

    def reads(self, condition: ir.Value) -> list[tuple[Span, str]]:
        """The origins of every tag a condition reads (`a.k == b.k`)."""
        related: list[tuple[Span, str]] = []
        stack, seen = [condition], set()
        while stack:
            v = stack.pop()
            if v.id in seen or v.op is None:
                continue
            seen.add(v.id)
            if v.op.kind == "tag_read":
                for site in self.sites(v.op.operands[0], v.op.attrs["name"]):
                    if site not in related:
                        related.append(site)
                continue
            stack.extend(v.op.operands)
        return related[:MAX_SITES]
