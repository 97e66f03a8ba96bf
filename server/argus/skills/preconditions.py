"""Every precondition a transform may check, by name, with what it means. The names are what cards, the
matcher and refusals report; docs/skills.md lists this table (a test keeps it in step)."""

from __future__ import annotations

PRECONDITIONS: dict[str, str] = {
    "still_checks": "the rewritten kernel has no more checker errors (syntax, names, dtypes, shapes) than before",
    "verifies": "the rewritten kernel has no verifier errors (bounds, races, contraction, coverage, tags)",
    "loop_has_dot": "a `for` loop of the kernel contains a `dot` (there is a main loop to pipeline or tile)",
    "fits_shared_memory": "the pipelined dot operands fit the 227 KiB of shared memory an sm_90 program may use",
    "no_memory_carried_dependency": "no tensor is both loaded and stored by the kernel, so loads issued early "
    "(pipelining) cannot read what a later store writes",
    "in_tune_list": "the new value is in the setting's `tune` list (or the setting has none)",
    "setting_present": "the kernel declares the setting the rewrite changes",
    "grid_row_major_2d": "the grid is `(cdiv(M, BM), cdiv(N, BN))` and the program ids are taken as "
    "`pm, pn = program_id(0), program_id(1)`",
    "name_free": "the name the rewrite introduces is not used in the kernel yet",
    "work_depends_on_program": "a loop's bounds depend on the program id (triangular work, as in causal "
    "attention), so the order programs start in matters",
    "divisible_by_tile": "for every masked axis `r < S` with `r` a run of `B`, `requires S % B == 0` is stated",
    "tile_runs": "every index of the access is a scalar or a run `start + arange(B)`",
    "accumulator_feeds_dot": "the zeros tile is the accumulator of a `dot` in a loop",
    "loads_are_runs": "every load that feeds a dot indexes each axis with a run or a scalar (TMA-describable)",
    "start_is_multiple": "the run's start is a product with the block size as a factor",
    "divisor_is_broadcast": "the divisor is one value per row (a reduction or a broadcast `x[:, None]`), so one "
    "reciprocal serves a whole row",
    "rescales_running_sums": "the loop rescales every running sum it carries by `exp2(m_i - m_new)` when the "
    "running max grows, so a max that is still moving (one pass) gives the same result as the final one",
    "blocks_left_of_diagonal": "the loop's key blocks `rn = n0 + arange(BN)` end where the row block `rm` starts, "
    "at a multiple of BN, so every key precedes every query of the block and the causal mask keeps every score",
    "not_stored": "the kernel never writes the tensor the load reads, so a second read would see what the first "
    "one saw",
    "reduction_loop": "one top-level `for` over `range(0, K, BK)` (or `range(0, n)`) sums dots into tiles that "
    "start as `zeros(...)` (`acc = dot(a, b, acc)`, `acc += E`), carries nothing else from one iteration to the "
    "next, and leaves nothing but the sums to the code after it",
    "f32_output": "the sums accumulate in f32 and are stored into f32 `out` tensors, so `atomic_add` combines the "
    "splits without rounding each partial sum to 16 bits",
    "linear_epilogue": "every store after the loop writes a value linear in the sums: the accumulator, sums of "
    "such terms, products and quotients with values that do not depend on it (a bias added after the loop, an "
    "activation such as GELU, a cast, or a store of anything else would be applied once per split)",
    "small_output_grid": "at the kernel's `large` sizes (else its largest set) the grid has fewer programs than "
    "the 132 SMs of an H200 and the K loop runs at least 4 iterations in each split",
    "f32_operands": "the dot's operands are f32: input precision and operand layout matter for f32 dots only (a "
    "16-bit dot runs on the tensor cores as it is, and Hopper's wgmma reads 16-bit operands in either major order)",
    "keeps_accuracy": "the accuracy rule (argus.dsl.accuracy) says the new precision keeps the tolerance of every "
    "output the dot's result reaches, in every size set, at that output's reduction length and with the "
    "reference's declared tolerance (the judgement behind AR219)",
    "input_tensor": "the operand is loaded from an input tensor, which the launcher can copy into the declared "
    "layout before the launch (an out tensor is the caller's memory: the kernel's writes would go to the copy)",
}
