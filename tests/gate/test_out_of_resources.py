"""On a GPU a configuration over the shared-memory limit fails where Triton loads the module, with its
OutOfResources: the compile stage reads the bytes from it and reports AR410, as it does for a compile's
metadata on the CPU (seen on an H200: `Required: 294912, Hardware limit: 232448` for BK = 128 at 3 stages of a
128 x 256 f16 tile)."""

from __future__ import annotations

import sys

from gate_support import ROOT

sys.path.insert(0, str(ROOT / "server" / "argus" / "gate" / "runner"))

import gate_compile  # the runner's module, as run.py imports it


class OutOfResources(Exception):  # the name Triton's triton.runtime.errors.OutOfResources has
    pass


def test_triton_s_out_of_resources_for_shared_memory_gives_the_bytes_and_the_limit():
    message = (
        "out of resource: shared memory, Required: 294912, Hardware limit: 232448. Reducing block sizes or "
        "`num_stages` may help."
    )
    assert gate_compile.out_of_shared_memory(OutOfResources(message)) == (294912, 232448)
    try:
        try:
            raise OutOfResources(message)
        except OutOfResources as inner:
            raise RuntimeError("loading failed") from inner
    except RuntimeError as outer:
        assert gate_compile.out_of_shared_memory(outer) == (294912, 232448)
    assert gate_compile.out_of_shared_memory(OutOfResources("out of resource: registers")) is None
    assert gate_compile.out_of_shared_memory(ValueError(message)) is None
