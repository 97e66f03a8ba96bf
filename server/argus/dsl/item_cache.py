"""Parsed top-level items, kept by their text, so a keystroke re-parses only the item it lands in.

A file is parsed item by item (argus.dsl.parser), and parsing is most of the cost of checking a long file
(a 1,000-line file of 58 kernels: about 80 % of 300 ms). An item whose text did not change parses to the same
tree; if lines were added or removed above it, the same tree with every span moved by that many lines. The
cache hands out copies, so no caller can change what another one sees.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import OrderedDict
from typing import Any

from argus.dsl import ast
from argus.dsl.diagnostics import Diagnostic, shifted_diagnostic
from argus.dsl.spans import Span

# Fields of syntax-tree nodes that hold a line number of the file outside a Span (tests/dsl/test_item_cache.py
# checks that moving an item moves every one of them).
LINE_NUMBERS = frozenset({"body_line"})


def shifted(value: Any, delta: int) -> Any:
    """A deep copy of a syntax tree (or part of one) with every span `delta` lines further down."""
    if isinstance(value, Span):
        return Span(value.line + delta, value.col, value.end_line + delta, value.end_col) if delta else value
    if isinstance(value, list):
        return [shifted(v, delta) for v in value]
    if isinstance(value, tuple):
        return tuple(shifted(v, delta) for v in value)
    if isinstance(value, dict):
        return {k: shifted(v, delta) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        copy = object.__new__(type(value))
        for f in dataclasses.fields(value):
            field = getattr(value, f.name)
            moved = field + delta if f.name in LINE_NUMBERS and isinstance(field, int) else shifted(field, delta)
            object.__setattr__(copy, f.name, moved)
        return copy
    return value


class ItemCache:
    """Least recently used items, keyed by their text, at most `capacity` of them and `max_chars` of their text
    together (thread-safe: checks of different documents may run at once). A parsed item takes about 40 times
    the memory of its text (an 1,100-character kernel: 49 KB), so the text bound is the one that holds: 1 M
    characters of items is about 40 MB, the items of some 30,000 lines."""

    def __init__(self, capacity: int = 4096, max_chars: int = 1_000_000) -> None:
        self.capacity = capacity
        self.max_chars = max_chars
        self._items: OrderedDict[str, tuple[int, ast.Item, list[Diagnostic]]] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    def get(self, text: str, start: int) -> tuple[ast.Item, list[Diagnostic]] | None:
        with self._lock:
            found = self._items.get(text)
            if found is None:
                return None
            self._items.move_to_end(text)
        line, item, diagnostics = found
        delta = start - line
        return shifted(item, delta), [shifted_diagnostic(d, delta) for d in diagnostics]

    def put(self, text: str, start: int, item: ast.Item, diagnostics: list[Diagnostic]) -> None:
        entry = (start, shifted(item, 0), [shifted_diagnostic(d, 0) for d in diagnostics])
        with self._lock:
            if text not in self._items:
                self._chars += len(text)
            self._items[text] = entry
            self._items.move_to_end(text)
            while len(self._items) > 1 and (len(self._items) > self.capacity or self._chars > self.max_chars):
                dropped, _ = self._items.popitem(last=False)
                self._chars -= len(dropped)

    def __len__(self) -> int:
        return len(self._items)
