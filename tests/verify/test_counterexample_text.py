"""A counterexample reads plainly (issue 22: it was one dense sentence): the message's first line says what is
wrong, then each part of the launch follows on its own indented line naming the source line it comes from,
the way GPUVerify's and Faial's reports read. `argus check` prints exactly this, and docs show it."""

from __future__ import annotations

import re
from pathlib import Path

from argus.dsl.check import check_source
from argus.dsl.diagnostics import Diagnostic
from argus.verify import verify_check
from argus.verify.witness import Access, Counterexample, ordinal

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "verify" / "corpus"


def refuted(name: str, code: str) -> Diagnostic:
    check = check_source((CORPUS / name).read_text())
    return next(d for d in verify_check(check).diagnostics if d.code == code)


def test_a_contraction_mismatch_reads_one_part_a_line():
    d = refuted("contraction_b_next_k.argus", "AR310")
    assert d.message.split("\n") == [
        "dot contraction mismatch: a's column index into A differs from b's row index into B (dimension K)",
        "  program: pm=0, pn=0 (from program_id at line 6)",
        "  iteration: k0=0, the 1st iteration of the loop at line 10",
        "  element: i=0, kk=0, j=0",
        "  values: a's K index = 0, b's K index = 32",
        "  sizes: M=1, K=33, N=1",
    ]


def test_a_race_names_the_other_access_on_a_line_and_in_its_related_information():
    d = refuted("race_overlapping_blocks.argus", "AR302")
    lines = d.message.split("\n")
    assert lines[0] == "two programs write the same element of `y`"
    # which two programs z3 picks depends on what it solved before: the form is fixed, the numbers are not
    other = re.fullmatch(r"  other access: store at line 8 by (program program_id\(0\)=\d+, element i=\d+)", lines[-1])
    assert other is not None, lines[-1]
    (related,) = d.related
    assert (related.range.start.line, related.message) == (7, f"the other program's store: {other.group(1)}")


def test_a_hint_and_loaded_data_get_lines_of_their_own():
    bounds = refuted("bounds_missing_edge_mask.argus", "AR301")
    assert bounds.message.split("\n")[-1] == (
        "  hint: mask axis 0 of `A` with `rm < M`, as line 17 does: the kernel handles a partial tile of M"
    )
    moe = refuted("bounds_moe_wrong_expert.argus", "AR301").message.split("\n")
    data = [line for line in moe if line.startswith("  loaded data: ")]
    assert len(data) == 1 and re.fullmatch(r"  loaded data: offsets\[\d\]=-?\d+(, offsets\[\d\]=-?\d+)*", data[0])
    loop = r"{}=-?\d+, the \d+\w\w iteration of the loop at line {}"
    loops = f"{loop.format('m0', 11)}; {loop.format('k0', 14)}"
    assert [line for line in moe if re.fullmatch(f"  iteration: {loops}", line)], moe


def test_a_coverage_gap_says_no_program_writes_the_element():
    gap = refuted("coverage_floor_grid.argus", "AR304")
    lines = gap.message.split("\n")
    # confirmed: no program of the launch writes the element at the witness's sizes, so an error
    assert lines[0] == "an element of output `z` is never written" and gap.severity.value == "error"
    assert re.fullmatch(r"  no program writes: z index 0 \(N\) = \d+", lines[1]), lines[1]


def test_no_first_line_carries_the_counterexample():
    for path in sorted(CORPUS.glob("*.argus")):
        for d in verify_check(check_source(path.read_text())).diagnostics:
            first = d.message.split("\n")[0]
            assert "counterexample" not in first and not re.search(r"\b\w+=\d", first), (path.name, first)


def test_parts_without_a_source_line_are_shown_without_one():
    record = Counterexample(
        kind="race_store",
        line=3,
        character=4,
        program={"p": 0},
        iteration={"k": 64, "k iteration": 2},
        element={"i": 5},
        sizes={"N": 9},
        values={},
        second=Access(line=3, character=4, what="store", program={"p": 1}, iteration={}, element={"i": 0}),
    )
    assert record.report() == [
        "program: p=0",
        "iteration: k=64, the 3rd iteration",
        "element: i=5",
        "sizes: N=9",
        "other access: store at line 4 by program p=1, element i=0",
    ]
    assert record.report({"p": 1}, {"k": 2})[:2] == [
        "program: p=0 (from program_id at line 2)",
        "iteration: k=64, the 3rd iteration of the loop at line 3",
    ]


def test_ordinals():
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st", "111th",
    ]  # fmt: skip


def test_the_cli_output_shown_in_the_diagnostics_doc_is_what_the_verifier_reports():
    doc = (ROOT / "docs" / "diagnostics.md").read_text(encoding="utf-8")
    produced = refuted("contraction_b_next_k.argus", "AR310").text_line("contraction_b_next_k.argus")
    assert f"```\n{produced}\n```" in doc
