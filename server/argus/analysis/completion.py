"""Completion (builtins, parameters, sizes, tile constants, values above the cursor, dtypes, policy settings,
keywords) and signature help, as plain data."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from argus.analysis import lookup
from argus.dsl.builtins import BUILTINS, CONSTANTS, DTYPES, METHODS, POLICY_SETTINGS
from argus.dsl.kernel_analysis import constant_text

if TYPE_CHECKING:
    from argus.analysis.snapshot import Analysis

KEYWORDS = (
    *("kernel", "tile", "policy", "layout", "requires", "grid"),
    *("for", "in", "if", "else", "invariant", "out", "inout", "as", "tune"),
)


class CompletionKind(StrEnum):
    VARIABLE = "variable"
    CONSTANT = "constant"
    METHOD = "method"
    FUNCTION = "function"
    DTYPE = "dtype"
    PROPERTY = "property"
    KEYWORD = "keyword"


SYMBOL_KINDS = {
    "param": CompletionKind.VARIABLE,
    "size": CompletionKind.CONSTANT,
    "constant": CompletionKind.CONSTANT,
    "variable": CompletionKind.VARIABLE,
    "loop": CompletionKind.VARIABLE,
}


@dataclass(frozen=True, slots=True)
class Completion:
    label: str
    kind: CompletionKind
    detail: str
    doc: str  # Markdown; empty when there is none
    call: bool = False  # a builtin: inserted with its opening parenthesis


@dataclass(frozen=True, slots=True)
class Signature:
    label: str  # the whole signature, as the builtins' table writes it
    doc: str  # Markdown
    parameters: tuple[str, ...]
    active: int  # the parameter the cursor is in


def completions(analysis: Analysis, line: int, col: int) -> list[Completion]:
    lines = analysis.lines
    before = lines[line][:col] if line < len(lines) else ""
    if re.search(r"\.\s*\w*$", before):  # after a dot: methods only
        return [Completion(name, CompletionKind.METHOD, m.signature, m.doc) for name, m in METHODS.items()]
    items: dict[str, Completion] = {}
    found = lookup.kernel_at(analysis.check, line)
    if found is not None and found[1] is not None:
        kernel = found[1]
        for param in kernel.params:
            items[param.name] = Completion(param.name, CompletionKind.VARIABLE, str(param.type), "parameter")
        for size in kernel.sizes:
            items.setdefault(size, Completion(size, CompletionKind.CONSTANT, "i32", "problem size"))
        for name, constant in kernel.constants.items():
            shown = f"= {constant_text(constant.value)}"
            items[name] = Completion(name, CompletionKind.CONSTANT, shown, "tile constant")
    # values assigned above the cursor in this kernel
    for symbol in analysis.check.analysis.symbols:
        defined_above = symbol.definition == symbol.span and symbol.span.line <= line
        in_kernel = found is None or found[0].span.line <= symbol.span.line
        if symbol.kind in ("variable", "loop") and defined_above and in_kernel:
            kind = SYMBOL_KINDS[symbol.kind]
            items.setdefault(symbol.name, Completion(symbol.name, kind, symbol.type, symbol.kind))
    for name, entry in BUILTINS.items():
        items.setdefault(name, Completion(name, CompletionKind.FUNCTION, entry.signature, entry.doc, call=True))
    for name, doc in DTYPES.items():
        items.setdefault(name, Completion(name, CompletionKind.DTYPE, "dtype", doc))
    for name, doc in CONSTANTS.items():
        items.setdefault(name, Completion(name, CompletionKind.CONSTANT, "f32", doc))
    if re.match(r"\s*policy\b", lines[line] if line < len(lines) else ""):
        for name, doc in POLICY_SETTINGS.items():
            items.setdefault(name, Completion(name, CompletionKind.PROPERTY, "policy", doc))
    for keyword in KEYWORDS:
        items.setdefault(keyword, Completion(keyword, CompletionKind.KEYWORD, "keyword", ""))
    return list(items.values())


def parameters_of(signature_text: str) -> list[str]:
    inner = signature_text[signature_text.index("(") + 1 : signature_text.rindex(")")] if "(" in signature_text else ""
    parts, depth, current = [], 0, ""
    for char in inner:
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    if current.strip():
        parts.append(current.strip())
    return parts


def signature(lines: Sequence[str], line: int, col: int) -> Signature | None:
    """The signature of the builtin call the cursor is inside, with the parameter it is at."""
    call = lookup.open_call(lines, line, col)
    if call is None:
        return None
    entry = BUILTINS.get(call.name) or METHODS.get(call.name)
    if entry is None:
        return None
    text = entry.signature.split(" -> ")[0].split(" or ")[0]
    params = parameters_of(text)
    active = call.argument
    if call.keyword is not None:
        named = [i for i, p in enumerate(params) if p.split("=")[0].strip("[] ") == call.keyword]
        active = named[0] if named else active
    return Signature(entry.signature, entry.doc, tuple(params), min(active, max(len(params) - 1, 0)))
