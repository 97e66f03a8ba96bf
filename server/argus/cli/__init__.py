"""The `argus` command line."""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path

# Set by main's SIGINT handler: Ctrl-C was pressed, whether or not its KeyboardInterrupt got through.
INTERRUPTED = threading.Event()


def stop_if_interrupted() -> None:
    """Raise again the KeyboardInterrupt of a Ctrl-C that the code in between lost: ctypes turns one raised
    while it converts z3's arguments into an ArgumentError (which the verifier reports as an internal error of
    one obligation), and one raised in a __del__ is dropped. Called where a command can stop cleanly."""
    if INTERRUPTED.is_set():
        raise KeyboardInterrupt


def read_source(command: str, path: str | Path) -> str | None:
    """The text of an .argus file; None, with `argus COMMAND: cannot read ...` on stderr, when it cannot be read
    (the caller exits 2: a usage error)."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as problem:
        print(f"argus {command}: cannot read {path}: {reason(problem)}", file=sys.stderr)
        return None


def write_output(command: str, path: str | Path, text: str) -> bool:
    """Write a file the user named, making the folders it goes in (as --bundle does); False, with
    `argus COMMAND: cannot write ...` on stderr, when it cannot be written (the caller exits 2)."""
    path = Path(path)
    if not can_write(command, path):
        return False
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as problem:
        print(f"argus {command}: cannot write {path}: {reason(problem)}", file=sys.stderr)
        return False
    return True


def can_write(command: str, path: str | Path) -> bool:
    """Whether a file can go at `path`, asked before the work that makes it; makes the folders it goes in."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as problem:
        print(f"argus {command}: cannot write {path}: {reason(problem)}", file=sys.stderr)
        return False
    if path.is_dir():
        print(f"argus {command}: cannot write {path}: it is a folder", file=sys.stderr)
        return False
    return True


def reason(problem: Exception) -> str:
    """An OSError's own words ("No such file or directory"), without the errno and the path said already."""
    return getattr(problem, "strerror", None) or str(problem)


def positive_int(text: str) -> int:
    """argparse type: a whole number above zero (a time limit, a count of trials)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"a positive whole number, not {text!r}")
    return value


def non_negative_int(text: str) -> int:
    """argparse type: a whole number, zero or more (workers)."""
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"a whole number of at least 0, not {text!r}")
    return int(text)


def add_cluster_options(parser: argparse.ArgumentParser, cluster_help: str, cluster_default: str | None) -> None:
    """--cluster, --workers and --runs-per-gpu: where gate runs go (gate/cluster.py), the same for every command
    that fans them out; only what --cluster defaults to, and so its help, differ."""
    parser.add_argument("--cluster", default=cluster_default, metavar="ADDRESS", help=cluster_help)
    parser.add_argument(
        "--workers", type=non_negative_int, metavar="N",
        help="local: CPU workers (default: half the cores; none beside GPU workers for --device cuda)",
    )  # fmt: skip
    parser.add_argument(
        "--runs-per-gpu", type=positive_int, default=1, metavar="K",
        help="local: gate runs a GPU worker runs at once, their GPU stages taking turns on the card (default 1)",
    )  # fmt: skip


def positive_float(text: str) -> float:
    """argparse type: a number above zero (seconds)."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"a positive number, not {text!r}")
    return value
