"""`argus` as a user runs it: the console script in a subprocess (`python -m argus`, the same entry point)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
ARGUS = [sys.executable, "-m", "argus"]


def argus(*args: str, cwd: Path = ROOT, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*ARGUS, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )


def environment(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(extra)
    return env


def copy_example(folder: Path, name: str = "vector_add") -> Path:
    path = folder / f"{name}.argus"
    path.write_text((EXAMPLES / f"{name}.argus").read_text(encoding="utf-8"), encoding="utf-8")
    return path


def processes_mentioning(text: str, also: str = "") -> list[int]:
    """Live processes whose command line mentions `text` (a test's own temporary folder, say), and `also`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text in command and also in command and state != "Z":
            found.append(int(entry.name))
    return found


def wait_until(condition, timeout_s: float, step_s: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(step_s)
    return condition()


def no_traceback(done: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in done.stderr, done.stderr
    assert "Exception ignored" not in done.stderr, done.stderr
