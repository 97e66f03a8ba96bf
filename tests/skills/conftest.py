import io
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def softmax_walk():
    """One real CPU lineage of the smallest expert (softmax): every gate run here is the real gate (compile for
    sm_90, correct under the Triton interpreter), so the tests that read it share the half minute it takes."""
    from argus.skills.lineage.walker import Progress, cpu_gate, walk
    from argus.skills.transforms import TRANSFORMS

    expert = ROOT / "skills" / "experts" / "softmax.argus"
    stream = io.StringIO()
    record = walk(
        expert,
        "softmax",
        cpu_gate(str(expert)),
        device="cpu",
        profiled=False,
        progress=Progress(stream),
        relative_to=ROOT,
        transforms=[name for name in TRANSFORMS if name != "reuse_load"],  # two more gate runs
    )
    return record, stream.getvalue()


@pytest.fixture(scope="session")
def softmax_cards(softmax_walk):
    from argus.skills.extract import extract

    return extract([softmax_walk[0]])
