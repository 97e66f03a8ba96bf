"""Run the gate on this bundle: compile, correct and profile each kernel, write the results as JSON.

    python3 run.py [--kernel NAME]... [--stage compile|correct|profile]... [--device auto|cpu|cuda]
                   [--out FILE] [--timeout SECONDS] [--trials N] [--profile-trials N]

Needs only the standard library, torch and triton. Every stage of every kernel runs in its own child process
(a new session, killed with everything it started when its time is up), so a kernel that hangs, crashes or
runs out of memory ends its own gate run with an AR504, AR505 or AR506 error and the next kernel still runs.
On the CPU the correct stage's child gets TRITON_INTERPRET=1; the compile stage's never does, since the flag
replaces triton.jit. The result file is what `argus gate --read FILE` validates (argus.gate.result.GateRun).

Exit status: 0 when every kernel passed every stage it ran, 1 when one did not (the result file says why; so
does stderr when torch or triton is missing, or there is no GPU for --device cuda), 2 on usage errors.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from gate_common import (  # noqa: E402
    LOCK_TAKEN,
    LOCK_WAITING,
    NO_CUDA,
    Bundle,
    QueueClock,
    argus_line,
    error,
    missing_packages,
    missing_packages_message,
    progress,
)

RESULT_FORMAT = "argus-gate/1"
STAGES = ("compile", "correct", "profile")
DEFAULT_MEMORY_LIMIT_MB = 8192  # CPU children only: CUDA reserves far more address space than it uses
KILL_GRACE_S = 2.0


# ---- the child side: one stage of one kernel ------------------------------------------------------------


def run_worker(args: argparse.Namespace) -> int:
    import faulthandler

    faulthandler.enable()  # a crash prints the Python stack, so the parent can name the line
    bundle = Bundle(HERE)
    started = time.perf_counter()
    if args.worker == "probe":
        record = probe()
    elif args.worker == "ceilings":
        import gate_profile

        with gpu_lock(args):
            record = {"ceilings": gate_profile.measure_ceilings()}
    elif args.worker == "profile":  # holds the lock only while it times (gate_profile's `turn`)
        record = run_stage(bundle, args)
    else:
        with gpu_lock(args):
            record = run_stage(bundle, args)
    from gate_common import device_name, versions

    if args.worker not in ("probe", "ceilings"):
        record["device"] = device_name(args.device)
        record["versions"] = versions()
    record["seconds"] = time.perf_counter() - started
    Path(args.result).write_text(json.dumps(record), encoding="utf-8")
    return 0


@contextlib.contextmanager
def gpu_lock(args: argparse.Namespace):
    """With --gpu-lock, the GPU stages of runners started side by side take turns on the GPU: each holds an
    exclusive lock on that file while it launches (torch and triton are imported before, outside the lock; the
    profile stage compiles its kernel and torch.compile's reference before it asks), so a timing never shares
    the GPU, while imports and compiles run in parallel. A wait for the lock is said
    (LOCK_WAITING, then LOCK_TAKEN): the parent does not count it against the stage's time limit."""
    if not args.gpu_lock or args.device != "cuda" or args.worker not in ("correct", "profile", "ceilings"):
        yield
        return
    import fcntl

    import torch
    import triton  # noqa: F401

    # Imports and the CUDA context (seconds under some hypervisors) come first, outside the lock: they do not
    # disturb another process's timing.
    if torch.cuda.is_available():
        torch.zeros(1, device="cuda")

    with open(args.gpu_lock, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            progress(LOCK_WAITING)
            fcntl.flock(handle, fcntl.LOCK_EX)
            progress(LOCK_TAKEN)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def probe() -> dict:
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    return {"device": device}


def run_stage(bundle: Bundle, args: argparse.Namespace) -> dict:
    kernel = args.kernel[0]
    if args.worker == "compile":
        import gate_compile

        return gate_compile.run_compile(bundle, kernel, args.device, args.compile_configs, args.compile_budget)
    if args.worker == "correct":
        import gate_correct

        return gate_correct.run_correct(bundle, kernel, args.device, args.trials, args.seed)
    import gate_profile

    ceilings = json.loads(args.ceilings) if args.ceilings else None
    time_compiled = args.references == "all"
    turn = functools.partial(gpu_lock, args)
    return gate_profile.run_profile(bundle, kernel, args.device, args.profile_trials, ceilings, time_compiled, turn)


# ---- the parent side: children with limits ----------------------------------------------------------------


class Child:
    """One worker process in its own session, so a time-out can kill it and whatever it started."""

    current: Child | None = None

    def __init__(self, argv: list[str], env: dict, memory_limit_mb: int | None) -> None:
        self.process = subprocess.Popen(
            argv,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=lambda: limit_child(memory_limit_mb),
        )
        self.lock_wait_s = 0.0
        Child.current = self

    def wait(self, timeout_s: float) -> tuple[int | None, str]:
        """(exit status, None on time-out; the output, stdout and stderr, progress lines passed on). Time the
        child spends waiting for the GPU lock does not count against `timeout_s` (QueueClock);
        `self.lock_wait_s` says how long that was."""
        lines: list[str] = []
        clock = QueueClock(timeout_s)
        import threading

        def pump(stream, echo: bool) -> None:
            for raw in iter(stream.readline, b""):
                text = raw.decode("utf-8", "replace")
                lines.append(text)
                if text.startswith("[gate]"):
                    clock.see(text)
                    if echo:
                        sys.stderr.write(text)
                        sys.stderr.flush()

        readers = [
            threading.Thread(target=pump, args=(self.process.stdout, False), daemon=True),
            threading.Thread(target=pump, args=(self.process.stderr, True), daemon=True),
        ]
        for reader in readers:
            reader.start()
        status = None
        while status is None and clock.left() > 0:
            with contextlib.suppress(subprocess.TimeoutExpired):
                status = self.process.wait(timeout=min(max(clock.left(), 0.1), 1.0))
        if status is None:
            self.kill()
        for reader in readers:
            reader.join(timeout=5)
        self.lock_wait_s = clock.queued_s
        Child.current = None
        return status, "".join(lines)

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)


def limit_child(memory_limit_mb: int | None) -> None:
    """In the child, before exec: die with the parent (Linux), and cap memory where asked."""
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if memory_limit_mb:
        import resource

        limit = memory_limit_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def scratch_folder() -> Path:
    """The runner's own temporary folder, inside the bundle where it can be: `argus gate` removes its bundle
    folder even when the runner had to be killed with SIGKILL, and a folder in $TMPDIR would stay behind."""
    try:
        return Path(tempfile.mkdtemp(prefix="scratch-", dir=HERE))
    except OSError:  # a read-only bundle
        return Path(tempfile.mkdtemp(prefix="argus-gate-"))


def on_terminate(signum, frame) -> None:
    """SIGTERM from whoever runs us (a time-out, a cancelled request): take the current child down too."""
    if Child.current is not None:
        Child.current.kill()
    sys.exit(128 + signum)


class Runner:
    def __init__(self, bundle: Bundle, args: argparse.Namespace) -> None:
        self.bundle, self.args = bundle, args
        self.scratch = scratch_folder()
        self.device = args.device
        self.device_name = ""
        self.versions: dict = {}
        self.ceilings: dict | None = None
        self.ceilings_error = ""
        self.unavailable = ""  # why no stage can run on the device asked for
        self.lock_wait_s = 0.0  # the last child's wait for the GPU lock

    def spawn(self, worker: str, kernel: str | None, timeout_s: float, extra: list[str] = ()) -> tuple:
        """Run one worker; (its result record or None, exit status or None on time-out, its output)."""
        result = self.scratch / f"{worker}-{kernel or 'all'}.json"
        result.unlink(missing_ok=True)
        argv = [sys.executable, str(HERE / "run.py"), "--worker", worker, "--result", str(result)]
        argv += ["--device", self.device if self.device != "auto" else "cpu"]
        argv += ["--kernel", kernel] if kernel else []
        argv += list(extra)
        env = dict(os.environ)
        env.pop("TRITON_INTERPRET", None)
        env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # triton 3.9 warns when this is unset
        if worker == "correct" and self.device == "cpu":
            env["TRITON_INTERPRET"] = "1"
        env["PYTHONUNBUFFERED"] = "1"
        env["TMPDIR"] = str(self.scratch)  # what a child leaves when it is killed goes when the scratch goes
        # Stages on the CPU only: CUDA reserves far more address space than it uses, so the probe (which may
        # initialize CUDA) and GPU stages run without the cap.
        capped = worker in STAGES and self.device == "cpu" and self.args.memory_limit_mb > 0
        memory = self.args.memory_limit_mb if capped else None
        child = Child(argv, env, memory)
        status, output = child.wait(timeout_s)
        self.lock_wait_s = child.lock_wait_s
        record = None
        if status == 0 and result.exists():
            record = json.loads(result.read_text(encoding="utf-8"))
        return record, status, output

    def resolve_device(self) -> None:
        """`auto`: a GPU if torch sees one. `cuda` without one, or torch or triton missing: no stage can run
        (said, not crashed)."""
        missing = missing_packages()
        if missing:
            self.device = "cpu" if self.device == "auto" else self.device
            self.unavailable = missing_packages_message(missing)
            progress(self.unavailable)
            return
        if self.device == "cpu":
            return
        asked = self.device
        self.device = "cpu"  # the probe itself runs on the CPU
        record, _, _ = self.spawn("probe", None, 120)
        found = record["device"] if record else "cpu"
        if asked == "cuda" and found != "cuda":
            self.unavailable = NO_CUDA
        self.device = found if asked == "auto" else asked

    def measure_ceilings(self, reuse: str | None) -> None:
        """Measure the GPU's ceilings once; with `reuse`, a file shared by several bundles in one run."""
        if reuse and Path(reuse).exists():
            self.ceilings = json.loads(Path(reuse).read_text(encoding="utf-8"))
            progress(f"ceilings from {reuse} (measured earlier in this run)")
            return
        self.measure()
        if reuse and self.ceilings is not None:
            Path(reuse).write_text(json.dumps(self.ceilings), encoding="utf-8")

    def measure(self) -> None:
        progress("measuring the ceilings: copy bandwidth, cuBLAS fp16 and bf16 GEMM")
        lock = ["--gpu-lock", self.args.gpu_lock] if self.args.gpu_lock else []
        record, status, output = self.spawn("ceilings", None, 300, lock)
        if record is None:
            self.ceilings_error = failure_text(status, output)
            progress(f"ceilings failed: {self.ceilings_error}")
        else:
            self.ceilings = record["ceilings"]

    def gate(self, kernel: str) -> dict:
        facts = self.bundle.facts(kernel)
        started = time.perf_counter()
        deadline = started + self.args.timeout
        result = {
            "format": RESULT_FORMAT,
            "kernel": kernel,
            "source_path": self.bundle.manifest.get("source_path"),
            "device": self.device_name or self.device,
            "versions": {},
            "errors": [],
        }
        blocked = ""
        for stage in STAGES:
            record = {"status": "skipped", "seconds": 0.0, "message": "", "facts": None}
            if stage not in self.args.stage:
                record["message"] = "not asked for"
            elif self.unavailable:
                record.update(status="error", message=self.unavailable)
            elif blocked:
                record["message"] = blocked
            elif stage == "profile" and self.device != "cuda":
                record["message"] = "profiling needs a GPU"
            else:
                record = self.run_stage(kernel, stage, deadline, facts)
                deadline += self.lock_wait_s  # the turn in the GPU queue is not the kernel's time
                result["errors"].extend(record.pop("errors", []))
                device, versions = record.pop("device", None), record.pop("versions", None)
                if device:
                    result["device"] = self.device_name = device
                if versions:
                    result["versions"] = versions
                if record["status"] != "passed":
                    blocked = f"{stage} did not pass"
            result[stage] = record
        result["seconds"] = time.perf_counter() - started
        return result

    def run_stage(self, kernel: str, stage: str, deadline: float, facts: dict) -> dict:
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            message = f"{kernel}: no time left for {stage} (limit {self.args.timeout:g} s)"
            return {"status": "error", "seconds": 0.0, "message": message, "facts": None,
                    "errors": [error("AR504", message, stage, facts["line"])]}  # fmt: skip
        extra = ["--trials", str(self.args.trials), "--profile-trials", str(self.args.profile_trials)]
        extra += ["--references", self.args.references]
        if stage == "compile":  # the other tune configurations get at most half of what is left
            extra += ["--compile-configs", str(self.args.compile_configs), "--compile-budget", f"{remaining:.1f}"]
        if self.args.gpu_lock:
            extra += ["--gpu-lock", self.args.gpu_lock]
        if self.args.seed is not None:
            extra += ["--seed", str(self.args.seed)]
        if stage == "profile" and self.ceilings is not None:
            extra += ["--ceilings", json.dumps(self.ceilings)]
        progress(f"{kernel}: {stage}")
        started = time.perf_counter()
        record, status, output = self.spawn(stage, kernel, remaining, extra)
        seconds = time.perf_counter() - started
        if record is not None:
            record.pop("seconds", None)
            record["seconds"] = seconds
            if stage == "profile" and self.ceilings is None and record["status"] != "passed" and self.ceilings_error:
                record["message"] = f"the ceilings could not be measured: {self.ceilings_error}"
            return record
        found = self.containment_error(kernel, stage, status, output, remaining, facts)
        return {"status": "error", "seconds": seconds, "message": found["message"], "facts": None, "errors": [found]}

    def containment_error(self, kernel, stage, status, output, limit_s, facts) -> dict:
        """The AR5xx record of a child that timed out, died from a signal or exited without a result."""
        generated = crash_line(output, self.bundle.kernel_path)
        source_map = self.bundle.manifest.get("source_map", {})
        line = argus_line(source_map, generated) or facts["line"]
        tail = output[-3000:]
        if status is None:
            limit = f"{limit_s:.0f} s left of {self.args.timeout:g} s"
            message = f"{kernel}: {stage} did not finish within its time limit ({limit}); killed"
            return error("AR504", message, stage, line, detail=tail, generated_line=generated)
        if looks_out_of_memory(status, output):
            message = f"{kernel}: {stage} ran out of memory ({failure_text(status, output)})"
            return error("AR506", message, stage, line, detail=tail, generated_line=generated)
        verb = "crashed" if status < 0 else "failed"
        message = f"{kernel}: the {stage} process {verb} ({failure_text(status, output)})"
        return error("AR505", message, stage, line, detail=tail, generated_line=generated)


def failure_text(status: int | None, output: str) -> str:
    if status is None:
        return "timed out"
    if status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = f"signal {-status}"
        return f"killed by {name}"
    last = next((line for line in reversed(output.splitlines()) if line.strip()), "")
    return f"exit status {status}" + (f": {last.strip()[:300]}" if last else "")


def looks_out_of_memory(status: int, output: str) -> bool:
    text = output.lower()
    return status == -signal.SIGKILL or "memoryerror" in text or "out of memory" in text or "bad_alloc" in text


CRASH_FRAME = re.compile(r'File "([^"]+)", line (\d+)')


def crash_line(output: str, kernel_path: Path) -> int | None:
    """The kernel.py line in faulthandler's dump (innermost frames come first there)."""
    for match in CRASH_FRAME.finditer(output):
        with contextlib.suppress(OSError):
            if Path(match.group(1)).resolve() == kernel_path:
                return int(match.group(2))
    return None


# Set by a parent that may itself be killed (a cluster worker, argus.gate.cluster): its pid, so the runner dies with it.
PARENT_PID = "ARGUS_GATE_PARENT_PID"


def die_with_parent() -> None:
    """SIGTERM when the process that started us dies (Linux), so an orphaned runner never holds a GPU; a parent
    already gone before this ran ends the run at once."""
    parent = os.environ.pop(PARENT_PID, "")
    if not parent:
        return
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    if str(os.getppid()) != parent:
        sys.exit(128 + signal.SIGTERM)


def run_all(args: argparse.Namespace) -> int:
    signal.signal(signal.SIGTERM, on_terminate)
    die_with_parent()
    bundle = Bundle(HERE)
    unknown = [k for k in args.kernel if k not in bundle.kernels]
    if unknown:
        print(f"run.py: no kernel {unknown[0]!r} in this bundle (it has {', '.join(bundle.kernels)})", file=sys.stderr)
        return 2
    runner = Runner(bundle, args)
    try:  # SIGTERM (on_terminate) ends the run through SystemExit, so the scratch goes then too
        results = run_kernels(runner, args.kernel or bundle.kernels)
    finally:
        shutil.rmtree(runner.scratch, ignore_errors=True)
    out = Path(args.out) if args.out else HERE / "result.json"
    out.write_text(json.dumps({"format": RESULT_FORMAT, "results": results}, indent=2), encoding="utf-8")
    progress(f"wrote {out}")
    return 0 if all(passed(result) for result in results) else 1  # a script running the bundle can tell


def passed(result: dict) -> bool:
    """Every stage passed or was skipped (not asked for, or profile without a GPU), and no error was recorded."""
    return all(result[s]["status"] in ("passed", "skipped") for s in STAGES) and not result["errors"]


def run_kernels(runner: Runner, kernels: list[str]) -> list[dict]:
    args = runner.args
    runner.resolve_device()
    if "profile" in args.stage and runner.device == "cuda" and not runner.unavailable:
        runner.measure_ceilings(args.ceilings_file)
    results = []
    for kernel in kernels:
        results.append(runner.gate(kernel))
        ok = passed(results[-1])
        progress(f"{kernel}: {'passed' if ok else 'did not pass'} ({results[-1]['seconds']:.1f} s)")
    return results


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernel", action="append", default=[], help="gate only this kernel (repeatable)")
    parser.add_argument("--stage", action="append", choices=STAGES, help="run only this stage (repeatable)")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    parser.add_argument("--out", help="where to write the result JSON (default: result.json here)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per kernel, all its stages")
    parser.add_argument("--trials", type=int, default=3, help="correctness trials, each with a fresh seed")
    parser.add_argument("--profile-trials", type=int, default=100, help="timed launches (at least 100)")
    parser.add_argument("--seed", type=int, help="the first trial's seed (default: a random one, reported)")
    parser.add_argument("--memory-limit-mb", type=int, default=DEFAULT_MEMORY_LIMIT_MB, help="CPU children; 0: none")
    parser.add_argument("--ceilings-file", help="reuse the ceilings in this file, or measure and write them there")
    parser.add_argument(
        "--references", choices=("all", "eager"), default="all",
        help="the reference timings of profile: eager and torch.compile (all), or eager only (faster)",
    )  # fmt: skip
    parser.add_argument("--gpu-lock", metavar="FILE", help="take turns on the GPU with runners sharing FILE")
    parser.add_argument(
        "--compile-configs", type=int, default=8, metavar="N",
        help="configurations compiled per kernel, the declared one and the autotuner's with the most estimated "
        "shared memory (default 8; within half the stage's time)",
    )  # fmt: skip
    parser.add_argument("--compile-budget", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--worker", choices=("probe", "ceilings", *STAGES), help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    parser.add_argument("--ceilings", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.stage = args.stage or list(STAGES)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.worker:
        return run_worker(args)
    return run_all(args)


if __name__ == "__main__":
    sys.exit(main())
