"""bench/lineage_device.py on the CPU: a lineage's bundles (`argus lineage --device bundle`) gated through a local
dask cluster, each result written where the bundle's run.sh writes it (so `argus lineage --read` reads them), one
already there kept. Real gate runs of the softmax lineage's expert and one candidate (compile for sm_90, correct
under the interpreter; no profile without a GPU)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from argus.gate import read_result

ROOT = Path(__file__).resolve().parents[2]
RECORD = ROOT / "skills" / "lineages" / "softmax.softmax.cpu.json"


def test_bundles_are_gated_through_a_cluster_and_a_result_already_there_is_kept(tmp_path):
    folder = tmp_path / "softmax.softmax"
    done = subprocess.run([sys.executable, "-m", "argus", "lineage", "--device", "bundle", "--record", str(RECORD),
                           "-o", str(folder), str(ROOT / "skills" / "experts" / "softmax.argus")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    candidates = sorted(p.parent.name for p in folder.glob("*/run.py") if p.parent.name != "base")
    for name in candidates[2:]:
        shutil.rmtree(folder / name)  # the expert and two candidates are enough
    earlier = folder / f"{candidates[1]}.result.json"
    earlier.write_text("an earlier call's")
    command = [sys.executable, str(ROOT / "bench" / "lineage_device.py"), str(folder), "--device", "cpu",
               "--workers", "2", "--out", str(tmp_path)]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    for name in ("base", candidates[0]):
        result = read_result(folder / f"{name}.result.json")
        assert result.compile.status == "passed" and result.correct.status == "passed"
    assert earlier.read_text() == "an earlier call's"
    assert "softmax.softmax: 3 of 3 results" in done.stdout and (tmp_path / "lineage.tgz").is_file()
    assert "[lineage] step 1 ▕████████████████████████▏ 2/2" in done.stderr
