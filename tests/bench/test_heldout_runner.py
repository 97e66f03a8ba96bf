"""`python bench/heldout.py run`, the held-out runner, on the CPU: its refinements' gate runs through a local dask
cluster give the summaries of the runner's serial path (refinements side by side, each gating in its own
children); a worker killed mid-run and a kernel that hangs end as they would one at a time; a call cut short by
--left leaves nothing half-finished that the next call (or a fresh machine, from the archive) would keep.

Real runs: `argus refine` children, the real gate (compile for sm_90, correct under the interpreter) on the
vector_add example without its tune list (one configuration to compile), at budget 1."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[2]
HELDOUT = ROOT / "bench" / "heldout.py"
EXAMPLE = (ROOT / "examples" / "vector_add.argus").read_text(encoding="utf-8")
SOURCE = EXAMPLE.replace(" tune [512, 1024, 2048, 4096]", "")
HANG = SOURCE.replace("    store(z[offs], a + b, mask=mask)",
                      "    for step in range(0, 2147483647, 1):\n        a = a * 0.5 + 1.0\n"
                      "    store(z[offs], a + b, mask=mask)")  # fmt: skip
RUNS = ("search", "random0")


def command(folder: Path, kernels: Path, *extra: str, runs=RUNS, budget: int = 1) -> list[str]:
    found = [sys.executable, str(HELDOUT), "run", "--set", str(kernels), "--dir", str(folder), "--budget", str(budget)]
    return [*found, "--device", "cpu", "--runs", " ".join(runs), "--jobs", "2", "--timeout", "60", *extra]


def runner(folder: Path, kernels: Path, *extra: str, **options) -> subprocess.CompletedProcess:
    done = subprocess.run(command(folder, kernels, *extra, **options), capture_output=True, text=True, timeout=400,
                          cwd=ROOT)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done


def summary(path: Path) -> dict:
    """A run's summary without wall times and without where its gate results came from (which run of two side by
    side gated a text first, and which read it from the shared store, is a race)."""
    data = json.loads(path.read_text())
    data.pop("start_cached"), data.pop("output"), data.pop("file")  # and where its files were
    for step in data["steps"]:
        step.pop("seconds"), step.pop("cached")
    return data


def summaries(folder: Path, kernel: str = "vadd") -> dict[str, dict]:
    return {name: summary(folder / f"{kernel}.{name}.json") for name in RUNS}


@pytest.fixture(scope="module")
def kernels(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("set")
    (folder / "vadd.argus").write_text(SOURCE)
    return folder


@pytest.fixture(scope="module")
def serial(kernels, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("serial") / "results"
    runner(folder, kernels, "--cluster", "serial")
    return folder


def test_the_runner_through_a_local_cluster_gives_the_serial_summaries_with_one_bar(kernels, serial, tmp_path):
    done = runner(tmp_path / "results", kernels, "--workers", "2", "--out", str(tmp_path))
    assert summaries(tmp_path / "results") == summaries(serial)
    assert summaries(serial)["search"]["gate_runs"] == 1
    assert "[heldout] cluster tcp://127.0.0.1:" in done.stderr and "2 gate runs at once" in done.stderr
    assert "▕████████████████████████▏ 2/2 gate runs, 2/2 runs finished, 0 running" in done.stderr
    assert (tmp_path / "results.tgz").is_file()
    # a fresh machine's call, seeded from the archive: every run finished there is kept, none is run again
    again = runner(tmp_path / "fresh", kernels, "--workers", "1", "--resume", str(tmp_path / "results.tgz"))
    assert "vadd search: finished earlier" in again.stderr and "vadd random0: finished earlier" in again.stderr
    assert summaries(tmp_path / "fresh") == summaries(serial)


@pytest.fixture(scope="module")
def cluster():
    """A cluster the runners are given the address of (--cluster ADDRESS), as one on other machines would be."""
    from distributed import Client

    from argus.gate.cluster import local_cluster

    with local_cluster(2) as started, Client(started, set_as_default=False) as client:
        yield started.scheduler_address, client


def test_a_worker_killed_mid_run_has_its_run_done_again_and_the_summaries_are_the_serial_ones(
    kernels, serial, cluster, tmp_path
):
    address, client = cluster
    given = command(tmp_path / "results", kernels, "--cluster", address)
    started = subprocess.Popen(given, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    os.kill(gate_worker(client), signal.SIGKILL)  # its run goes to another worker, or to it restarted
    _, said = started.communicate(timeout=400)
    assert started.returncode == 0, said
    assert summaries(tmp_path / "results") == summaries(serial)


def test_a_kernel_that_hangs_is_killed_at_its_limit_while_the_others_run(cluster, tmp_path):
    both = tmp_path / "set"
    both.mkdir()
    (both / "vadd.argus").write_text(SOURCE)
    (both / "hang.argus").write_text(HANG)
    limit = 20
    began = time.monotonic()
    runner(tmp_path / "results", both, "--cluster", cluster[0], "--timeout", str(limit), runs=["search"], budget=0)
    elapsed = time.monotonic() - began
    hung = json.loads((tmp_path / "results" / "hang.search.json").read_text())
    fine = json.loads((tmp_path / "results" / "vadd.search.json").read_text())
    assert hung["start_gate"]["correct"] == "error" and fine["start_gate"]["correct"] == "passed"
    assert elapsed < limit + 25  # side by side: not the limit and then vadd's run


def gate_worker(client, timeout_s: float = 120.0) -> int:
    """The pid of a worker once the runner of a gate run has started there."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for address, keys in client.processing().items():
            if any(str(k).startswith("gate-") for k in keys):
                pid = client.run(os.getpid, workers=[address])[address]
                if any(is_runner(p) for p in psutil.Process(pid).children(recursive=True)):
                    return pid
        time.sleep(0.2)
    raise AssertionError("no worker started a gate's runner")


def is_runner(process: psutil.Process) -> bool:
    try:
        return any(Path(arg).name == "run.py" for arg in process.cmdline())
    except psutil.Error:
        return False


def test_a_call_cut_short_by_left_keeps_what_finished_and_runs_the_rest_next_time(kernels, serial, tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    kept = serial / "vadd.search.json"
    (results / "vadd.search.json").write_text(kept.read_text())  # finished in an earlier call
    (results / "vadd.random0.json").write_text('{"file": ')  # cut short in an earlier call: no summary
    started = time.monotonic()
    short = runner(results, kernels, "--cluster", "serial", "--left", "4", "--min-left", "0")
    assert time.monotonic() - started < 60  # ended at the deadline (and 15 s for its children to go), not after
    assert "vadd search: finished earlier" in short.stderr
    assert (results / "vadd.search.json").read_text() == kept.read_text()
    lines = (results / "runs.txt").read_text().splitlines()
    assert len(lines) == 1 and re.match(r"vadd random0 rc=(143|-15) ", lines[0])  # SIGTERM at the deadline
    runner(results, kernels, "--cluster", "serial")
    assert summaries(results) == summaries(serial)
