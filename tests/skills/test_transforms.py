"""Each transform applies where its preconditions hold, is refused with the named precondition where one does
not, and its inverse followed by the restoring forward gives back the text exactly."""

from __future__ import annotations

from pathlib import Path

import pytest
from kernels import CAUSAL_ROWS, DIVISIBLE_GEMM, F16_ACCUMULATOR, NAIVE_GEMM, NAIVE_SOFTMAX, RELOADING_SOFTMAX

from argus.dsl.check import check_source
from argus.skills.document import Document
from argus.skills.facts import verify_errors
from argus.skills.preconditions import PRECONDITIONS
from argus.skills.transforms import TRANSFORMS

ROOT = Path(__file__).resolve().parents[2]
REWRITTEN = sorted((ROOT / "skills" / "experts").glob("*.argus")) + sorted((ROOT / "examples").glob("*.argus"))


def forward(name: str, text: str, **params):
    return TRANSFORMS[name].forward(Document.parse(text), params)


def only(apps, containing: str = ""):
    found = [a for a in apps if containing in a.title]
    assert len(found) == 1, [a.title for a in apps]
    return found[0]


def checks_clean(text: str) -> bool:
    check = check_source(text)
    errors = [d for d in check.diagnostics if d.severity.value == "error"]
    return not errors and all(verify_errors(check, k) == 0 for k in check.module.kernels)


def test_there_are_at_least_twelve_transforms_and_every_precondition_is_registered():
    assert len(TRANSFORMS) >= 12
    for transform in TRANSFORMS.values():
        assert set(transform.preconditions) <= set(PRECONDITIONS), transform.name


# (transform, kernel, params, a word of the title, a line the result must contain)
APPLIES = [
    ("pipelining", NAIVE_GEMM, {}, "num_stages 2 → 3", "num_stages = 3 tune [2, 3]"),
    ("num_warps", NAIVE_GEMM, {}, "num_warps 4 → 8", "num_warps = 8 tune [4, 8]"),
    ("tile_size", NAIVE_GEMM, {"setting": "BK"}, "BK 16 → 32", "BK = 32 tune [16, 32]"),
    ("tma", NAIVE_GEMM, {}, "tma 0 → 1", "tma = 1 tune [0, 1]"),
    (
        "warp_specialize",
        NAIVE_GEMM.replace("tma = 0 tune [0, 1]", "tma = 0 tune [0, 1], warp_specialize = 0 tune [0, 1]"),
        {},
        "warp_specialize 0 → 1",
        "warp_specialize = 1 tune [0, 1]",
    ),
    ("grouped_order", NAIVE_GEMM, {}, "Grouped", "    pm = group * GROUP_M + q % GROUP_M\n"),
    ("heavy_first", CAUSAL_ROWS, {}, "Heaviest", "pid = cdiv(S, BM) - 1 - program_id(0)"),
    ("drop_edge_masks", DIVISIBLE_GEMM, {}, "load of A", "a = load(A[rm, rk])   # f16[BM, BK]"),
    ("exp2", NAIVE_SOFTMAX, {}, "exp2", "num = exp2((v - max(v, axis=0)) * 1.4426950408889634)"),
    ("reciprocal", NAIVE_SOFTMAX, {}, "sum(num", "    inv = 1.0 / sum(num, axis=0)\n"),
    (
        "rsqrt",
        NAIVE_SOFTMAX.replace("(num / sum(num, axis=0))", "(num * (1.0 / sqrt(sum(num, axis=0))))"),
        {},
        "",
        "num * rsqrt(sum(num, axis=0))",
    ),
    ("dot_accumulator", NAIVE_GEMM, {}, "dot", "acc = dot(a, b, acc)"),
    ("f32_accumulation", F16_ACCUMULATOR, {}, "acc", "acc = zeros((BM, BN), f32)"),
    ("alignment_hint", NAIVE_GEMM, {}, "on rm", "rm = multiple_of(pm * BM, BM) + arange(BM)"),
    ("reuse_load", RELOADING_SOFTMAX, {}, "x once", "num = exp(v - max(v, axis=0))"),
]


@pytest.mark.parametrize(("name", "text", "params", "title", "line"), APPLIES, ids=[a[0] for a in APPLIES])
def test_a_transform_applies_where_its_preconditions_hold_and_the_result_checks_clean(name, text, params, title, line):
    app = only(forward(name, text, **params), title)
    assert app.applicable, app.failed
    assert {c.name for c in app.checks} <= set(PRECONDITIONS)
    after = app.result(text)
    assert line in after
    assert checks_clean(after)


# (transform, kernel, params, a word of the title, the precondition that fails)
REFUSED = [
    (
        "pipelining",
        CAUSAL_ROWS.replace("tile BM = 16, D = 16", "tile BM = 16, D = 16\n    policy num_stages = 1"),
        {},
        "",
        "loop_has_dot",
    ),
    ("pipelining", NAIVE_GEMM, {"to": 4}, "", "in_tune_list"),
    (
        "tile_size",
        NAIVE_GEMM.replace("BK = 16 tune [16, 32]", "BK = 16 tune [16, 2048]"),
        {"setting": "BK"},
        "",
        "fits_shared_memory",
    ),
    ("grouped_order", NAIVE_SOFTMAX, {}, "", "grid_row_major_2d"),
    ("heavy_first", NAIVE_SOFTMAX, {}, "", "work_depends_on_program"),
    ("drop_edge_masks", NAIVE_GEMM, {}, "load of A", "divisible_by_tile"),
    ("reciprocal", NAIVE_SOFTMAX.replace("num / sum(num, axis=0)", "num / num"), {}, "", "divisor_is_broadcast"),
    (
        "f32_accumulation",
        F16_ACCUMULATOR.replace("acc = dot(a, b, acc)", "t = dot(a, b)"),
        {},
        "",
        "accumulator_feeds_dot",
    ),
    (
        "alignment_hint",
        NAIVE_GEMM.replace("rm = pm * BM + arange(BM)", "rm = pm * 3 + arange(BM)"),
        {},
        "on rm",
        "start_is_multiple",
    ),
    ("num_warps", NAIVE_GEMM.replace("num_warps = 4 tune [4, 8]", "num_warps = 8 tune [4, 8]"), {}, "", "in_tune_list"),
    (
        "reuse_load",
        RELOADING_SOFTMAX.replace("x: f16[M, N], y: out", "x: out f16[M, N], y: out").replace(
            "    store(y[row", "    store(x[row, cols], num.to(f16), mask=cols < N)\n    store(y[row"
        ),
        {},
        "x once",
        "not_stored",
    ),
]


@pytest.mark.parametrize(
    ("name", "text", "params", "title", "precondition"), REFUSED, ids=[f"{r[0]}-{r[4]}" for r in REFUSED]
)
def test_a_transform_is_refused_with_the_precondition_that_fails(name, text, params, title, precondition):
    app = only(forward(name, text, **params), title)
    assert not app.applicable
    assert app.failed.name == precondition
    assert app.failed.found


def test_a_rewrite_that_would_not_check_is_refused_as_still_checks():
    broken = NAIVE_GEMM.replace("acc += dot(a, b)", "acc += dot(a, b) + q")  # q is not defined here...
    app = only(forward("grouped_order", broken))  # ...until grouped order defines it: name_free fails first
    assert app.failed.name in ("name_free", "still_checks")
    dropped = only(
        forward("drop_edge_masks", DIVISIBLE_GEMM.replace("acc += dot(a, b)", "acc += dot(a, b)[:, :]")), "A"
    )
    assert dropped.failed is None or dropped.failed.name == "still_checks"


def test_edits_keep_comments_and_touch_only_the_rewritten_code():
    app = only(forward("dot_accumulator", NAIVE_GEMM.replace("acc += dot(a, b)", "acc += dot(a, b)  # MMA")))
    after = app.result(NAIVE_GEMM.replace("acc += dot(a, b)", "acc += dot(a, b)  # MMA"))
    assert "        acc = dot(a, b, acc)  # MMA\n" in after
    assert "# f16[BM, BK]" in after
    assert len(app.edits) == 1


@pytest.mark.parametrize("path", REWRITTEN, ids=[p.name for p in REWRITTEN])
def test_every_inverse_is_undone_exactly_by_its_forward(path):
    text = path.read_text(encoding="utf-8")
    doc = Document.parse(text)
    tried = 0
    for transform in TRANSFORMS.values():
        for app in transform.inverse(doc):
            after = app.result(text)
            restored = [a.result(after) for a in transform.forward(Document.parse(after), transform.restoring(app))]
            assert text in restored, f"{transform.name}: {app.title}"
            tried += 1
    assert tried > 0


def test_a_statement_in_nested_loops_is_one_site():
    nested = NAIVE_GEMM.replace(
        "    for k0 in range(0, K, BK):\n", "    for e in range(0, 2):\n      for k0 in range(0, K, BK):\n"
    )
    nested = nested.replace("\n        ", "\n          ").replace("\n          acc = zeros", "\n        acc = zeros")
    doc = Document.parse(nested)
    assert len(TRANSFORMS["dot_accumulator"].forward(doc)) == 1


@pytest.mark.parametrize(("before", "after"), [(4, 8), (6, 8), (16, 32), (32, None)])
def test_more_warps_goes_to_the_next_valid_num_warps(before, after):
    text = NAIVE_GEMM.replace("num_warps = 4 tune [4, 8]", f"num_warps = {before}")
    found = [a for a in forward("num_warps", text) if a.params.get("setting") == "num_warps"]
    assert [a.params["to"] for a in found] == ([after] if after else [])


def test_dot_accumulation_keeps_the_dots_keywords_both_ways():
    precise = NAIVE_GEMM.replace("acc += dot(a, b)", 'acc += dot(a, b, input_precision="ieee")')
    after = only(forward("dot_accumulator", precise)).result(precise)
    assert 'acc = dot(a, b, acc, input_precision="ieee")' in after
    (inverse,) = TRANSFORMS["dot_accumulator"].inverse(Document.parse(after))
    assert inverse.result(after) == precise


# NAIVE_GEMM as a user first writes it: no tune lists, no policy line (Triton's 4 warps and 3 stages)
BARE_GEMM = NAIVE_GEMM.replace(
    "    tile BM = 32 tune [32, 64], BN = 32 tune [32, 64], BK = 16 tune [16, 32]\n"
    "    policy num_warps = 4 tune [4, 8], num_stages = 2 tune [2, 3], tma = 0 tune [0, 1]\n",
    "    tile BM = 32, BN = 32, BK = 16\n",
)


def test_a_policy_the_kernel_leaves_to_the_compiler_is_written_out_with_its_new_value():
    assert "policy" not in BARE_GEMM
    warps = only(forward("num_warps", BARE_GEMM))
    assert warps.applicable and warps.params == {"setting": "num_warps", "from": 4, "to": 8}
    assert warps.title == "More warps: num_warps 4 (the default) → 8"
    after = warps.result(BARE_GEMM)
    assert "    tile BM = 32, BN = 32, BK = 16\n    policy num_warps = 8\n    grid (" in after
    assert checks_clean(after)
    # a second setting joins the policy line the first one wrote
    stages = only(forward("pipelining", after))
    assert stages.applicable and stages.params == {"setting": "num_stages", "from": 3, "to": 4}
    assert "    policy num_warps = 8, num_stages = 4\n" in stages.result(after)
    assert checks_clean(stages.result(after))
    # a card's recorded value is where it goes
    assert only(forward("num_warps", BARE_GEMM, to=16)).params["to"] == 16
    # the walk backward moves only what a kernel sets: nothing to undo here
    assert TRANSFORMS["num_warps"].inverse(Document.parse(BARE_GEMM)) == []
    assert TRANSFORMS["pipelining"].inverse(Document.parse(BARE_GEMM)) == []


def test_a_tile_constant_without_a_tune_list_doubles_where_every_use_of_it_is_masked():
    found = {a.params["setting"]: a for a in forward("tile_size", BARE_GEMM)}
    assert {name: (a.params["from"], a.params["to"]) for name, a in found.items()} == {
        "BM": (32, 64),
        "BN": (32, 64),
        "BK": (16, 32),
    }
    for app in found.values():
        assert app.applicable
        assert checks_clean(app.result(BARE_GEMM))
    assert TRANSFORMS["tile_size"].inverse(Document.parse(BARE_GEMM)) == []
    # at the limit it stops
    wide = BARE_GEMM.replace("BK = 16", "BK = 4096")
    assert "BK" not in {a.params["setting"] for a in forward("tile_size", wide)}


def test_a_tile_constant_that_indexes_unmasked_is_an_extent_not_a_tile_size():
    # D is the whole feature axis (`arange(D)` unmasked), and this kernel's BM rows are unmasked as well
    assert forward("tile_size", CAUSAL_ROWS) == []
    unmasked_b = BARE_GEMM.replace("mask=(rk < K, rn < N), other=0)", "mask=rk < K, other=0)")
    assert "BN" not in {a.params["setting"] for a in forward("tile_size", unmasked_b)}
    # a run used through another name is still a use of it
    through = BARE_GEMM.replace("rn = pn * BN + arange(BN)", "cn = arange(BN)\n    rn = pn * BN + cn").replace(
        "mask=(rk < K, rn < N), other=0)", "mask=rk < K, other=0)"
    )
    assert "BN" not in {a.params["setting"] for a in forward("tile_size", through)}
