"""A broken block header costs one diagnostic, never a cascade (issue 22).

Each case breaks one header of a complete, clean file (a kernel with a loop and an if/elif/else chain, its
inputs, reference and sizes) and runs the whole check (parse and analysis, warnings included): exactly one
diagnostic comes back, an error on the header's line, and the rest of the file is still analysed, so a real
mistake elsewhere in the body is still reported.
"""

from __future__ import annotations

import pytest

from argus.dsl import ast
from argus.dsl.check import check_source
from argus.dsl.diagnostics import Diagnostic

CLEAN = """\
kernel k(x: f32[M, N], y: out f32[M, N], offsets: i32[E + 1]):
    tile BN = 128
    grid (M,)
    row = program_id(0)
    acc = zeros((BN,), f32)
    for c0 in range(0, N, BN):
        cols = c0 + arange(BN)
        acc += load(x[row, cols], mask=cols < N, other=0)
    if row == 0:
        t = 1
    elif row == 1:
        t = 2
    else:
        t = 3
    cols = arange(BN)
    store(y[row, cols], acc * t, mask=cols < N)

inputs k(offsets):
    return torch.arange(E + 1).to(torch.int32) * M // E

reference k(x, offsets):
    return x * 3

sizes k:
    small: M = 4, N = 200, E = 2
"""

KERNEL_HEADER = "kernel k(x: f32[M, N], y: out f32[M, N], offsets: i32[E + 1]):"

# (header as written, header as broken, the message expected at its line or None to accept the parser's)
MISSING_COLONS = [
    (KERNEL_HEADER, KERNEL_HEADER[:-1], "expected ':' after the kernel header"),
    ("for c0 in range(0, N, BN):", "for c0 in range(0, N, BN)", "expected ':' after the `for` header"),
    ("if row == 0:", "if row == 0", "expected ':' after the `if` header"),
    ("elif row == 1:", "elif row == 1", "expected ':' after the `elif` header"),
    ("else:", "else", "expected ':' after the `else` header"),
    ("inputs k(offsets):", "inputs k(offsets)", "expected ':' after the inputs header"),
    ("reference k(x, offsets):", "reference k(x, offsets)", "expected ':' after the reference header"),
    ("sizes k:", "sizes k", "expected ':' after the sizes header"),
]

OTHER_HEADER_SLIPS = [
    (KERNEL_HEADER, KERNEL_HEADER + ")", "unmatched ')'"),
    (KERNEL_HEADER, KERNEL_HEADER.replace("1]):", "1]:"), "'(' was never closed"),
    (KERNEL_HEADER, KERNEL_HEADER[:-1] + ";", None),
    (KERNEL_HEADER, KERNEL_HEADER.replace("i32[E + 1]", "3"), None),
    ("if row == 0:", "if row = 0:", None),
    ("if row == 0:", "if (row == 0:", "'(' was never closed"),
    ("elif row == 1:", "elif row = 1:", None),
    ("else:", "else if:", None),
]


def break_header(header: str, broken: str) -> tuple[str, int, int]:
    """CLEAN with one header replaced: the text, the header's 0-based line and the broken line's length."""
    lines = CLEAN.split("\n")
    (line,) = [n for n, text in enumerate(lines) if text.strip() == header]
    indent = lines[line][: len(lines[line]) - len(lines[line].lstrip())]
    lines[line] = indent + broken
    return "\n".join(lines), line, len(lines[line])


def test_the_clean_file_is_clean():
    assert [d.message for d in check_source(CLEAN).diagnostics] == []


def only_diagnostic(text: str) -> Diagnostic:
    diagnostics = check_source(text).diagnostics
    assert len(diagnostics) == 1, [d.text_line("k.argus") for d in diagnostics]
    return diagnostics[0]


@pytest.mark.parametrize(("header", "broken", "message"), MISSING_COLONS, ids=[m[1].split()[0] for m in MISSING_COLONS])
def test_a_header_without_its_colon_is_one_error_at_its_end(header, broken, message):
    text, line, end = break_header(header, broken)
    diagnostic = only_diagnostic(text)
    assert (diagnostic.code, diagnostic.severity.value, diagnostic.message) == ("AR001", "error", message)
    # The error underlines the header's last character: where the ':' belongs.
    assert (diagnostic.range.start.line, diagnostic.range.start.character) == (line, end - 1)
    assert (diagnostic.range.end.line, diagnostic.range.end.character) == (line, end)


@pytest.mark.parametrize(
    ("header", "broken", "message"), OTHER_HEADER_SLIPS, ids=[f"{m[1][:14]}..{m[1][-8:]}" for m in OTHER_HEADER_SLIPS]
)
def test_other_slips_in_a_header_are_one_error_on_its_line(header, broken, message):
    text, line, _ = break_header(header, broken)
    diagnostic = only_diagnostic(text)
    assert diagnostic.severity.value == "error"
    assert diagnostic.range.start.line == line
    if message is not None:
        assert diagnostic.message == message


@pytest.mark.parametrize(("header", "broken", "message"), MISSING_COLONS, ids=[m[1].split()[0] for m in MISSING_COLONS])
def test_the_body_after_a_header_without_its_colon_is_still_analysed(header, broken, message):
    text, line, _ = break_header(header, broken)
    text = text.replace("store(y[row, cols], acc * t,", "store(y[row, cols], acc * tt,")
    diagnostics = [(d.code, d.range.start.line) for d in check_source(text).diagnostics]
    store_line = CLEAN.split("\n").index("    store(y[row, cols], acc * t, mask=cols < N)")
    assert sorted(diagnostics) == sorted([("AR001", line), ("AR101", store_line)])


def test_a_kernel_header_without_its_colon_keeps_its_parameters_and_body():
    text, _, _ = break_header(KERNEL_HEADER, KERNEL_HEADER[:-1])
    (kernel,) = check_source(text).module.kernels
    assert [p.name for p in kernel.params] == ["x", "y", "offsets"]
    assert [type(s) for s in kernel.body][-3:] == [ast.If, ast.Assign, ast.ExprStmt]


def test_a_loop_header_without_its_colon_is_still_a_loop():
    text, _, _ = break_header("for c0 in range(0, N, BN):", "for c0 in range(0, N, BN)")
    (kernel,) = check_source(text).module.kernels
    loop = next(s for s in kernel.body if isinstance(s, ast.For))
    assert loop.var.id == "c0"
    assert [type(s) for s in loop.body] == [ast.Assign, ast.AugAssign]


def test_a_missing_colon_before_a_comment_keeps_the_comment_out_of_the_message():
    broken = KERNEL_HEADER[:-1] + "  # the kernel"
    text, line, _ = break_header(KERNEL_HEADER, broken)
    diagnostic = only_diagnostic(text)
    assert diagnostic.message == "expected ':' after the kernel header"
    assert diagnostic.range.start.line == line
    assert diagnostic.range.start.character == len(KERNEL_HEADER) - 2


def test_every_missing_colon_in_one_file_is_reported_once():
    text = CLEAN
    for header, broken, _ in MISSING_COLONS:
        text = text.replace(header + "\n", broken + "\n", 1)
    messages = sorted(d.message for d in check_source(text).diagnostics)
    assert messages == sorted(message for _, _, message in MISSING_COLONS)
