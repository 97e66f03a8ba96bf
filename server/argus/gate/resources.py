"""The manifest's `resources` entry: what the runner's compile stage needs to compile every configuration the
autotuner may pick and to blame an overflow on the tune value it comes from (argus.dsl.resources estimates).

    limit             bytes of shared memory an sm_90 program may have
    estimate          the declared configuration's estimate
    autotune_configs  how many configurations the autotuned launcher hands triton.autotune
    configs           the others, one per group that differs in what the estimate depends on, largest estimate
                      first: {"config": tuned values, "estimate": bytes, "covers": configurations in the group}
    tune_spans        per setting, [value, line, column, end column] of each tune value (1-based, end exclusive)
"""

from __future__ import annotations

from argus.dsl.check import CheckResult
from argus.dsl.resources import SHARED_MEMORY_LIMIT, autotune_configs, compile_groups, shared_memory, tune_value_spans


def resource_facts(check: CheckResult, name: str) -> dict:
    kernel_ir = check.analysis.kernels[name]
    source = next(k for k in check.module.kernels if k.name == name)
    spans = {
        setting: [[value, span.line + 1, span.col + 1, span.end_col + 1] for value, span in values]
        for setting, values in tune_value_spans(source).items()
    }
    return {
        "limit": SHARED_MEMORY_LIMIT,
        "estimate": shared_memory(kernel_ir, None, source),
        "autotune_configs": len(autotune_configs(kernel_ir)),
        "configs": [
            {"config": g.config, "estimate": g.estimate, "covers": g.size} for g in compile_groups(source, kernel_ir)
        ],
        "tune_spans": spans,
    }
