"""A line-level pre-pass that makes error recovery possible.

It splits a file into top-level items (so a broken kernel never hides the next one) and an item into
logical lines (a statement with its bracketed continuation lines), so that the parser can replace one bad
statement and parse the rest. It also finds unbalanced brackets, which an LALR parser reports far from
where the mistake is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

OPENERS = {"(": ")", "[": "]", "{": "}"}
CLOSERS = {")": "(", "]": "[", "}": "{"}
TOP_LEVEL_KEYWORDS = ("kernel", "model", "reference", "inputs", "sizes")


@dataclass(frozen=True, slots=True)
class BracketError:
    line: int
    col: int
    char: str
    unclosed: bool  # True: an opener never closed; False: a closer with no opener


@dataclass(frozen=True, slots=True)
class LogicalLine:
    start: int  # first physical line
    end: int  # one past the last physical line
    indent: int
    header: bool  # ends with ':' and opens an indented block


def indentation(line: str) -> int:
    width = 0
    for ch in line:
        if ch == " ":
            width += 1
        elif ch == "\t":
            width = (width // 8 + 1) * 8
        elif ch == "\f":
            width = 0
        else:
            break
    return width


def is_code(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


BRACKET_OR_SKIP = re.compile(r"""[()\[\]{}]|"[^"]*"?|'[^']*'?|#""")


def bracket_events(line: str) -> list[tuple[int, str]]:
    """Brackets on one line outside strings and comments, with their columns."""
    events = []
    for match in BRACKET_OR_SKIP.finditer(line):
        text = match.group()
        if text == "#":
            break
        if len(text) == 1 and text not in "\"'":
            events.append((match.start(), text))
    return events


STATEMENT_START = re.compile(
    r"\s*(?:(?:tile|policy|layout|requires|grid|invariant|for|if|elif|else|pass|kernel|model|reference|inputs|sizes)\b"
    r"|(?:store|atomic_add|atomic_max|atomic_min|atomic_xchg|atomic_cas|tag|assert_tag)\s*\("
    r"|[A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*\s*(?:=(?!=)|[-+*/%&|]=|//=))"
)


def starts_statement(line: str) -> bool:
    """Whether a line reads as the start of a statement rather than a bracketed continuation.

    An unclosed bracket must not swallow the statements after it; a continuation line that is indented
    less than its statement (which Python allows) must not end it either.
    """
    return STATEMENT_START.match(line) is not None


def code_length(line: str) -> int:
    """Length of a line without its trailing comment and spaces."""
    for match in BRACKET_OR_SKIP.finditer(line):
        if match.group() == "#":
            return len(line[: match.start()].rstrip())
    return len(line.rstrip())


def code_line_ends_with_colon(line: str) -> bool:
    return line[: code_length(line)].endswith(":")


def with_colon(line: str) -> str:
    """The line with ':' right after its code. A space before a trailing comment gives way to it, so every
    column the tree records stays where the user wrote it."""
    end = code_length(line)
    rest = line[end:]
    if rest[:1].isspace():
        rest = rest[1:]
    return line[:end] + ":" + rest


BLOCK_KEYWORD = re.compile(r"\s*([A-Za-z_]\w*)")
STATEMENT_BLOCKS = ("for", "if", "elif", "else")


def block_keyword(line: str) -> str | None:
    """The keyword of a line that opens a block with ':' (`kernel`, `sizes`, `for`, ...), else None."""
    match = BLOCK_KEYWORD.match(line)
    word = match.group(1) if match else ""
    return word if word in TOP_LEVEL_KEYWORDS or word in STATEMENT_BLOCKS else None


def missing_colon_message(keyword: str) -> str:
    """Names the block the user opened: `expected ':' after the kernel header`, `... the `for` header`."""
    shown = keyword if keyword in TOP_LEVEL_KEYWORDS else f"`{keyword}`"
    return f"expected ':' after the {shown} header"


def leading_space(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def split_items(lines: list[str]) -> list[tuple[int, int]]:
    """Line ranges of the top-level items: each starts at a code line in column 0.

    A column-0 line inside open brackets continues the item, unless it starts with a top-level keyword:
    an unclosed bracket must not swallow the rest of the file.
    """
    starts: list[int] = []
    depth = 0
    for number, line in enumerate(lines):
        if is_code(line) and indentation(line) == 0:
            word = line.split(None, 1)[0].split("(", 1)[0].rstrip(":")
            if depth == 0 or word in TOP_LEVEL_KEYWORDS:
                starts.append(number)
                depth = 0
        for _, ch in bracket_events(line):
            depth = depth + 1 if ch in OPENERS else max(depth - 1, 0)
    ends = [*starts[1:], len(lines)] if starts else []
    # Trailing blank and comment lines belong to the item above them; keep them, they parse as newlines.
    return list(zip(starts, ends, strict=True))


def logical_lines(lines: list[str], start: int, end: int) -> tuple[list[LogicalLine], list[BracketError]]:
    """The statements of an item, each a range of physical lines, and the bracket errors found."""
    result: list[LogicalLine] = []
    errors: list[BracketError] = []
    number = start
    while number < end:
        if not is_code(lines[number]):
            number += 1
            continue
        first = number
        indent = indentation(lines[first])
        stack: list[tuple[int, int, str]] = []
        while True:
            for col, ch in bracket_events(lines[number]):
                if ch in OPENERS:
                    stack.append((number, col, ch))
                elif stack and stack[-1][2] == CLOSERS[ch]:
                    stack.pop()
                else:
                    errors.append(BracketError(number, col, ch, unclosed=False))
            number += 1
            if not stack:
                break
            following = next((k for k in range(number, end) if is_code(lines[k])), end)
            if following >= end:
                break
            # An item header (column 0) with an unclosed bracket ends where its body starts, and so does a
            # block header (`if (a < b:`) whose ':' made it in.
            opens_block = code_line_ends_with_colon(lines[number - 1])
            if (indent == 0 or opens_block or indentation(lines[following]) <= indent) and starts_statement(
                lines[following]
            ):
                break
            number = following
        if stack:
            line, col, ch = stack[-1]
            errors.append(BracketError(line, col, ch, unclosed=True))
        following = next((k for k in range(number, end) if is_code(lines[k])), None)
        # A statement followed by a deeper line opens a block, whether or not its ':' made it in.
        header = following is not None and indentation(lines[following]) > indent
        result.append(LogicalLine(first, number, indent, header))
    return result, errors
