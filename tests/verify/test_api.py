"""verify_check as its callers use it: examples prove clean, the cache, layouts, tune values, never raising."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from argus.cli.main import main
from argus.dsl.check import check_source
from argus.verify import VerifyCache, has_tune_values, merge_results, verify_check
from argus.verify.rules import RULES

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.argus"))

OVERLAP_WHEN_RETUNED = """
kernel scale(x: f32[N], y: out f32[N]):
    tile BLOCK = 256 tune [256, 512], STEP = 256
    grid (cdiv(N, STEP),)
    offs = program_id(0) * STEP + arange(BLOCK)
    v = load(x[offs], mask=offs < N, other=0)
    store(y[offs], v * 2.0, mask=offs < N)
"""

TWO_KERNELS = """
kernel first(x: f32[N], y: out f32[N]):
    tile B = 128
    grid (cdiv(N, B),)
    i = program_id(0) * B + arange(B)
    store(y[i], load(x[i], mask=i < N, other=0), mask=i <= N)

kernel second(x: f32[N], y: out f32[N]):
    tile B = 128
    grid (cdiv(N, B),)
    i = program_id(0) * B + arange(B)
    store(y[i], load(x[i]), mask=i < N)
"""


def verify(text: str, **options):
    return verify_check(check_source(text), **options)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_is_proved_with_no_warning_and_no_unknown(path):
    result = verify(path.read_text())
    assert [d.text_line(path.name) for d in result.diagnostics] == []
    assert result.stats.obligations == result.stats.proved > 0


def test_stats_add_up_and_time_is_measured():
    result = verify(TWO_KERNELS)
    stats = result.stats
    assert stats.obligations == stats.proved + stats.refuted + stats.unknown
    assert stats.refuted == 2 and stats.milliseconds > 0


def test_refuted_diagnostic_carries_source_code_and_a_small_witness():
    result = verify(TWO_KERNELS)
    codes = sorted((d.code, d.line) for d in result.diagnostics)
    assert codes == [("AR301", 5), ("AR301", 11)]
    for d in result.diagnostics:
        assert d.source == "argus.verify"
        witness = d.data["counterexample"]
        assert witness["kind"] == "in_bounds"
        assert all(0 < n <= 4096 for n in witness["sizes"].values())
        assert witness["line"] == d.line


def test_a_kernel_with_errors_is_not_verified():
    broken = TWO_KERNELS.replace("load(x[i]), mask", "load(x[i]), maks")
    check = check_source(broken)
    assert check.has_errors
    result = verify_check(check)
    assert [d.line for d in result.diagnostics] == [5]  # only the first kernel is verified


def test_a_tune_value_is_verified_too():
    result = verify(OVERLAP_WHEN_RETUNED)
    races = [d for d in result.diagnostics if d.code == "AR302"]
    assert len(races) == 1
    assert "BLOCK = 512" in races[0].message and races[0].data["variant"]


def test_cache_reverifies_only_the_kernel_that_changed():
    cache = VerifyCache()
    verify(TWO_KERNELS, cache=cache)
    assert (cache.hits, cache.misses) == (0, 2)
    edited = TWO_KERNELS.replace("tile B = 128\n", "tile B = 128\n    # a comment typed in the first kernel\n", 1)
    again = verify(edited, cache=cache)
    assert (cache.hits, cache.misses) == (1, 3)
    # the second kernel's diagnostic, from the cache, has moved down with its kernel
    assert sorted(d.line for d in again.diagnostics) == [6, 12]
    witness_lines = sorted(d.data["counterexample"]["line"] for d in again.diagnostics)
    assert witness_lines == [6, 12]


def test_cache_is_bounded():
    cache = VerifyCache(max_entries=2)
    for block in (64, 128, 256, 512):
        verify(TWO_KERNELS.replace("B = 128", f"B = {block}"), cache=cache)
    assert len(cache) == 2


def test_layouts_give_each_named_value_its_index_map():
    text = (ROOT / "examples" / "matmul.argus").read_text()
    layouts = {v.name: v.text for v in verify(text).layouts}
    assert layouts["a"].startswith("[128x64] (i, j) -> A[M: ")
    assert "K: k0 + j" in layouts["a"] and "mask" in layouts["a"]
    assert "tags" in layouts["a"] and "K=k0" in layouts["a"]
    assert layouts["rm"] == "[128] (i) -> value 128*pm + i"


def test_an_internal_failure_becomes_an_unknown_verdict(monkeypatch):
    def broken(self, op, context):
        raise ValueError("simulated verifier bug")

    monkeypatch.setitem(RULES, "dot", broken)  # the verifier's rule for dot (argus.verify.rules)
    result = verify((ROOT / "examples" / "matmul.argus").read_text())
    assert [d.code for d in result.diagnostics] == ["AR312"]
    assert "simulated verifier bug" in result.diagnostics[0].data["reason"]


def test_a_tiny_budget_gives_unknowns_or_proofs_never_false_errors():
    text = (ROOT / "examples" / "moe_gemm.argus").read_text()
    result = verify(text, rlimit=2000)
    assert result.diagnostics and all(d.code == "AR312" for d in result.diagnostics)
    assert result.stats.proved > 0  # some obligations fit in 2,000 units


@pytest.mark.parametrize("cut", range(40, 1400, 97))
def test_a_half_typed_kernel_never_raises(cut):
    text = (ROOT / "examples" / "attention.argus").read_text()[:cut]
    verify(text)


def test_cli_json_carries_the_counterexample(tmp_path, capsys):
    path = tmp_path / "k.argus"
    path.write_text(TWO_KERNELS)
    assert main(["check", "--json", str(path)]) == 1
    records = json.loads(capsys.readouterr().out)
    verified = [r for r in records if r["source"] == "argus.verify"]
    assert {r["data"]["counterexample"]["kind"] for r in verified} == {"in_bounds"}


def test_cli_no_verify_skips_the_verifier(tmp_path, capsys):
    path = tmp_path / "k.argus"
    path.write_text(TWO_KERNELS)
    assert main(["check", "--no-verify", str(path)]) == 0
    assert "AR301" not in capsys.readouterr().out


def test_a_failed_tag_assertion_points_at_where_the_tags_were_set():
    text = (ROOT / "tests" / "verify" / "corpus" / "tag_pipeline_stage_off_by_one.argus").read_text()
    failed = next(d for d in verify(text).diagnostics if d.code == "AR305")
    assert sorted((r.range.start.line + 1, r.message) for r in failed.related) == [
        (13, "tag `k` of `a` is set here"),
        (15, "tag `k` of `b` is set here"),
    ]


def test_a_broken_invariant_points_at_its_loop_and_the_tag_sites():
    text = (ROOT / "tests" / "verify" / "corpus" / "invariant_prologue_wrong_block.argus").read_text()
    failed = next(d for d in verify(text).diagnostics if d.code == "AR306")
    lines = [r.range.start.line + 1 for r in failed.related]
    assert lines[0] == 13 and {12, 20} <= set(lines)


def test_an_internal_failure_in_one_obligation_stays_in_that_obligation(monkeypatch):
    from argus.verify import solve

    original = solve.Prover.decide

    def flaky(self, obligation):
        if obligation.kind == "contraction":
            raise RuntimeError("simulated solver bug")
        return original(self, obligation)

    monkeypatch.setattr(solve.Prover, "decide", flaky)
    result = verify((ROOT / "examples" / "matmul.argus").read_text())
    assert [(d.code, d.data["obligation"], d.data["kind"]) for d in result.diagnostics] == [
        ("AR312", "AR310", "contraction")
    ]
    # one contraction obligation per verified variant: the declared BN, and BN = 128 from its tune list
    assert (result.stats.unknown, result.stats.refuted) == (2, 0)


# ---- the two parts the language server asks for one after the other -------------------------------------

BUG_AS_WRITTEN_AND_WHEN_RETUNED = OVERLAP_WHEN_RETUNED.replace(
    "store(y[offs], v * 2.0, mask=offs < N)", "store(y[offs], v * 2.0)"
)
PART_FILES = [
    *EXAMPLES,
    *sorted((ROOT / "examples" / "buggy").glob("*.argus")),
    *sorted((ROOT / "tests" / "verify" / "corpus").glob("*.argus")),
]


def described(result) -> tuple[list, tuple]:
    """Each diagnostic's code, place, verdict, kind and variant, and the counts. Not the witness's values: z3
    may pick another model for the same query later in the same process (a fresh `argus check` is stable)."""
    s = result.stats
    diagnostics = [
        (d.code, d.range, d.data.get("verdict"), d.data.get("kind"), d.data.get("variant"), len(d.related))
        for d in result.diagnostics
    ]
    return diagnostics, (s.obligations, s.proved, s.refuted, s.unknown)


@pytest.mark.parametrize("path", PART_FILES, ids=lambda p: p.stem)
def test_the_declared_and_tune_parts_merge_into_what_all_gives(path):
    check = check_source(path.read_text())
    merged = merge_results(verify_check(check, part="declared"), verify_check(check, part="tune"))
    assert described(merged) == described(verify_check(check))


def test_the_declared_part_is_the_kernel_as_written_and_the_tune_part_its_other_values():
    check = check_source(BUG_AS_WRITTEN_AND_WHEN_RETUNED)
    declared = verify_check(check, part="declared")
    assert [(d.code, d.line, "variant" in d.data) for d in declared.diagnostics] == [("AR301", 6, False)]
    assert declared.layouts  # hover's index maps come with the kernel as written
    tune = verify_check(check, part="tune")
    assert {(d.code, d.data["variant"]) for d in tune.diagnostics} == {
        ("AR301", "with BLOCK = 512 from its tune list"),
        ("AR302", "with BLOCK = 512 from its tune list"),
    }
    assert tune.layouts == []
    merged = merge_results(declared, tune)  # the tune value's out-of-bounds store is the declared one's twin
    assert [(d.code, "variant" in d.data) for d in merged.diagnostics] == [("AR301", False), ("AR302", True)]
    assert (merged.stats.obligations, merged.stats.refuted) == (8, 3)


def test_has_tune_values_says_whether_the_tune_part_has_work():
    assert has_tune_values(check_source(OVERLAP_WHEN_RETUNED))
    assert not has_tune_values(check_source(TWO_KERNELS))
    assert not has_tune_values(check_source(OVERLAP_WHEN_RETUNED.replace("tune [256, 512]", "tune [256]")))
    assert not has_tune_values(check_source(OVERLAP_WHEN_RETUNED.replace("v * 2.0", "v * undefined")))  # not verified
    assert verify_check(check_source(TWO_KERNELS), part="tune").diagnostics == []


def test_the_cache_keeps_each_part_and_answers_all_once_both_are_there():
    cache = VerifyCache()
    check = check_source(OVERLAP_WHEN_RETUNED)
    verify_check(check, cache=cache, part="declared")
    verify_check(check, cache=cache, part="all")  # the tune part is missing: verified, both kept
    assert (cache.hits, cache.misses, len(cache)) == (0, 2, 1)
    races = [d for d in verify_check(check, cache=cache, part="tune").diagnostics if d.code == "AR302"]
    assert len(races) == 1 and (cache.hits, cache.misses) == (1, 2)
    moved = check_source("\n\n" + OVERLAP_WHEN_RETUNED)  # the same kernel two lines down: all from the cache
    assert [d.line for d in verify_check(moved, cache=cache).diagnostics] == [8]
    assert (cache.hits, cache.misses) == (2, 2)


def test_an_unknown_part_is_refused():
    with pytest.raises(ValueError, match="part must be one of"):
        verify_check(check_source(OVERLAP_WHEN_RETUNED), part="variants")


def test_cli_check_reports_a_tune_value_failure_beside_the_declared_one(tmp_path, capsys):
    path = tmp_path / "k.argus"
    path.write_text(BUG_AS_WRITTEN_AND_WHEN_RETUNED)
    assert main(["check", str(path)]) == 1
    lines = [line for line in capsys.readouterr().out.splitlines() if "error[" in line]
    assert [line.split("error[")[1][:5] for line in lines] == ["AR301", "AR302"]
    assert "BLOCK = 512" not in lines[0] and "BLOCK = 512 from its tune list" in lines[1]
