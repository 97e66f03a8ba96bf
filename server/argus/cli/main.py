"""Entry point of the `argus` command.

Each subcommand lives in its own module of `argus.cli` with `add_parser(subparsers)`; the module is imported
only when it exists, so a layer that is not built yet (or whose optional dependencies are missing) never
breaks the commands that are.

How a command ends is decided here, once for all of them: Ctrl-C prints one line and exits 130, a reader that
closed our stdout (`| head`) ends the command quietly with 141, and an error no command handled prints one line
that says it is a bug (ARGUS_TRACEBACK=1 shows the traceback instead): never a traceback on a user's terminal.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys
import threading
from collections.abc import Iterator

from argus import __version__
from argus.cli import INTERRUPTED, stop_if_interrupted

# The order `argus --help` lists them in.
SUBCOMMANDS = ("check", "build", "gate", "skills", "lineage", "refine", "serve", "demo")
# Commands that run z3 in this process: z3 must leave Ctrl-C to Python (see interruptible_solver).
VERIFYING = ("check", "skills", "lineage", "refine")
# Commands that run an asyncio loop: asyncio.run turns Ctrl-C into cancelling its task, and does so only while
# SIGINT has Python's own handler, so ctrl_c_remembered leaves theirs alone.
ASYNCIO = ("serve", "demo")
EXIT_INTERRUPTED = 128 + 2  # SIGINT, as a shell reports a command it interrupted
EXIT_BROKEN_PIPE = 128 + 13  # SIGPIPE, as a shell reports `yes | head`
EXIT_TERMINATED = 128 + 15  # SIGTERM


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="argus", description="Argus: GPU kernels with proved data-flow invariants")
    parser.add_argument("--version", action="version", version=f"argus {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMANDS:
        try:
            module = importlib.import_module(f"argus.cli.{name}")
        except ModuleNotFoundError as missing:
            if missing.name != f"argus.cli.{name}":
                raise
            continue
        module.add_parser(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    command = "argus"
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if not hasattr(args, "run"):
            parser.print_help(sys.stderr)
            return 2
        command = f"argus {args.command}"
        if args.command in VERIFYING:
            interruptible_solver()
        with ctrl_c_remembered(args.command not in ASYNCIO):
            status = args.run(args)
            stop_if_interrupted()  # a Ctrl-C lost on the way: the command ran on, but the user asked it to stop
        sys.stdout.flush()  # a closed pipe shows here, where it is handled, not in the interpreter's exit
        return status
    except KeyboardInterrupt:
        say(f"{command}: interrupted")
        forget_unhandled_interrupt()
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        silence_stdout()
        return EXIT_BROKEN_PIPE
    except Exception as error:
        if os.environ.get("ARGUS_TRACEBACK"):
            raise
        where = "run it again with ARGUS_TRACEBACK=1 to see where"
        say(f"{command}: internal error, a bug in argus: {type(error).__name__}: {error} ({where})")
        return 1


@contextlib.contextmanager
def ctrl_c_remembered(enabled: bool = True) -> Iterator[None]:
    """While a command runs, Ctrl-C raises KeyboardInterrupt as usual and is also remembered (INTERRUPTED),
    so that commands can raise it again where code in between lost it (stop_if_interrupted); one lost in a
    __del__ is not printed as 'Exception ignored'. SIGTERM ends the command the same way, with 143 and without
    a line. A signal ignored by whoever started us stays ignored.

    Without this, 7 of 40 Ctrl-C's at random moments of `argus check` were lost: ctypes wraps a KeyboardInterrupt
    raised while it converts z3's arguments in an ArgumentError, which the verifier reports as one obligation's
    internal error, and the check ran to its end with status 0."""

    seen = threading.Event()  # this command's own, for the hook it may leave behind

    def on_sigint(signum, frame) -> None:
        INTERRUPTED.set()
        seen.set()
        raise KeyboardInterrupt

    def on_sigterm(signum, frame) -> None:
        # SystemExit unwinds like Ctrl-C does (the gate's runner is killed on the way, temporary folders go),
        # where the default action would end us at once and leave the runner, in its own session, running.
        seen.set()
        raise SystemExit(EXIT_TERMINATED)

    def unraisable(info) -> None:
        # After a Ctrl-C, what a __del__ cannot raise is the interrupt, ctypes' ArgumentError around it, or the
        # AttributeError of a z3 object whose __init__ it cut short.
        if not (seen.is_set() or issubclass(info.exc_type, KeyboardInterrupt)):
            hook(info)

    handler, term, hook = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM), sys.unraisablehook
    ours = enabled and threading.current_thread() is threading.main_thread()
    if ours:
        if handler is not signal.SIG_IGN:
            signal.signal(signal.SIGINT, on_sigint)
        if term is not signal.SIG_IGN:
            signal.signal(signal.SIGTERM, on_sigterm)
    sys.unraisablehook = unraisable
    try:
        yield
    finally:
        if ours:
            signal.signal(signal.SIGINT, handler)
            signal.signal(signal.SIGTERM, term)
        if not seen.is_set():  # else kept to the interpreter's exit, when the half-built objects are collected
            sys.unraisablehook = hook
        INTERRUPTED.clear()


def interruptible_solver() -> None:
    """z3 catches SIGINT while it solves and turns it into a cancelled (unknown) check, so Ctrl-C would be
    swallowed and the interrupted proof reported as a time-out; with ctrl_c off, Python raises
    KeyboardInterrupt as soon as the check in progress returns (within its time limit)."""
    import z3

    z3.set_param("ctrl_c", False)


def forget_unhandled_interrupt() -> None:
    """CPython 3.11 marks a KeyboardInterrupt that leaves an exec() of a string (dataclasses and namedtuple
    build their methods that way, so it happens when Ctrl-C lands in an import) as unhandled, and then ends the
    process with SIGINT instead of the status main returns, though main handled it. The next exec of a string
    clears the mark."""
    exec("")


def silence_stdout() -> None:
    """The reader is gone: point stdout at /dev/null so the interpreter's final flush has nowhere to fail (the
    Python documentation's recipe for SIGPIPE)."""
    with contextlib.suppress(OSError, ValueError):  # no stdout descriptor (an embedding host): nothing to flush
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def say(line: str) -> None:
    with contextlib.suppress(OSError, ValueError):  # stderr gone too: the exit status is all that is left
        print(line, file=sys.stderr, flush=True)
