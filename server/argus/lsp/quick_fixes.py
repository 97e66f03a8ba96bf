"""Quick fixes built from diagnostics: their code, message and structured `data`.

Each fix is checked before it is offered: the edited document must check with no more errors than before and
without the diagnostic it fixes (for the verifier's diagnostics, without new type errors; re-verifying on
every light-bulb request would be too slow).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from argus.dsl import ast
from argus.dsl.check import check_source
from argus.dsl.diagnostics import Diagnostic
from argus.dsl.spans import Span
from argus.lsp.tuning_skills import apply_edits
from argus.skills.provider import Edit

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
    lines = text.splitlines()
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
            value = int(current.group(1))
            below = max((w for w in NUM_WARPS if w < value), default=None)
            above = min((w for w in NUM_WARPS if w > value), default=None)
            for choice in (below, above):
                if choice is not None:
                    yield QuickFix(f"Use num_warps = {choice}", (Edit(span, f"num_warps = {choice}"),), d)
    if is_bounds(d):
        fix = mask_access(lines, module, d)
        if fix is not None:
            yield fix
    if d.code == "AR310":
        fix = align_contraction(lines, module, d)
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


def failing_axes(d: Diagnostic) -> set[int]:
    """The tensor axes the counterexample indexes outside the extent (empty: not known, mask every axis)."""
    values = (d.data.get("counterexample") or {}).get("values") or {}
    index: dict[int, int] = {}
    extent: dict[int, int] = {}
    for name, value in values.items():
        match = AXIS_VALUE.search(str(name))
        if match is not None and isinstance(value, int):
            (index if match.group(1) == "index" else extent)[int(match.group(2))] = value
    return {axis for axis, i in index.items() if axis in extent and not 0 <= i < extent[axis]}


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
    """The innermost load, store or atomic_add call whose span holds the diagnostic's start."""
    best = None
    kernel = kernel_of(module, span.line)
    if kernel is None:
        return None
    for stmt in ast.walk_stmts(kernel.body):
        for node in expressions(stmt):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("load", "store", "atomic_add")
                and node.args
                and isinstance(node.args[0], ast.Subscript)
                and (node.span.line, node.span.col) <= (span.line, span.col) <= (node.span.end_line, node.span.end_col)
            ):
                best = node
    return best


def expressions(node) -> Iterator:
    """Every expression node under a statement or expression (not into nested statement bodies)."""
    stack = [node]
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


def mask_access(lines: list[str], module: ast.Module, d: Diagnostic) -> QuickFix | None:
    call = access_call(module, span_of(d))
    kernel = kernel_of(module, d.range.start.line)
    if call is None or kernel is None:
        return None
    access: ast.Subscript = call.args[0]
    tensor = next((p for p in kernel.params if isinstance(access.value, ast.Name) and p.name == access.value.id), None)
    if tensor is None or tensor.shape is None or len(tensor.shape) != len(access.indices):
        return None
    existing = next((k for k in call.keywords if k.name == "mask"), None)
    if existing is not None:
        return complete_mask(lines, access, tensor, existing, d)
    failing = failing_axes(d)
    parts = []
    for position, (index, dim) in enumerate(zip(access.indices, tensor.shape, strict=True)):
        if isinstance(index, ast.FullSlice):
            return None
        if isinstance(index, ast.Int) or (failing and position not in failing):
            parts.append(None)
            continue
        parts.append(f"{text_of(lines, index.span)} < {text_of(lines, dim.span)}")
    if all(p is None for p in parts):
        return None
    # one entry per axis (None: no condition there); a scalar index drops its axis from the access, and the
    # check that every fix goes through rejects the tuple then
    mask = parts[0] if len(parts) == 1 else "(" + ", ".join(p or "None" for p in parts) + ")"
    keywords = f", mask={mask}" + (", other=0" if call.func.id == "load" else "")
    last = call.args[-1].span if not call.keywords else call.keywords[-1].span
    where = Span(last.end_line, last.end_col, last.end_line, last.end_col)
    return QuickFix(f"Mask the access: mask={mask}", (Edit(where, keywords),), d, preferred=True)


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
    call = None
    for stmt in ast.walk_stmts(kernel.body if kernel else []):
        for node in expressions(stmt):
            is_dot = isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dot"
            if is_dot and node.span.line == d.range.start.line and len(node.args) >= 2:
                call = node
    if call is None or not all(isinstance(arg, ast.Name) for arg in call.args[:2]):
        return None
    a = loaded_access(assignment_before(kernel, call.args[0].id, call.span.line))
    b_stmt = assignment_before(kernel, call.args[1].id, call.span.line)
    b = loaded_access(b_stmt)
    if a is None or b is None or len(a[1].indices) != 2 or len(b[1].indices) != 2:
        return None
    ka, kb = text_of(lines, a[1].indices[-1].span), text_of(lines, b[1].indices[0].span)
    if ka == kb:
        return None
    load_span = b[0].span
    old = text_of(lines, load_span)
    new = re.sub(r"(?<![\w.])" + re.escape(kb) + r"(?![\w(])", ka, old)
    name = call.args[1].id
    title = f"Load `{name}` at `{call.args[0].id}`'s K index: `{kb}` → `{ka}`"
    return QuickFix(title, (Edit(load_span, new),), d, preferred=True)


def complete_mask(lines: list[str], access: ast.Subscript, tensor: ast.Param, mask: ast.Keyword, d: Diagnostic):
    """`mask=(None, rk < K)` with axis 0 out of bounds: put the condition where the None is."""
    failing = failing_axes(d)
    entries = mask.value.elts if isinstance(mask.value, ast.Tuple) else None
    if not failing or entries is None or len(entries) != len(access.indices):
        return None
    edits = []
    for axis in sorted(failing):
        entry, index = entries[axis], access.indices[axis]
        if not isinstance(entry, ast.NoneLit) or isinstance(index, ast.FullSlice):
            return None
        condition = f"{text_of(lines, index.span)} < {text_of(lines, tensor.shape[axis].span)}"
        edits.append(Edit(entry.span, condition))
    conditions = ", ".join(e.new_text for e in edits)
    return QuickFix(f"Mask the access: {conditions}", tuple(edits), d, preferred=True)
