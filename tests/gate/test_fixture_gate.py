"""The runner's stages on the hand-written vector_add fixture (argus.codegen's contract, written by hand): what
each kind of failure reports, and at which Argus line."""

from __future__ import annotations

from gate_support import fixture_bundle

from argus.gate import Status, run_bundle

WRONG_MASK = ("tl.store(z + offs, a + b, mask=mask)", "tl.store(z + offs, a + b, mask=offs < N - 1)")


def gate(run_py, stages=("correct",), **options):
    [result] = run_bundle(run_py, device="cpu", stages=stages, timeout_s=90, trials=2, **options)
    return result


def test_the_fixture_passes_compile_and_correct_with_its_compile_facts(bundle_dir):
    result = gate(fixture_bundle(bundle_dir), stages=("compile", "correct"))
    assert result.passed, result.errors
    facts = result.compile.facts
    assert facts.target == "sm_90"
    assert facts.registers > 0 and facts.spill_stores_bytes == 0
    assert facts.config == {"BLOCK": 1024, "num_warps": 4}
    assert result.correct.facts.trials == 2 and len(set(result.correct.facts.seeds)) == 2
    assert result.correct.facts.interpreter
    assert result.profile.status == Status.skipped


def test_a_kernel_that_skips_the_last_element_fails_correct_at_that_index(bundle_dir):
    result = gate(fixture_bundle(bundle_dir, kernel_edits=[WRONG_MASK]), seed=7)
    assert result.correct.status == Status.failed
    mismatch = result.correct.facts.first_mismatch
    assert (mismatch.output, mismatch.index, mismatch.count) == ("z", [4098], 1)
    assert mismatch.got is None  # the NaN poison: never written
    assert result.correct.facts.seeds == [7]  # the first trial failed; no more were run
    [error] = result.errors
    assert (error.code, error.line) == ("AR502", 13)  # the store of z in examples/vector_add.argus
    assert "z[4098]" in error.message


def test_a_wrong_value_reports_both_values(bundle_dir):
    edit = ("tl.store(z + offs, a + b, mask=mask)", "tl.store(z + offs, a + b * 1.001, mask=mask)")
    result = gate(fixture_bundle(bundle_dir, kernel_edits=[edit]))
    mismatch = result.correct.facts.first_mismatch
    assert mismatch is not None and mismatch.got is not None and mismatch.expected is not None
    assert abs(mismatch.got - mismatch.expected) > 1e-4 * (1 + abs(mismatch.expected))


def test_a_triton_compile_error_maps_back_to_the_argus_line(bundle_dir):
    edit = (
        "b = tl.load(y + offs, mask=mask, other=0)",
        "b = tl.load(y + offs, mask=mask, other=0) + tl.arange(0, 1000)",
    )
    result = gate(fixture_bundle(bundle_dir, kernel_edits=[edit]), stages=("compile", "correct"))
    assert result.compile.status == Status.failed
    assert result.correct.status == Status.skipped and result.correct.message == "compile did not pass"
    [error] = result.errors
    assert error.code == "AR501"
    assert (error.generated_line, error.line) == (20, 12)  # `b = load(y[offs], ...)` in vector_add.argus
    assert "power of 2" in error.detail


def test_a_reference_that_raises_is_ar507_at_the_reference_block(bundle_dir):
    result = gate(fixture_bundle(bundle_dir, problem_edits=[("return x + y", "return x.no_such_method()")]))
    [error] = result.errors
    assert (error.code, error.line) == ("AR507", 15)  # `reference vector_add(x, y):`
    assert "no_such_method" in error.message


def test_inputs_the_launcher_rejects_are_ar503_naming_the_parameter(bundle_dir):
    edit = ('"y": torch.randn(n, generator=generator)', '"y": torch.randn(n + 1, generator=generator)')
    result = gate(fixture_bundle(bundle_dir, problem_edits=[edit]))
    [error] = result.errors
    assert error.code == "AR503"
    assert "launcher rejected" in error.message and "`y`" in error.message
