"""The autotuned launcher hands triton.autotune each tune configuration once, and none that the GPU it runs on
cannot give the shared memory `argus check` estimates for it: such a one is left out and said through the
`argus` logger, rather than left to fail at launch with Triton's OutOfResources."""

from __future__ import annotations

import logging

import pytest
from codegen_support import ROOT

MATMUL = (ROOT / "examples" / "matmul.argus").read_text(encoding="utf-8")
TUNED = MATMUL.replace(
    "policy num_warps = 8, num_stages = 3", "policy num_warps = 8, num_stages = 3, tma = 0 tune [0, 1]"
)


def test_each_entry_carries_the_estimate_of_each_configuration(build):
    entry = build(MATMUL).KERNELS["matmul"]
    assert entry["configs"] == [{"BN": 128}, {"BN": 256}]
    assert entry["shared_memory"] == [98304, 147456]  # what Triton 3.9 compiles for sm_90 (docs/codegen.md)


def test_configurations_that_differ_only_in_settings_the_launcher_keeps_are_handed_once(build):
    module = build(TUNED)
    entry = module.KERNELS["matmul"]
    assert len(entry["configs"]) == 4  # BN x tma
    configs = module._fitting_configs(entry, {"num_warps": 8, "num_stages": 3})
    assert [(c.kwargs, c.num_warps, c.num_stages) for c in configs] == [({"BN": 128}, 8, 3), ({"BN": 256}, 8, 3)]


def test_a_configuration_the_gpu_cannot_give_its_shared_memory_is_left_out_and_said(build, monkeypatch, caplog):
    module = build(MATMUL)
    entry = module.KERNELS["matmul"]
    monkeypatch.setattr(module, "_shared_memory_limit", lambda: 101376)  # an RTX 4090's 99 KiB a program
    with caplog.at_level(logging.WARNING, logger="argus"):
        configs = module._fitting_configs(entry, {"num_warps": 8, "num_stages": 3})
    assert [c.kwargs for c in configs] == [{"BN": 128}]
    assert caplog.messages == [
        "matmul: the autotuner leaves out BN=256: it needs about 147456 bytes of shared memory, this GPU gives 101376"
    ]
    monkeypatch.setattr(module, "_shared_memory_limit", lambda: 65536)
    with pytest.raises(module.ArgusLaunchError, match=r"tune configurations.*fits in the 65536 bytes"):
        module._fitting_configs(entry, {"num_warps": 8, "num_stages": 3})
