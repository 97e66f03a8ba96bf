"""`parse` and the whole check never raise, and everything they return points inside the text they were given.

Hypothesis feeds it token soup, mutations of a real kernel and arbitrary text; then every prefix of every
example is parsed, as an editor sees a file being typed from the top.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from argus.dsl import ast
from argus.dsl.check import check_source
from argus.dsl.codes import CODES
from argus.dsl.diagnostics import Diagnostic
from argus.dsl.parser import ParseResult, parse
from argus.dsl.spans import Span

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "examples").glob("*.argus"))

SAMPLE = """\
# matmul with a bias epilogue
kernel matmul(A: f16[M, K], B: f16[K, N], C: out f16[M, N], bias: f32[N], alpha: f32 = 1.0):
    tile BM = 128, BN = 128 tune [64, 128, 256], BK = 64
    policy num_warps = 8, num_stages = 3
    requires K % BK == 0, M >= 16
    grid (cdiv(M, BM), cdiv(N, BN))
    pm, pn = program_id(0), program_id(1)
    rm = pm * BM + arange(BM)
    rn = pn * BN + arange(BN)
    acc = zeros((BM, BN), f32)
    for k in range(0, K, BK):
        rk = k + arange(BK)
        a = load(A[rm, rk], mask=(rm < M, rk < K), other=0)   # comment
        b = load(B[rk, rn], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = dot(a, b, acc, input_precision="tf32")
        invariant k % BK == 0
    if pm == 0:
        acc += 1
    elif pm > 2:
        pass
    else:
        acc = -acc ** 2 >> 1
    c = (acc * alpha + load(bias[rn])[None, :]).to(f16)
    store(C[rm, rn], c, mask=(rm < M, rn < N))

reference matmul(A, B, bias, alpha):
    return (A.float() @ B.float() * alpha + bias).half()

inputs matmul(bias):
    return torch.randn(N)

sizes matmul:
    small: M = 64, N = 64, K = 64
    large: M = 4096, N = 4096, K = 4096
"""

# ---- the property ----------------------------------------------------------------------------------------


def text_lines(text: str) -> list[str]:
    """Lines as an LSP client counts them (\\n, \\r\\n and \\r all end a line)."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def range_problems(lines: list[str], diagnostic: Diagnostic) -> list[str]:
    start, end = diagnostic.range.start, diagnostic.range.end
    shown = f"{diagnostic.code} {diagnostic.message!r} at {start.line}:{start.character}-{end.line}:{end.character}"
    if min(start.line, start.character, end.line, end.character) < 0:
        return [f"negative position: {shown}"]
    if (start.line, start.character) > (end.line, end.character):
        return [f"range ends before it starts: {shown}"]
    if end.line >= len(lines):
        return [f"range past the last line ({len(lines) - 1}): {shown}"]
    if start.character > len(lines[start.line]):
        return [f"range starts past the end of line {start.line} ({len(lines[start.line])}): {shown}"]
    if end.character > len(lines[end.line]):
        return [f"range ends past the end of line {end.line} ({len(lines[end.line])}): {shown}"]
    return []


def node_spans(tree):
    """(node, field, span) for every Span in a syntax tree; iterative, since `1 + 1 + ...` nests deeply."""
    stack = [(tree, None, "")]
    while stack:
        node, owner, field = stack.pop()
        if isinstance(node, Span):
            yield owner, field, node
        elif isinstance(node, list):
            stack.extend((child, owner, field) for child in node)
        elif dataclasses.is_dataclass(node):
            stack.extend((getattr(node, child.name), node, child.name) for child in dataclasses.fields(node))


def span_problem(lines: list[str], span: Span) -> str | None:
    if not (0 <= span.line < len(lines) and 0 <= span.end_line < len(lines)):
        return f"span {span} outside lines 0..{len(lines) - 1}"
    if (span.line, span.col) > (span.end_line, span.end_col):
        return f"span {span} ends before it starts"
    if not (0 <= span.col <= len(lines[span.line]) and span.end_col <= len(lines[span.end_line])):
        return f"span {span} outside its lines"
    return None


def problems_of(text: str) -> list[str]:
    """Everything wrong with checking text (parse, then analysis); an exception propagates."""
    parsed = parse(text)
    if not isinstance(parsed, ParseResult):
        return [f"parse returned {type(parsed).__name__}"]
    result = check_source(text)
    problems: list[str] = []
    if not isinstance(result.module, ast.Module) or not isinstance(result.diagnostics, list):
        return [f"bad result: module {type(result.module).__name__}, diagnostics {type(result.diagnostics).__name__}"]
    lines = text_lines(text)
    for diagnostic in result.diagnostics:
        if not isinstance(diagnostic, Diagnostic):
            problems.append(f"not a Diagnostic: {diagnostic!r}")
            continue
        if diagnostic.code not in CODES:
            problems.append(f"unregistered code {diagnostic.code}")
        if diagnostic.message.startswith(("internal parser error", "internal analyzer error")):
            problems.append(f"caught crash: {diagnostic.message}")
        problems += range_problems(lines, diagnostic)
    for item in result.module.items:
        if not isinstance(item, ast.Kernel | ast.Model | ast.PythonBlock | ast.Sizes | ast.ErrorItem):
            problems.append(f"not an item: {item!r}")
    for owner, field, span in node_spans(result.module):
        problem = span_problem(lines, span)
        if problem:
            problems.append(f"{type(owner).__name__}.{field}: {problem}")
    return problems


def assert_sound(text: str) -> None:
    problems = problems_of(text)
    assert not problems, f"parse({text!r}):\n" + "\n".join(problems)


# ---- (a) token soup --------------------------------------------------------------------------------------

KEYWORDS = ["kernel", "reference", "inputs", "sizes", "tile", "policy", "requires", "grid", "invariant", "pass"]
KEYWORDS += ["for", "in", "if", "elif", "else", "and", "or", "not", "out", "tune", "True", "False", "None"]
NAMES = ["x", "acc", "A", "M", "BM", "f16", "f32", "load", "range", "program_id", "to", "_"]
NUMBERS = ["0", "1", "128", "0x1F", "1_000", "1.5", ".5", "1e-5", "2."]
STRINGS = ['"tf32"', "'s'", '"open', "'"]
PUNCTUATION = ["(", ")", "[", "]", "{", "}", ":", ",", ".", "=", "$", "\\", "?", "@", "!", "é"]
OPERATORS = ["+", "-", "*", "**", "/", "//", "%", "&", "|", "^", "~", "<<", ">>", "<", "<=", ">", ">=", "==", "!="]
OPERATORS += ["+=", "-=", "*=", "/=", "//=", "%=", "&=", "|="]
LAYOUT = ["\n", "\n    ", "\n        ", "\n  ", "\n\t", "\r\n", "# comment", "\n# c\n", "  "]
TOKENS = KEYWORDS + NAMES + NUMBERS + STRINGS + PUNCTUATION + OPERATORS + LAYOUT
STARTS = ["", "kernel k(A: f16[M], n: i32 = 1):\n    ", "sizes k:\n    ", "reference k(A):\n    ", "kernel k("]

token_soup = st.builds(
    lambda start, pieces: start + "".join(token + gap for token, gap in pieces),
    st.sampled_from(STARTS),
    st.lists(st.tuples(st.sampled_from(TOKENS), st.sampled_from(["", " ", " ", "\n    "])), max_size=60),
)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(token_soup)
def test_token_soup_never_breaks_the_parser(text):
    assert_sound(text)


# ---- (b) edits of a real kernel --------------------------------------------------------------------------

EDIT_CHARACTERS = st.one_of(st.sampled_from([*"()[]:,.=+-*/<>&|#'\"$\\ \t\n\r", "    "]), st.characters())


@settings(max_examples=300, deadline=None)
@given(st.integers(0, len(SAMPLE)))
def test_truncated_kernel_never_breaks_the_parser(cut):
    assert_sound(SAMPLE[:cut])


@settings(max_examples=300, deadline=None)
@given(st.integers(0, len(SAMPLE) - 1))
def test_kernel_with_one_character_deleted_never_breaks_the_parser(where):
    assert_sound(SAMPLE[:where] + SAMPLE[where + 1 :])


@settings(max_examples=300, deadline=None)
@given(st.integers(0, len(SAMPLE)), EDIT_CHARACTERS)
def test_kernel_with_one_character_inserted_never_breaks_the_parser(where, inserted):
    assert_sound(SAMPLE[:where] + inserted + SAMPLE[where:])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(SAMPLE)), st.integers(0, 5), EDIT_CHARACTERS), min_size=2, max_size=6))
def test_kernel_with_several_edits_never_breaks_the_parser(edits):
    text = SAMPLE
    for where, deleted, inserted in edits:
        where = min(where, len(text))
        text = text[:where] + inserted + text[where + deleted :]
    assert_sound(text)


# ---- (c) arbitrary text ----------------------------------------------------------------------------------


@settings(max_examples=1000, deadline=None)
@given(st.text())
def test_arbitrary_text_never_breaks_the_parser(text):
    assert_sound(text)


@settings(max_examples=1000, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("kernel sizes():[]=,+-*#'\"\n\t\r\\$0123456789xyz")), max_size=200))
def test_arbitrary_text_of_argus_characters_never_breaks_the_parser(text):
    assert_sound(text)


@pytest.mark.parametrize(
    "text",
    [
        "kernel k():\n    x = " + "(" * 5000 + "1" + ")" * 5000 + "\n",
        "kernel k():\n    x = " + "-" * 5000 + "1\n",
        "kernel k():\n    x = 1" + " + 1" * 5000 + "\n",
        "kernel k():\n    x = " + "f(" * 3000 + "\n",
        "kernel k():\n" + "".join("    " * depth + "if x:\n" for depth in range(1, 200)) + "    " * 200 + "pass\n",
        "kernel k():\n" + "    x = = 1\n" * 300,
    ],
    ids=["parentheses", "unary-minus", "long-sum", "unclosed-calls", "nested-ifs", "300-broken-statements"],
)
def test_deep_or_long_input_never_breaks_the_parser(text):
    assert_sound(text)


# ---- (d) every prefix of every example -------------------------------------------------------------------


def test_there_are_at_least_six_examples():
    names = [path.name for path in EXAMPLES]
    assert len(EXAMPLES) >= 6, f"expected at least 6 examples in {REPO / 'examples'}, found {names}"


@pytest.mark.parametrize("path", EXAMPLES, ids=[path.stem for path in EXAMPLES])
def test_every_prefix_of_an_example_checks_without_exception(path):
    """Every character prefix, parsed and analyzed: about 2,000 checks per example."""
    text = path.read_text()
    started = time.perf_counter()
    failures: list[str] = []
    for end in range(len(text) + 1):
        try:
            problems = problems_of(text[:end])
        except Exception as error:
            problems = [f"raised {error!r}"]
        if problems:
            line = text.count("\n", 0, end)
            failures.append(f"prefix of {end} chars (ends on line {line}, {text[:end][-40:]!r}): {problems[0]}")
    elapsed = time.perf_counter() - started
    assert not failures, f"{len(failures)} bad prefixes of {path.name} ({elapsed:.1f} s):\n" + "\n".join(failures[:10])


# ---- ranges that once ran past the text ----------------------------------------------------------------------------


def strict_range_problems(text: str) -> list[str]:
    return problems_of(text)


def test_the_sample_kernel_parses_cleanly():
    result = parse(SAMPLE)
    assert [d.message for d in result.diagnostics] == []
    assert [type(item).__name__ for item in result.module.items] == ["Kernel", "PythonBlock", "PythonBlock", "Sizes"]
    assert strict_range_problems(SAMPLE) == []


def test_unexpected_end_of_line_stays_on_its_line():
    assert strict_range_problems("kernel k():\n    x = 1 +\n    y = 2\n") == []


def test_unexpected_end_of_file_stays_inside_the_text():
    assert strict_range_problems("kernel") == []


def test_python_error_at_the_end_of_the_text_stays_inside_it():
    assert strict_range_problems("reference k(A):\n    return A +") == []


def test_python_error_on_a_comment_line_stays_on_it():
    assert strict_range_problems("reference k(A):\n    for i in range(3):\n  #  cc\n") == []


def test_missing_block_at_the_end_of_the_file_is_reported_inside_the_text():
    assert strict_range_problems("kernel k():\n    for i in range(3):") == []


def test_text_without_items_parses_strictly():
    assert strict_range_problems("# nothing but a comment\n") == []


def test_tab_indented_broken_sizes_set_stays_inside_the_text():
    assert strict_range_problems("sizes k:\n\ts: M = 1\n\tt M = 2\n") == []


def test_nameless_kernel_stays_inside_the_text():
    problems = strict_range_problems("kernel \n      *")
    assert [problem for problem in problems if problem.startswith("Kernel.name_span")] == []


def test_leading_zero_is_not_an_internal_error():
    assert strict_range_problems("kernel k():\n    x = 007\n") == []
