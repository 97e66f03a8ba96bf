"""The client's side of text synchronisation, written from the LSP specification and independent of the
server's code: a document as an editor holds it, random edits an editor could send, and whether a range lies
inside a text. The edit-stress test and bench/lsp_fuzz.py drive the server with it."""

from __future__ import annotations

import random
from dataclasses import dataclass

from lsprotocol import types

# What users paste: ordinary code, each kind of line break the protocol counts, and characters that other
# tools treat as line breaks or count as two UTF-16 units.
PIECES = [
    "x",
    "acc",
    " = ",
    "load(",
    ")",
    "    ",
    "\t",
    "# note ",
    "\n",
    "\r\n",
    "\r",
    "\f",
    "\v",
    "\u2028",
    "\u2029",
    "\u0085",
    "\x1c",
    "é",
    "ß",
    "中",
    "😀",
    "𝔸",
    "kernel k(X: f32[N]):\n",
    "    store(X[arange(4)], 1.0)\n",
]
UNIT_BYTES = {"utf-8": 1, "utf-16": 2, "utf-32": 4}


def lines_of(text: str) -> list[str]:
    """The lines of `text` without their breaks, as LSP counts them (\\n, \\r\\n and \\r only)."""
    lines, current, i = [], [], 0
    while i < len(text):
        char = text[i]
        if char == "\r" or char == "\n":
            lines.append("".join(current))
            current = []
            i += 2 if text.startswith("\r\n", i) else 1
            continue
        current.append(char)
        i += 1
    lines.append("".join(current))
    return lines


def units(text: str, encoding: str) -> int:
    """Length of `text` in the code units of `encoding` (the negotiated position encoding)."""
    codec = {"utf-8": "utf-8", "utf-16": "utf-16-le", "utf-32": "utf-32-le"}[encoding]
    return len(text.encode(codec)) // UNIT_BYTES[encoding]


@dataclass
class ClientDocument:
    text: str
    encoding: str = "utf-16"
    version: int = 1

    def offset(self, position: types.Position) -> int:
        lines = self.text_lines_with_breaks()
        offset = sum(len(line) for line in lines[: position.line])
        line = lines_of(self.text)[position.line]
        count = 0
        for i, char in enumerate(line):
            if count >= position.character:
                return offset + i
            count += units(char, self.encoding)
        return offset + len(line)

    def text_lines_with_breaks(self) -> list[str]:
        pieces, start, i = [], 0, 0
        while i < len(self.text):
            if self.text[i] in "\r\n":
                i += 2 if self.text.startswith("\r\n", i) else 1
                pieces.append(self.text[start:i])
                start = i
            else:
                i += 1
        pieces.append(self.text[start:])
        return pieces

    def apply(self, change: types.TextDocumentContentChangeEvent) -> None:
        if isinstance(change, types.TextDocumentContentChangeWholeDocument):
            self.text = change.text
            return
        begin, end = self.offset(change.range.start), self.offset(change.range.end)
        self.text = self.text[:begin] + change.text + self.text[end:]

    def random_position(self, rng: random.Random) -> types.Position:
        lines = lines_of(self.text)
        line = rng.randrange(len(lines))
        # only character boundaries: an editor never puts a position inside a surrogate pair
        boundaries = [0]
        for char in lines[line]:
            boundaries.append(boundaries[-1] + units(char, self.encoding))
        return types.Position(line=line, character=rng.choice(boundaries))

    def random_change(self, rng: random.Random) -> types.TextDocumentContentChangeEvent:
        inserted = "".join(rng.choice(PIECES) for _ in range(rng.choice([0, 0, 1, 1, 2, 5])))
        if rng.random() < 0.02:
            return types.TextDocumentContentChangeWholeDocument(text=self.text + inserted)
        a, b = self.random_position(rng), self.random_position(rng)
        if (b.line, b.character) < (a.line, a.character):
            a, b = b, a
        if rng.random() < 0.5:  # most edits are typing: an insertion at one point or a short deletion
            b = a
        return types.TextDocumentContentChangePartial(range=types.Range(start=a, end=b), text=inserted)

    def inside(self, r: types.Range) -> bool:
        lines = lines_of(self.text)

        def ok(p: types.Position) -> bool:
            return 0 <= p.line < len(lines) and 0 <= p.character <= units(lines[p.line], self.encoding)

        return ok(r.start) and ok(r.end) and (r.start.line, r.start.character) <= (r.end.line, r.end.character)
