"""Quick fixes built from diagnostics: their code, message and structured `data`.

Each fix is checked before it is offered: the edited document must check with no more errors than before and
without the diagnostic it fixes. A fix of the verifier's diagnostic is only type-checked here; it is offered
only if the verifier, run on the fixed text, agrees (argus.analysis.verdicts.fix_removes, which a server runs
on its solver thread), so a verifier fix may come in several candidates, narrowest first (mask_access), of
which the caller keeps those that work.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from argus.dsl import ast, ir
from argus.dsl.check import check_source
from argus.dsl.diagnostics import Diagnostic
from argus.dsl.lines import split_lines
from argus.dsl.spans import Span
from argus.dsl.types import shape_of
from argus.dsl.unparse import without_parens
from argus.skills.provider import Edit
from argus.skills.text import apply_edits

DID_YOU_MEAN = re.compile(r"did you mean `([^`]+)`\?")
CAST_HINT = re.compile(r"write `\.to\((\w+)\)`")
REQUIRES_HINT = re.compile(r"`requires ([^`]+)`")
NUM_WARPS = (1, 2, 4, 8, 16, 32)


@dataclass(frozen=True, slots=True)
class QuickFix:
    title: str
    edits: tuple[Edit, ...]
    diagnostic: Diagnostic
    preferred: bool = False


def span_of(d: Diagnostic) -> Span:
    return Span(d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character)


def text_of(lines: list[str], span: Span) -> str:
    if span.line == span.end_line:
        return lines[span.line][span.col : span.end_col] if span.line < len(lines) else ""
    parts = [lines[span.line][span.col :], *lines[span.line + 1 : span.end_line], lines[span.end_line][: span.end_col]]
    return "\n".join(parts)


def fixes_for(text: str, module: ast.Module, diagnostic: Diagnostic) -> list[QuickFix]:
    lines = split_lines(text)  # as the parser numbers them: a form feed in a comment is not a line break
    found = list(candidates(lines, module, diagnostic))
    return [fix for fix in found if still_checks(text, fix)]


def candidates(lines: list[str], module: ast.Module, d: Diagnostic) -> Iterator[QuickFix]:
    span = span_of(d)
    if (match := DID_YOU_MEAN.search(d.message)) is not None:
        yield QuickFix(f"Replace with `{match.group(1)}`", (Edit(span, match.group(1)),), d, preferred=True)
    if d.code == "AR212" and (match := CAST_HINT.search(d.message)) is not None:
        value = text_of(lines, span)
        wrapped = value if re.fullmatch(r"[\w.]+(\(.*\))?", value) else f"({value})"
        yield QuickFix(
            f"Convert explicitly: `.to({match.group(1)})`", (Edit(span, f"{wrapped}.to({match.group(1)})"),), d
        )
    if d.code == "AR403" and "num_warps" in d.message:
        current = re.fullmatch(r"num_warps\s*=\s*(\d+)", text_of(lines, span).strip())
        if current is not None:
            warps = int(current.group(1))
            below = max((w for w in NUM_WARPS if w < warps), default=None)
            above = min((w for w in NUM_WARPS if w > warps), default=None)
            for choice in (below, above):
                if choice is not None:
                    yield QuickFix(f"Use num_warps = {choice}", (Edit(span, f"num_warps = {choice}"),), d)
    if is_bounds(d):
        yield from mask_access(lines, module, d)
    if d.code == "AR310":
        fix = align_contraction(lines, module, d)
        if fix is not None:
            yield fix
    if d.code == "AR320":
        fix = widen_operands(lines, module, d)
        if fix is not None:
            yield fix
    if (requirement := requirement_hint(d)) is not None:
        fix = add_requires(lines, module, d, requirement)
        if fix is not None:
            yield fix


def still_checks(text: str, fix: QuickFix) -> bool:
    before = check_source(text)
    after = check_source(apply_edits(text, fix.edits))
    errors = [x for x in after.diagnostics if x.severity.value == "error"]
    if len(errors) > sum(x.severity.value == "error" for x in before.diagnostics):
        return False
    if fix.diagnostic.code.startswith("AR3"):
        return True  # the verifier's own: fixed if it stops reporting it, which we do not re-run here
    # a fix of the checker's diagnostic must make that diagnostic go away
    return not any(x.code == fix.diagnostic.code and x.message == fix.diagnostic.message for x in after.diagnostics)


# ---- verifier diagnostics -----------------------------------------------------------------------------
def is_bounds(d: Diagnostic) -> bool:
    kind = str(d.data.get("kind", "")) + " " + str((d.data.get("counterexample") or {}).get("kind", ""))
    return "bound" in kind or "out of bounds" in d.message


def requirement_hint(d: Diagnostic) -> str | None:
    for key in ("requires", "hint"):
        value = d.data.get(key)
        if isinstance(value, str) and value.strip():
            match = REQUIRES_HINT.search(value) or re.match(r"\s*requires\s+(.+)", value)
            if match is not None:
                return match.group(1).strip()
            if key == "requires":
                return value.strip()
    match = REQUIRES_HINT.search(d.message)
    return match.group(1).strip() if match else None


AXIS_VALUE = re.compile(r"\b(index|extent) (\d+)\b")


def axis_values(d: Diagnostic) -> tuple[dict[int, int], dict[int, int]]:
    """The counterexample's index and extent of each tensor axis (`x index 1 (N) = 1024`, `x extent 1 = 1000`)."""
    values = (d.data.get("counterexample") or {}).get("values") or {}
    index: dict[int, int] = {}
    extent: dict[int, int] = {}
    for name, value in values.items():
        match = AXIS_VALUE.search(str(name))
        if match is not None and isinstance(value, int) and not isinstance(value, bool):
            (index if match.group(1) == "index" else extent)[int(match.group(2))] = value
    return index, extent


def failing_axes(d: Diagnostic) -> set[int]:
    """The tensor axes the counterexample indexes outside the extent (empty: not known, mask every axis)."""
    index, extent = axis_values(d)
    return {axis for axis, i in index.items() if axis in extent and not 0 <= i < extent[axis]}


def negative_axes(d: Diagnostic) -> set[int]:
    """The axes the counterexample indexes below 0: `i < N` alone would not keep those in bounds."""
    index, _ = axis_values(d)
    return {axis for axis, i in index.items() if i < 0}


def kernel_of(module: ast.Module, line: int) -> ast.Kernel | None:
    return next((k for k in module.kernels if k.span.line <= line <= k.span.end_line), None)


def add_requires(lines: list[str], module: ast.Module, d: Diagnostic, requirement: str) -> QuickFix | None:
    kernel = kernel_of(module, d.range.start.line)
    if kernel is None or not kernel.body:
        return None
    existing = next((s for s in kernel.body if isinstance(s, ast.Requires)), None)
    title = f"Add `requires {requirement}`"
    if existing is not None:
        end = existing.conditions[-1].span
        return QuickFix(
            title, (Edit(Span(end.end_line, end.end_col, end.end_line, end.end_col), f", {requirement}"),), d
        )
    # after the tile and policy declarations, where the language reference puts requires
    after = [s for s in kernel.body if isinstance(s, ast.TileDecl | ast.PolicyDecl)]
    anchor = after[-1].span.end_line + 1 if after else kernel.body[0].span.line
    indent = " " * kernel.body[0].span.col
    return QuickFix(title, (Edit(Span(anchor, 0, anchor, 0), f"{indent}requires {requirement}\n"),), d)


def access_call(module: ast.Module, span: Span) -> ast.Call | None:
    """The innermost load, store or masked atomic call (ACCESS_CALLS) whose span holds the diagnostic's start."""
    best = None
    kernel = kernel_of(module, span.line)
    if kernel is None:
        return None
    for stmt in ast.walk_stmts(kernel.body):
        for node in expressions(stmt):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ACCESS_CALLS
                and node.args
                and isinstance(node.args[0], ast.Subscript)
                and (node.span.line, node.span.col) <= (span.line, span.col) <= (node.span.end_line, node.span.end_col)
            ):
                best = node
    return best


def expressions(node: ast.Stmt | ast.Expr) -> Iterator[object]:
    """Every expression node under a statement or expression (not into nested statement bodies); found by
    reflection over the nodes' slots, so also keywords and settings: callers test what they get."""
    stack: list[object] = [node]
    while stack:
        current = stack.pop()
        yield current
        for name in getattr(current, "__slots__", ()):
            if name in ("body", "orelse"):
                continue
            child = getattr(current, name, None)
            if isinstance(child, list):
                stack.extend(c for c in child if hasattr(c, "span"))
            elif hasattr(child, "span") and not isinstance(child, Span):
                stack.append(child)


# the accesses that take a mask (atomic_cas takes none, as in Triton)
ACCESS_CALLS = ("load", "store", "atomic_add", "atomic_max", "atomic_min", "atomic_xchg")
BINDS_LOOSER_THAN_LESS = ("&", "|", "^")


@dataclass(frozen=True, slots=True)
class AxisIndex:
    """One index of a tensor access, with what a mask for its axis needs."""

    axis: int  # the tensor axis
    text: str  # the index as written, parenthesized where `<` would bind into it
    extent: str  # the tensor's extent on this axis, as its parameter declares it
    rank: int  # 0: a scalar (drops its axis); 1: a vector (one axis of an outer product); 2+: a broadcast tile
    literal: bool

    def conditions(self, lower: bool) -> list[str]:
        upper = f"{self.text} < {self.extent}"
        return [f"{self.text} >= 0", upper] if lower else [upper]

    def condition(self, lower: bool) -> str:
        return conjunction(self.conditions(lower))


def conjunction(conditions: list[str]) -> str:
    """`a < N`, or `(a < N) & (b < M)`: `&` binds tighter than `<`, so a comparison joined by `&` gets
    parentheses (a name or an already bracketed condition does not need them)."""
    if len(conditions) == 1:
        return conditions[0]
    return " & ".join(f"({c})" if has_top_level_operator(c) else c for c in conditions)


def has_top_level_operator(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if depth == 0 and ch in "<>=&|^!":
            return True
    return False


def is_outer_product(axes: list[AxisIndex]) -> bool:
    """Two or more vector indices and no tile: the access is their outer product, one axis each."""
    return all(a.rank <= 1 for a in axes) and sum(a.rank == 1 for a in axes) >= 2


def mask_text(axes: list[AxisIndex], chosen: set[int], lower: set[int]) -> str | None:
    """A mask bounding the chosen tensor axes, in the form the language reads for the access's shape: one
    condition for a 1-D or scalar access (`offs < N`, `(row < M) & (cols < N)`), one entry per access axis for
    an outer product (`(rm < M, None)`), one conjunction for a broadcast access."""
    conditions = {a.axis: a.condition(a.axis in lower) for a in axes if a.axis in chosen}
    if not conditions:
        return None
    if not is_outer_product(axes):
        return conjunction([c for a in axes if a.axis in chosen for c in a.conditions(a.axis in lower)])
    vectors = [a for a in axes if a.rank == 1]
    entries = [conditions.get(a.axis) for a in vectors]
    scalars = [c for a in axes if a.rank == 0 and a.axis in chosen for c in a.conditions(a.axis in lower)]
    if scalars:  # a scalar index drops its axis: its condition joins the first entry
        entries[0] = conjunction(scalars + [e for e in entries[:1] if e is not None])
    return "(" + ", ".join(e or "None" for e in entries) + ")"


def spread_condition(axes: list[AxisIndex], axis: AxisIndex, condition: str) -> str:
    """A vector's condition placed on its axis of an outer-product access (`(rm < M)[:, None]`), so that it
    can be combined with `&` with a mask of the access's whole shape."""
    vectors = [a.axis for a in axes if a.rank == 1]
    where = ", ".join(":" if k == axis.axis else "None" for k in vectors)
    return f"({condition})[{where}]"


def mentions(text: str, index: str) -> bool:
    return re.search(r"(?<![\w.])" + re.escape(index) + r"(?![\w(])", text) is not None


def operand_text(lines: list[str], expr: ast.Expr) -> str:
    text = text_of(lines, expr.span)
    return f"({text})" if isinstance(expr, ast.BinOp) and expr.op in BINDS_LOOSER_THAN_LESS else text


def index_ranks(text: str, kernel_name: str, call: ast.Call) -> list[int] | None:
    """The rank of each index as the analyzer typed it, before the outer-product rule spread the vectors over
    the access's axes."""
    kernel = check_source(text).analysis.kernels.get(kernel_name)
    if kernel is None:
        return None
    op = next((op for op in ir.walk_ops(kernel.body) if op.kind in ACCESS_CALLS and op.span == call.span), None)
    if op is None:
        return None
    ranks = []
    for value in ir.memory_access(op).indices:
        producer = value.op
        spread = producer is not None and producer.kind == "expand_dims" and producer.span == call.args[0].span
        typed = producer.operands[0] if producer is not None and spread else value
        ranks.append(len(shape_of(typed.type)))
    return ranks


def access_axes(lines: list[str], kernel: ast.Kernel, call: ast.Call) -> list[AxisIndex] | None:
    access = call.args[0]
    if not isinstance(access, ast.Subscript) or not isinstance(access.value, ast.Name):
        return None
    name = access.value.id
    tensor = next((p for p in kernel.params if p.name == name), None)
    if tensor is None or tensor.shape is None or len(tensor.shape) != len(access.indices):
        return None
    indices = [index for index in access.indices if not isinstance(index, ast.FullSlice)]
    if len(indices) != len(access.indices):
        return None
    ranks = index_ranks("\n".join(lines), kernel.name, call)
    if ranks is None or len(ranks) != len(indices):
        return None
    return [
        AxisIndex(axis, operand_text(lines, index), text_of(lines, dim.span), rank, isinstance(index, ast.Int))
        for axis, (index, dim, rank) in enumerate(zip(indices, tensor.shape, ranks, strict=True))
    ]


def axes_to_mask(axes: list[AxisIndex], d: Diagnostic) -> list[set[int]]:
    """Which axes to bound, narrowest first: those the counterexample puts out of bounds, then (the counterexample
    shows one element, so another axis may fail as well) every axis a vector or tile indexes. The server offers
    only what the verifier proves, so the first of these that suffices is kept."""
    maskable = {a.axis for a in axes if not a.literal}
    failing = failing_axes(d) & maskable
    wide = failing | {a.axis for a in axes if a.rank >= 1 and not a.literal}
    choices = [failing or maskable, wide]
    return [c for k, c in enumerate(choices) if c and c not in choices[:k]]


def mask_access(lines: list[str], module: ast.Module, d: Diagnostic) -> list[QuickFix]:
    call = access_call(module, span_of(d))
    kernel = kernel_of(module, d.range.start.line)
    if call is None or kernel is None:
        return []
    axes = access_axes(lines, kernel, call)
    if axes is None:
        return []
    existing = next((k for k in call.keywords if k.name == "mask"), None)
    lower = negative_axes(d)
    fixes: list[QuickFix] = []
    for chosen in axes_to_mask(axes, d):
        if existing is None:
            fix = add_mask(call, axes, chosen, lower, d)
        elif isinstance(existing.value, ast.Tuple):
            fix = complete_mask(lines, axes, existing, chosen, lower, d)
        else:
            fix = narrow_mask(lines, axes, existing, chosen, lower, d)
        if fix is not None and all(fix.edits != other.edits for other in fixes):
            fixes.append(fix)
    return fixes


def add_mask(
    call: ast.Call, axes: list[AxisIndex], chosen: set[int], lower: set[int], d: Diagnostic
) -> QuickFix | None:
    mask = mask_text(axes, chosen, lower)
    if mask is None:
        return None
    is_load = isinstance(call.func, ast.Name) and call.func.id == "load"
    needs_other = is_load and not any(k.name == "other" for k in call.keywords)
    keywords = f", mask={mask}" + (", other=0" if needs_other else "")
    last = call.args[-1].span if not call.keywords else call.keywords[-1].span
    where = Span(last.end_line, last.end_col, last.end_line, last.end_col)
    return QuickFix(f"Mask the access: mask={mask}", (Edit(where, keywords),), d, preferred=True)


def complete_mask(
    lines: list[str], axes: list[AxisIndex], mask: ast.Keyword, chosen: set[int], lower: set[int], d: Diagnostic
) -> QuickFix | None:
    """`mask=(None, rk < K)` with axis 0 out of bounds: put the condition where the None is."""
    if not isinstance(mask.value, ast.Tuple):
        return None
    vectors = [a for a in axes if a.rank == 1]
    entries = mask.value.elts
    if not is_outer_product(axes) or len(entries) != len(vectors):
        return None
    edits = []
    for entry, axis in zip(entries, vectors, strict=True):
        if axis.axis not in chosen:
            continue
        if not isinstance(entry, ast.NoneLit):
            return None  # a condition that is there and still lets the axis out: not a missing mask
        edits.append(Edit(entry.span, axis.condition(axis.axis in lower)))
    if not edits or any(a.rank == 0 and a.axis in chosen for a in axes):
        return None
    conditions = ", ".join(e.new_text for e in edits)
    return QuickFix(f"Mask the access: {conditions}", tuple(edits), d, preferred=True)


def narrow_mask(
    lines: list[str], axes: list[AxisIndex], mask: ast.Keyword, chosen: set[int], lower: set[int], d: Diagnostic
) -> QuickFix | None:
    """`mask=cols < N` with the row out of bounds: `mask=(cols < N) & (row < M)`. An axis whose index the mask
    already mentions is bounded wrongly, not left out, and is not masked a second time."""
    current = text_of(lines, mask.value.span)
    missing = [a for a in axes if a.axis in chosen and not mentions(current, a.text)]
    if not missing:
        return None
    conditions = [current]
    for axis in missing:
        if axis.rank == 1 and is_outer_product(axes):
            conditions.append(spread_condition(axes, axis, axis.condition(axis.axis in lower)))
        else:
            conditions += axis.conditions(axis.axis in lower)
    new = conjunction(conditions)
    return QuickFix(f"Mask the access: mask={new}", (Edit(mask.value.span, new),), d, preferred=True)


def assignment_before(kernel: ast.Kernel, name: str, line: int) -> ast.Assign | None:
    """The last `name = ...` above `line` in the kernel (source order; loops are not unrolled)."""
    found = None
    for stmt in ast.walk_stmts(kernel.body):
        if isinstance(stmt, ast.Assign) and stmt.span.line < line and [t.id for t in stmt.targets] == [name]:
            found = stmt
    return found


def loaded_access(stmt: ast.Assign | None) -> tuple[ast.Call, ast.Subscript] | None:
    value = stmt.value if stmt is not None else None
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "load"
        and value.args
        and isinstance(value.args[0], ast.Subscript)
    ):
        return value, value.args[0]
    return None


def align_contraction(lines: list[str], module: ast.Module, d: Diagnostic) -> QuickFix | None:
    """For `dot(a, b)` with a = load(A[..., ka]) and b = load(B[kb, ...]) where the verifier found ka != kb:
    load b at a's K index (every occurrence of kb in b's load, so its mask follows)."""
    kernel = kernel_of(module, d.range.start.line)
    if kernel is None:
        return None
    call = None
    for stmt in ast.walk_stmts(kernel.body):
        for node in expressions(stmt):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "dot"
                and node.span.line == d.range.start.line
                and len(node.args) >= 2
            ):
                call = node
    if call is None:
        return None
    first, second = call.args[0], call.args[1]
    if not isinstance(first, ast.Name) or not isinstance(second, ast.Name):
        return None
    a = loaded_access(assignment_before(kernel, first.id, call.span.line))
    b = loaded_access(assignment_before(kernel, second.id, call.span.line))
    if a is None or b is None or len(a[1].indices) != 2 or len(b[1].indices) != 2:
        return None
    ka, kb = text_of(lines, a[1].indices[-1].span), text_of(lines, b[1].indices[0].span)
    if ka == kb:
        return None
    load_span = b[0].span
    old = text_of(lines, load_span)
    new = re.sub(r"(?<![\w.])" + re.escape(kb) + r"(?![\w(])", ka, old)
    title = f"Load `{second.id}` at `{first.id}`'s K index: `{kb}` → `{ka}`"
    return QuickFix(title, (Edit(load_span, new),), d, preferred=True)


def widen_operands(lines: list[str], module: ast.Module, d: Diagnostic) -> QuickFix | None:
    """For `code - zero` computed in u8 (AR320): each operand that is not a literal converted to i32 first, so
    the operation runs in i32 (a literal takes the other operand's dtype)."""
    kernel = kernel_of(module, d.range.start.line)
    if kernel is None:
        return None
    start = (d.range.start.line, d.range.start.character)
    op = next(
        (
            node
            for stmt in ast.walk_stmts(kernel.body)
            for node in expressions(stmt)
            if isinstance(node, ast.BinOp) and (node.span.line, node.span.col) == start
        ),
        None,
    )
    if op is None:
        return None
    edits = []
    for operand in (op.left, op.right):
        if isinstance(operand, ast.Int | ast.Float):
            continue
        span, text = operand.span, text_of(lines, operand.span)
        line = lines[span.end_line] if span.end_line < len(lines) else ""
        before = lines[span.line][span.col - 1 : span.col] if span.col > 0 else ""
        if before == "(" and line[span.end_col : span.end_col + 1] == ")":  # written in parentheses
            end = Span(span.end_line, span.end_col + 1, span.end_line, span.end_col + 1)
            edits.append(Edit(end, ".to(i32)"))
        elif re.fullmatch(r"[\w.]+(\(.*\))?(\[.*\])?", text) or without_parens(text) != text:  # name, call, (...)
            edits.append(Edit(Span(span.end_line, span.end_col, span.end_line, span.end_col), ".to(i32)"))
        else:
            edits.append(Edit(span, f"({text}).to(i32)"))
    if not edits:
        return None
    return QuickFix(f"Compute `{op.op}` in i32: convert the operands first", tuple(edits), d, preferred=True)
