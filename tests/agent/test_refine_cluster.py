"""`argus refine` through a dask cluster started here on the CPU (argus.gate.cluster): the search planner's
proposals gated together on several workers give the refinement of the serial path; a worker killed mid-batch
has its run done again elsewhere; a candidate that hangs is killed at its limit while the others go on. The gate
runs are real (compile for sm_90, correct under the interpreter) on the vector_add example, whose two sites
(tile_size.BN.row and num_warps.row) make one batch of two at budget 2. The scripted batches, with kept steps
mid-batch, are tests/agent/test_refine_batches.py's."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import pytest

from argus.agent.loop import refine
from argus.agent.plan import Proposal
from argus.agent.search import SearchPlanner
from argus.agent.trajectory import step_json
from argus.gate.cluster import ClusterGate, DaskExecutor, SerialExecutor, local_cluster
from argus.skills.library import load_cards

ROOT = Path(__file__).resolve().parents[2]
SOURCE = (ROOT / "examples" / "vector_add.argus").read_text(encoding="utf-8")
CARDS = load_cards()
GATE = dict(device="cpu", stages=("compile", "correct"), timeout_s=120, trials=1, seed=0, compile_configs=1)
# the interpreter runs this loop for ever: the correct stage outlives any limit (docs/diagnostics.md, AR504)
HANG = SOURCE.replace("    store(z[offs], a + b, mask=mask)",
                      "    for step in range(0, 2147483647, 1):\n        a = a * 0.5 + 1.0\n"
                      "    store(z[offs], a + b, mask=mask)")  # fmt: skip
TAIL = SOURCE.replace("policy num_warps = 4", "policy num_warps = 2")


@pytest.fixture(scope="module")
def executor():
    from distributed import Client

    with local_cluster(2) as cluster, Client(cluster, set_as_default=False) as client:
        yield DaskExecutor(client)


def record(result) -> dict:
    """The refinement as its summary and trajectory keep it, without wall times."""
    steps = [{k: v for k, v in step_json(s).items() if k != "seconds"} for s in result.steps]
    return {"best": result.best.source, "kept": result.skills, "runs": result.gate_runs, "steps": steps}


def search(gate) -> dict:
    return refine(SOURCE, "vector_add", SearchPlanner(CARDS), budget=2, gate=gate, cards=CARDS)


@pytest.fixture(scope="module")
def serial():
    return record(search(ClusterGate(SerialExecutor(), **GATE)))


def test_the_search_gated_in_a_batch_on_a_local_cluster_is_the_serial_refinement(executor, serial):
    gate = ClusterGate(executor, **GATE)
    result = search(gate)
    assert record(result) == serial
    assert result.gated_ahead == 2 and result.unused == 0  # both candidates in one batch of the cluster's width
    assert [s["gate_runs"] for s in serial["steps"]] == [1, 1]


def test_a_worker_killed_mid_batch_has_its_run_done_again_and_the_refinement_is_the_same(executor, serial):
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(search, ClusterGate(executor, **GATE))
        worker, runners = running_runner(executor)
        os.kill(worker, signal.SIGKILL)
        _, alive = psutil.wait_procs(runners, timeout=15)
        assert not alive  # the runner died with its worker
        result = pending.result(timeout=300)
    assert record(result) == serial


@dataclass
class Listed:
    """Proposes the given proposals in order; its fork proposes the rest (a planner that can look ahead)."""

    proposals: list[Proposal]
    name: str = "list"
    made: int = 0
    seen: list[str] = field(default_factory=list)

    def propose(self, state, history):
        self.seen.append(state.source)
        self.made += 1
        return self.proposals[self.made - 1] if self.made <= len(self.proposals) else None

    def fork(self, assumed_from: int) -> Listed:
        return Listed(self.proposals, self.name, self.made)


def test_a_candidate_that_hangs_is_killed_at_its_limit_while_the_next_one_is_gated_beside_it(executor):
    limit = 25.0
    gate = ClusterGate(executor, **(GATE | {"timeout_s": limit}))
    planner = Listed([Proposal(kind="source", source=HANG), Proposal(kind="source", source=TAIL)])
    started = time.monotonic()
    result = refine(SOURCE, "vector_add", planner, budget=2, gate=gate, cards=CARDS)
    elapsed = time.monotonic() - started
    hung, other = result.steps
    assert hung.feedback.stage == "correct" and [e["code"] for e in hung.feedback.data["errors"]] == ["AR504"]
    assert other.feedback.stage == "profile" and "not timed" in other.feedback.message  # correct, on the CPU
    assert result.gated_ahead == 2
    assert elapsed < 2 * limit  # one after the other: the start, the limit, then the other's run


def running_runner(executor: DaskExecutor, timeout_s: float = 120.0) -> tuple[int, list[psutil.Process]]:
    """The pid of a worker running a gate, once its runner (run.py) has started, and the runner's processes."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for address, keys in executor.client.processing().items():
            if any(str(k).startswith("gate-c") for k in keys):  # a candidate's, not the start's
                pid = executor.client.run(os.getpid, workers=[address])[address]
                runners = [p for p in psutil.Process(pid).children(recursive=True) if is_runner(p)]
                if runners:
                    return pid, runners
        time.sleep(0.2)
    raise AssertionError("no worker started a candidate's runner")


def is_runner(process: psutil.Process) -> bool:
    try:
        return any(Path(arg).name == "run.py" for arg in process.cmdline())
    except psutil.Error:
        return False


def argus_refine(kernel: Path, *extra: str) -> tuple[dict, str]:
    """The CLI on the kernel without its tune list: one configuration to compile (the CLI compiles up to 8)."""
    kernel.write_text(SOURCE.replace(" tune [512, 1024, 2048, 4096]", ""))
    command = [sys.executable, "-m", "argus", "refine", str(kernel), "--device", "cpu", "--json", "--no-memory"]
    done = subprocess.run([*command, *extra], cwd=kernel.parent, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    for step in summary["steps"]:
        step.pop("seconds")
    return summary, done.stderr


def test_argus_refine_gates_through_a_local_cluster_by_default(tmp_path):
    summary, said = argus_refine(tmp_path / "vector_add.argus", "--budget", "2", "--workers", "2")
    assert "[refine] 2 candidates gated in batches of up to 2: 0 of them no step asked for" in said
    assert re.search(r"^\[refine\] 2 gate runs at once: ▕█+░*▏ 1/2 \(\d+\.\d s\)$", said, re.MULTILINE), said
    steps = [(s["proposal"]["skill"], s["gate_runs"], s["feedback"]["stage"]) for s in summary["steps"]]
    assert steps == [("tile_size.BN.row", 1, "profile"), ("num_warps.row", 1, "profile")]  # correct, not timed
    assert summary["gate_runs"] == 2 and summary["kept"] == []


def test_a_run_with_nothing_to_gate_together_starts_no_cluster_by_default():
    from argus.agent.llm import LlmPlanner
    from argus.cli.main import build_parser
    from argus.cli.refine import cluster_for

    def cluster(*extra: str, planner=None) -> str:
        args = build_parser().parse_args(["refine", "k.argus", *extra])
        return cluster_for(args, planner or SearchPlanner(CARDS))

    assert cluster("--workers", "2") == "local" and cluster("--budget", "0") == "serial"
    assert cluster("--device", "cpu", "--workers", "1") == "serial"  # one CPU worker: nothing at once
    assert cluster("--device", "cpu", "--workers", "2", "--batch", "1") == "serial"
    assert cluster(planner=LlmPlanner.__new__(LlmPlanner)) == "serial"  # it proposes one at a time
    assert cluster("--cluster", "local", "--budget", "0") == "local"  # asked for: started
    assert cluster("--cluster", "tcp://host:8786", planner=LlmPlanner.__new__(LlmPlanner)) == "tcp://host:8786"
