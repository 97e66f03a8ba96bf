"""Hover as Markdown: the type, dtype, symbolic shape, tags and layout of the value under the cursor; builtin docs."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from argus.analysis import lookup
from argus.dsl import ir
from argus.dsl.builtins import BUILTINS, CONSTANTS, DTYPES, METHODS, POLICY_SETTINGS
from argus.dsl.kernel_analysis import constant_text

if TYPE_CHECKING:
    from argus.analysis.snapshot import Analysis
    from argus.dsl.scope import SymbolUse
    from argus.verify.kernel import ValueLayout

TILE_TYPE = re.compile(r"^(?P<dtype>\w+)\[(?P<dims>.*)\]$")

KIND_WORDS = {
    "param": "parameter",
    "size": "problem size",
    "constant": "tile constant",
    "variable": "value",
    "loop": "loop index",
    "builtin": "builtin",
    "dtype": "dtype",
    "policy": "policy setting",
    "kernel": "kernel, launched by this model",
}


def hover_text(
    analysis: Analysis, line: int, col: int, symbol: SymbolUse | None, layouts: Sequence[ValueLayout]
) -> str | None:
    """The hover for (line, col), where `symbol` (looked up by the caller) is the symbol there, if any."""
    if symbol is not None:
        return describe_symbol(analysis, symbol, layouts)
    word = lookup.word_at(analysis.lines, line, col)
    if word is None:
        return None
    if word in BUILTINS:
        return builtin_doc(word)
    if word in METHODS:
        entry = METHODS[word]
        return f"```argus\n{entry.signature}\n```\n{entry.doc}"
    if word in DTYPES:
        return f"dtype `{word}`: {DTYPES[word]}"
    if word in CONSTANTS:
        return f"`{word}`: {CONSTANTS[word]}"
    if word in POLICY_SETTINGS:
        return f"policy setting `{word}`: {POLICY_SETTINGS[word]}"
    return None


def builtin_doc(name: str) -> str:
    entry = BUILTINS[name]
    return f"```argus\n{entry.signature}\n```\n{entry.doc}"


def describe_symbol(analysis: Analysis, symbol: SymbolUse, layouts: Sequence[ValueLayout]) -> str:
    if symbol.kind == "builtin":
        return builtin_doc(symbol.name)
    if symbol.kind == "dtype":
        return f"dtype `{symbol.name}`: {DTYPES.get(symbol.name, symbol.type)}"
    if symbol.kind == "policy":
        return f"policy setting `{symbol.name} {symbol.type}`: {POLICY_SETTINGS.get(symbol.name, '')}"
    found = lookup.kernel_at(analysis.check, symbol.span.line)
    kernel_ir = found[1] if found else None
    parts = [f"```argus\n{symbol.name}: {symbol.type}\n```", f"*{KIND_WORDS.get(symbol.kind, symbol.kind)}*"]
    if symbol.kind == "constant" and kernel_ir is not None and symbol.name in kernel_ir.constants:
        constant = kernel_ir.constants[symbol.name]
        parts[0] = f"```argus\ntile {symbol.name} = {constant_text(constant.value)}\n```"
        if constant.tune:
            parts.append(f"tune: {', '.join(constant_text(v) for v in constant.tune)}")
    match = TILE_TYPE.match(symbol.type)
    if match is not None and symbol.kind in ("variable", "param"):
        dims = [d.strip() for d in match.group("dims").split(",")]
        parts.append(f"dtype `{match.group('dtype')}` · shape `[{', '.join(dims)}]`" + resolved(dims, kernel_ir))
    for layout in layouts_of(symbol, layouts):
        if layout.rendered is not None:  # never render here: only the solver thread may touch z3 terms
            parts.append(f"layout and tags:\n```\n{layout.rendered}\n```")
    return "\n\n".join(parts)


def resolved(dims: list[str], kernel_ir: ir.KernelIR | None) -> str:
    """` = [128, 64]` when every dimension is a tile constant or a number."""
    if kernel_ir is None:
        return ""
    values = []
    for dim in dims:
        if dim.isdigit():
            values.append(dim)
        elif dim in kernel_ir.constants:
            values.append(str(kernel_ir.constants[dim].value))
        else:
            return ""
    return f" = `[{', '.join(values)}]`" if values != dims else ""


def layouts_of(symbol: SymbolUse, layouts: Sequence[ValueLayout]) -> list[ValueLayout]:
    """The verifier's layout of the value this symbol names: the one computed where it was last assigned (the
    layout's span is the assigned expression, on the line of the definition)."""
    anchor = symbol.definition or symbol.span
    for layout in layouts:
        if layout.name == symbol.name and layout.span.line == anchor.line:
            return [layout]
    return []
