"""What every stage of the runner shares: the bundle's files, error records mapped to Argus lines, versions.

Standard library only at import time; torch is imported by the functions that need it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import sys
import time
import traceback
from pathlib import Path
from types import ModuleType

MANIFEST = "manifest.json"
KERNEL_MODULE = "kernel.py"


class Bundle:
    """A gate bundle on disk: manifest.json, the generated kernel.py and one problem module per kernel (or model)
    it gates."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder.resolve()
        self.manifest = json.loads((self.folder / MANIFEST).read_text(encoding="utf-8"))
        self.kernel_path = self.folder / KERNEL_MODULE

    @property
    def kernels(self) -> list[str]:
        return list(self.manifest["kernels"])

    def facts(self, kernel: str) -> dict:
        return self.manifest["kernels"][kernel]

    def is_model(self, name: str) -> bool:
        return bool(self.facts(name).get("model"))

    def problem_path(self, kernel: str) -> Path:
        return self.folder / self.facts(kernel)["problem"]

    def load_kernel_module(self) -> ModuleType:
        return load_module(self.kernel_path, "argus_generated_kernel")

    def load_problem_module(self, kernel: str) -> ModuleType:
        return load_module(self.problem_path(kernel), f"argus_problem_{kernel}")


def load_module(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # triton.jit reads the source through the module's file
    spec.loader.exec_module(module)
    return module


def parameter_names(entry: dict) -> list[str]:
    """A KERNELS entry's parameters, in order (generated entries hold a record per parameter)."""
    return [p["name"] if isinstance(p, dict) else p for p in entry["params"]]


def launch(entry: dict, inputs: dict, overrides: dict | None = None):
    """Call a kernel's launcher with its arguments by name (a scalar the inputs leave out keeps its default),
    and tile constants or policy settings overridden."""
    arguments = {name: inputs[name] for name in parameter_names(entry) if name in inputs}
    return entry["launcher"](**arguments, **(overrides or {}))


# ---- errors ---------------------------------------------------------------------------------------------


def error(code: str, message: str, stage: str | None, line: int | None = None, **extra) -> dict:
    """A GateError record (argus.gate.result.GateError)."""
    record = {"code": code, "message": message, "stage": stage, "line": line}
    record.update({k: v for k, v in extra.items() if v is not None})
    return record


def argus_line(source_map: dict, generated_line: int | None) -> int | None:
    """The Argus line of a generated line: its own entry, else the closest mapped line above it."""
    if generated_line is None or not source_map:
        return None
    mapped = {int(k): v for k, v in source_map.items()}
    above = [line for line in mapped if line <= generated_line]
    return mapped[max(above)] if above else None


def deepest_frame_in(tb, path: Path) -> int | None:
    """The line of the innermost traceback frame that ran code from `path`."""
    found = frames_in(tb, path)
    return found[-1] if found else None


def frames_in(tb, path: Path) -> list[int]:
    """The lines of the traceback's frames that ran code from `path`, outermost first."""
    return [frame.lineno for frame in traceback.extract_tb(tb) if _same_file(frame.filename, path)]


def _same_file(filename: str, path: Path) -> bool:
    try:
        return Path(filename).resolve() == path
    except OSError:
        return False


OUT_OF_MEMORY_TEXT = ("out of memory", "can't allocate memory", "cannot allocate memory", "std::bad_alloc")


def is_out_of_memory(exc: BaseException) -> bool:
    if isinstance(exc, MemoryError):
        return True
    if type(exc).__name__ == "OutOfMemoryError":  # torch.OutOfMemoryError, without importing torch
        return True
    text = str(exc).lower()
    return any(marker in text for marker in OUT_OF_MEMORY_TEXT)


def exception_text(exc: BaseException, limit: int = 4000) -> str:
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return text if len(text) <= limit else text[: limit // 2] + "\n...\n" + text[-limit // 2 :]


def traceback_tail(exc: BaseException, limit: int = 3000) -> str:
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return text[-limit:]


def sizes_text(sizes: dict) -> str:
    """Problem sizes as a user reads them: `M=96, N=80, K=128`."""
    return ", ".join(f"{name}={value}" for name, value in sizes.items())


def one_line(text: str, limit: int = 300) -> str:
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return first if len(first) <= limit else first[: limit - 3] + "..."


# ---- where we run -------------------------------------------------------------------------------------


def versions() -> dict:
    found = {"python": platform.python_version()}
    for name in ("torch", "triton"):
        module = sys.modules.get(name)
        if module is not None:
            found[name] = getattr(module, "__version__", "?")
    return found


def device_name(device: str) -> str:
    if device == "cuda":
        import torch

        return torch.cuda.get_device_name()
    return "cpu"


# The GPU-lock lines a worker prints around its wait for the lock: the parent stops the stage's clock between
# them, so a kernel's time limit measures its own work, not its turn in the queue.
LOCK_WAITING = "waiting for the GPU (another runner holds --gpu-lock)"
LOCK_TAKEN = "took the GPU"


class QueueClock:
    """A time limit that stops while a child waits for the GPU lock (between its LOCK_WAITING and LOCK_TAKEN
    lines): with runners side by side on one GPU, a turn in the queue is not the kernel's time. Used by the
    runner for its stage workers and by argus.gate.process for the runner."""

    def __init__(self, limit_s: float) -> None:
        self.limit_s, self.started = limit_s, time.monotonic()
        self.queued_s, self.queued_since = 0.0, None

    def see(self, line: str) -> None:
        if LOCK_WAITING in line:
            self.queued_since = time.monotonic()
        elif LOCK_TAKEN in line and self.queued_since is not None:
            self.queued_s += time.monotonic() - self.queued_since
            self.queued_since = None

    def left(self) -> float:
        now = time.monotonic()
        queued = self.queued_s + (now - self.queued_since if self.queued_since is not None else 0.0)
        return self.limit_s - (now - self.started - queued)


GATE_PACKAGES = ("torch", "triton")
NO_CUDA = "no CUDA GPU here (torch.cuda.is_available() is False): use --device cpu or auto"


def missing_packages() -> list[str]:
    """The gate's packages this Python cannot import, found without importing them."""
    return [name for name in GATE_PACKAGES if importlib.util.find_spec(name) is None]


def missing_packages_message(missing: list[str]) -> str:
    verb = "is" if len(missing) == 1 else "are"
    return (
        f"{' and '.join(missing)} {verb} not installed for {sys.executable}, and the gate needs torch and triton: "
        f"{sys.executable} -m pip install torch triton (on a GPU machine, a CUDA build of torch first, from the "
        "index that matches the driver: https://pytorch.org/get-started/locally/)"
    )


def progress(message: str) -> None:
    """One line on stderr: the parent shows it (the editor as progress, the CLI as is)."""
    print(f"[gate] {message}", file=sys.stderr, flush=True)


def interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


# ---- a stage's phases, and what their failures mean -------------------------------------------------------

# phase -> (code, what failed) for an error that is not an out-of-memory one
PHASE_CODES = {
    "load": ("AR501", "the generated code does not load"),
    "compile": ("AR501", "Triton cannot compile the kernel"),
    "inputs": ("AR507", "making the inputs failed"),
    "launch": ("AR503", "the kernel launch failed"),
    "reference": ("AR507", "the reference failed"),
    "measure": ("AR503", "measuring failed"),
}


class StageStop(Exception):
    """Ends a stage with one error record (already classified and mapped to an Argus line)."""

    def __init__(self, record: dict) -> None:
        super().__init__(record["message"])
        self.record = record


class Phases:
    """Runs the phases of one kernel's stage, turning an exception into an AR5xx record at an Argus line."""

    def __init__(self, bundle: Bundle, kernel: str, stage: str) -> None:
        self.bundle, self.kernel, self.stage = bundle, kernel, stage
        self.facts = bundle.facts(kernel)
        self.kernel_source_map: dict = {}
        self.problem_source_map: dict = {}

    def load(self) -> tuple:
        """(generated module, problem module, the kernel's KERNELS entry or the model's MODELS entry), with their
        source maps recorded so a failure in either maps back to its Argus line."""
        module = self.run("load", self.bundle.load_kernel_module)
        self.kernel_source_map = getattr(module, "SOURCE_MAP", {})
        problem = self.run("load", self.bundle.load_problem_module, self.kernel)
        self.problem_source_map = getattr(problem, "SOURCE_MAP", {})
        table = module.MODELS if self.bundle.is_model(self.kernel) else module.KERNELS
        return module, problem, table[self.kernel]

    def run(self, phase: str, action, *args, **kwargs):
        try:
            return action(*args, **kwargs)
        except StageStop:
            raise
        except Exception as exc:
            raise StageStop(self.classify(exc, phase)) from exc

    def classify(self, exc: BaseException, phase: str) -> dict:
        code, what = PHASE_CODES[phase]
        if is_out_of_memory(exc):
            code, what = "AR506", f"out of memory ({phase})"
        generated, line = self.locate(exc, phase)
        text = one_line(exception_text(exc))
        if type(exc).__name__ == "ArgusLaunchError":  # its message already names kernel, parameter and values
            what, text = "the launcher rejected the arguments", one_line(str(exc))
        message = f"{self.kernel}: {what}: {text}"
        return error(code, message, self.stage, line, detail=traceback_tail(exc), generated_line=generated)

    def locate(self, exc: BaseException, phase: str) -> tuple[int | None, int | None]:
        """(generated line, Argus line) of the innermost frame in the kernel or problem module."""
        kernel_line = deepest_frame_in(exc.__traceback__, self.bundle.kernel_path)
        if kernel_line is not None and phase in ("launch", "compile", "load", "measure"):
            line = argus_line(self.kernel_source_map, kernel_line)
            if line is None:
                # Raised in the module's runtime (a launcher's checks), which maps to no Argus line: the innermost
                # caller that does, such as a model's launch, says where.
                frames = frames_in(exc.__traceback__, self.bundle.kernel_path)
                mapped = [n for n in frames if n in self.kernel_source_map]
                if mapped:
                    kernel_line = mapped[-1]
                    line = argus_line(self.kernel_source_map, kernel_line)
            return kernel_line, line or self.facts["line"]
        problem_line = deepest_frame_in(exc.__traceback__, self.bundle.problem_path(self.kernel))
        block = self.facts.get("inputs_line") if phase == "inputs" else self.facts.get("reference_line")
        if problem_line is not None:
            return None, argus_line(self.problem_source_map, problem_line) or block or self.facts["line"]
        return None, block if phase in ("inputs", "reference") else self.facts["line"]


def stage_record(status: str, message: str = "", facts: dict | None = None, errors: list | None = None) -> dict:
    return {"status": status, "message": message, "facts": facts, "errors": errors or []}


def stopped(stop: StageStop) -> dict:
    """The stage record of a stage that ended early: failed for a wrong kernel, error for everything else."""
    status = "failed" if stop.record["code"] in ("AR501", "AR502") else "error"
    return stage_record(status, stop.record["message"], None, [stop.record])
