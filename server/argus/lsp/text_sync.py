"""The server's copy of a document, edited the way the client edits its own.

pygls keeps a copy too, but splits lines with `str.splitlines` (which also breaks at form feeds, U+2028 and
other characters LSP does not count) and clamps a character past the end of a line to one before it; either
makes its copy drift from the editor's. Here a line ends only at `\\n`, `\\r\\n` or `\\r`
(argus.dsl.lines), and a position past the end of a line or of the document means that end, as the protocol
says.
"""

from __future__ import annotations

from collections.abc import Sequence

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from argus.dsl.lines import LINE_BREAK, line_starts


def offset_at(text: str, starts: Sequence[int], position: types.Position, codec: PositionCodec) -> int:
    """The offset in `text` of a client position (in the negotiated encoding's code units)."""
    if position.line >= len(starts):
        return len(text)
    start = starts[max(position.line, 0)]
    end = starts[position.line + 1] if position.line + 1 < len(starts) else len(text)
    content = text[start:end]
    if (found := LINE_BREAK.search(content)) is not None:
        content = content[: found.start()]
    wanted = max(position.character, 0)
    if content.isascii():  # one code unit per character in every encoding
        return start + min(wanted, len(content))
    units = 0
    for col, char in enumerate(content):
        if units >= wanted:
            return start + col
        units += codec.client_num_units(char)
    return start + len(content)


def apply_change(text: str, change: types.TextDocumentContentChangeEvent, codec: PositionCodec) -> str:
    """`text` after one content change of a `didChange` (incremental with a range, or the whole text)."""
    if not isinstance(change, types.TextDocumentContentChangePartial):
        return change.text
    starts = line_starts(text)
    begin = offset_at(text, starts, change.range.start, codec)
    end = offset_at(text, starts, change.range.end, codec)
    if end < begin:  # a reversed range: the protocol does not allow it, so take it as the span between the two
        begin, end = end, begin
    return text[:begin] + change.text + text[end:]
