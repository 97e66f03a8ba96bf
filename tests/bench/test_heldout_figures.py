"""bench/heldout.py's figures for the held-out check of issue 15, on tiny synthetic runs: what a budget B reads
from a longer run, the best speedup, search against the random seeds, and predicted against measured."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("heldout_bench", ROOT / "bench" / "heldout.py")
heldout = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = heldout  # dataclasses look their module up there
spec.loader.exec_module(heldout)


def step(before, after, *, kept=False, runs=1, skill="exp2.row", effect=None, covered=True, spills=None, cached=False,
         at=None):  # fmt: skip
    prediction = None if effect is None and not covered else {"effect": effect, "covered": covered, "params": {}}
    proposal = {"kind": "skill", "skill": skill, "line": 3} | ({"at": at} if at else {})
    if prediction is not None:
        proposal["prediction"] = prediction
    context = None if spills is None else [{"spill_stores_bytes": spills}]
    return {
        "proposal": proposal, "kept": kept, "ms_before": before, "ms_after": after, "gate_runs": runs,
        "cached": cached, "context": context,
    }  # fmt: skip


def write_run(folder: Path, group: str, kernel: str, name: str, start: float, steps: list[dict], budget=8):
    summary = {"file": f"skills/{group}/{kernel}.argus", "kernel": kernel, "start_ms": start, "budget": budget}
    summary["steps"] = steps
    (folder / f"{kernel}.{name}.json").write_text(json.dumps(summary), encoding="utf-8")


def test_within_stops_where_a_run_of_that_budget_stops():
    steps = [step(1, 0.9), step(1, None, runs=0), step(1, 0.8), step(1, None, runs=0), step(1, 0.7)]
    assert heldout.within(steps, 1) == steps[:1]
    assert heldout.within(steps, 2) == steps[:3]  # a free step before the second gate run belongs to it
    assert heldout.within(steps, 3) == steps
    free = [step(1, None, runs=0)] * 40 + [step(1, 0.5)]
    assert len(heldout.within(free, 4)) == 36  # the loop's max_steps, 4 * 4 + 20, ends it there


def test_the_best_speedup_is_the_best_kept_state_within_the_budget():
    run = heldout.Run("k", "search", "heldout2", 1.0, [
        step(1.0, 1.2), step(1.0, 0.8, kept=True), step(0.8, 0.9), step(0.8, 0.5, kept=True),
    ])  # fmt: skip
    assert heldout.best_speedup(run, 1) == 1.0  # nothing kept: the start
    assert heldout.best_speedup(run, 2) == pytest.approx(1.25)
    assert heldout.best_speedup(run, 3) == pytest.approx(1.25)
    assert heldout.best_speedup(run, 8) == pytest.approx(2.0)
    assert heldout.best_ms(run, 8) == pytest.approx(0.5)
    assert heldout.best_speedup(heldout.Run("k", "search", "heldout2", None, []), 4) is None


def test_figures_per_set_card_set_and_budget(tmp_path):
    # heldout2/a: search 2.0 at B=8 (1.25 at B=4); oldsearch 1.0; random seeds 1.25 and 1.6 (mean 1.425) at B=8
    write_run(tmp_path, "heldout2", "a", "search", 1.0, [
        step(1.0, 0.8, kept=True, effect=1.3), step(0.8, 0.9, effect=1.1), step(0.8, 0.85, effect=0.9),
        step(0.8, 1.2, effect=1.05, covered=True), step(0.8, 0.5, kept=True, effect=None, covered=False),
    ])  # fmt: skip
    write_run(tmp_path, "heldout2", "a", "oldsearch", 1.0, [step(1.0, 1.1, effect=1.2), step(1.0, 1.05, effect=1.1)])
    write_run(tmp_path, "heldout2", "a", "random0", 1.0, [step(1.0, 0.8, kept=True, effect=1.0, skill="exp2.row")])
    write_run(tmp_path, "heldout2", "a", "random1", 1.0, [
        step(1.0, 1.3, effect=1.2, covered=False, skill="no.such.card"), step(1.0, 0.625, kept=True, effect=0.95),
    ])  # fmt: skip
    # heldout/b: search only, 1.1; its second step, at an earlier state, is left out of the correlation
    write_run(tmp_path, "heldout", "b", "search", 2.0, [
        step(2.0, 2.0 / 1.1, kept=True, effect=1.02), step(2.0 / 1.1, 2.0, effect=1.5, at="abc"),
    ])  # fmt: skip
    runs = heldout.load_runs([tmp_path])
    assert sorted(runs) == [("heldout", "b"), ("heldout2", "a")]
    old = {"exp2.row": heldout.load_old_cards(heldout.OLD_CARDS)["exp2.row"]}
    found = {(f.set, f.cards, f.budget): f for f in heldout.compute(runs, (4, 8), old)}
    assert sorted(found) == [
        ("heldout", "new", 4), ("heldout", "new", 8),
        ("heldout2", "new", 4), ("heldout2", "new", 8), ("heldout2", "old", 4), ("heldout2", "old", 8),
    ]  # fmt: skip
    new8, new4, old8 = found["heldout2", "new", 8], found["heldout2", "new", 4], found["heldout2", "old", 8]
    assert new8.search == pytest.approx(2.0) and new4.search == pytest.approx(1.25)
    assert new8.random == pytest.approx((1.25 + 1.6) / 2)
    assert new8.ratio == pytest.approx(2.0 / ((1.25 + 1.6) / 2)) and new4.ratio == pytest.approx(1.25 / 1.425)
    assert old8.search == pytest.approx(1.0) and old8.ratio == pytest.approx(1.0 / 1.425)
    # new cards: the search's 4 predicted steps and 3 of the randoms' (one unpredicted each side)
    assert len(new8.judged.pairs) == 7 and new8.judged.unpredicted == 1
    assert len(new4.judged.pairs) == 7 and new4.judged.unpredicted == 0  # the 5th search step is past B = 4
    # covered 1.05 measured 0.8 / 1.2 = 0.67: counts; the random 1.2 measured 1 / 1.3 = 0.77 was not covered
    assert new8.judged.confident_wrong == 1
    # old cards: oldsearch's two steps as logged, the randoms' recomputed: exp2.row's old median, no old card
    # for no.such.card
    assert old8.judged.unpredicted == 1 and len(old8.judged.pairs) == 4 and old8.judged.confident_wrong == 0
    exp2_old = heldout.old_prediction(step(1, 1, skill="exp2.row"), old)
    assert exp2_old[1] is True and exp2_old[0] == pytest.approx(1.0002, abs=1e-3)
    assert (exp2_old[0], 1.0 / 0.625) in old8.judged.pairs
    other = found["heldout", "new", 8]
    assert other.search == pytest.approx(1.1) and math.isnan(other.ratio)
    assert len(other.judged.pairs) == 1 and other.judged.elsewhere == 1 and other.judged.confident_wrong == 0


def test_a_covered_gain_that_measured_a_loss_counts():
    judged = heldout.Judged()
    judged.add(1.2, True, 0.7)  # counts
    judged.add(1.0, True, 0.79)  # counts: at least 1.0, under 0.8
    judged.add(0.99, True, 0.5)  # predicted no gain
    judged.add(1.5, False, 0.5)  # not covered
    judged.add(1.2, True, 0.8)  # not under 0.8
    judged.add(None, False, 0.5)  # no prediction: left out, counted
    assert judged.confident_wrong == 2 and judged.unpredicted == 1 and len(judged.pairs) == 5
    assert heldout.Judged(pairs=[(1.0, 1.0), (2.0, 2.0), (3.0, 3.0)]).rho == pytest.approx(1.0)
    assert heldout.Judged(pairs=[(1.0, 3.0), (2.0, 2.0), (3.0, 1.0)]).rho == pytest.approx(-1.0)
    assert math.isnan(heldout.Judged(pairs=[(1.0, 1.0)]).rho)


def test_figures_prints_both_tables_and_old_subcommands_still_read_the_folder(tmp_path, capsys):
    write_run(tmp_path, "heldout2", "a", "search", 1.0, [step(1.0, 0.5, kept=True, effect=1.3, cached=True)])
    write_run(tmp_path, "heldout2", "a", "random0", 1.0, [step(1.0, 0.8, kept=True, effect=1.0)], budget=1)
    (tmp_path / "ceilings.json").write_text("{}", encoding="utf-8")  # a file of the call, not a run
    assert heldout.main(["figures", str(tmp_path), "--budgets", "1"]) == 0
    text = capsys.readouterr().out
    assert "| heldout2 | new | 1 | 1 | 2.000× | 1.250× | 1.600× |" in text
    assert "| heldout2 | a | 1.0000 | 0.5000 | 2.00× / 2.00× | - | - | 1.25× |" in text
    assert "| 1 of 2 |" in text  # cached steps
    for name in ("search", "random0"):  # `table` wants the summary fields of a real run
        path = tmp_path / f"a.{name}.json"
        data = json.loads(path.read_text())
        data.update(eager_ms=2.0, best_ms=0.5, speedup=2.0, speedup_over_eager=4.0, kept=["exp2.row"])
        path.write_text(json.dumps(data))
    assert heldout.main(["table", str(tmp_path)]) == 0
    assert "| a | 1.0000 | 2.000 | 0.5000 | 2.00× |" in capsys.readouterr().out


def test_a_budget_no_run_was_given_is_said_not_run_instead_of_repeating_the_largest(tmp_path, capsys):
    write_run(tmp_path, "heldout2", "a", "search", 1.0, [step(1.0, 0.5, kept=True, effect=1.3)], budget=4)
    assert heldout.main(["figures", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "| heldout2 | new | 4 |" in text and "| heldout2 | new | 8 |" not in text
    assert "Not run: B = 8 (the runs were given at most 4 gate runs)" in text


def test_the_cards_before_issue_15_load_with_todays_model():
    from argus.skills.library import load_cards

    cards = load_cards(heldout.OLD_CARDS)
    assert len(cards) == 20 and len({c.id for c in cards}) == 20
    assert {"num_warps.dot", "pipelining.num_stages.dot", "exp2.row"} <= {c.id for c in cards}
    assert all(not e.facts for c in cards for e in c.evidence)  # no situations: they claim their median
