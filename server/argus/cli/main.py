"""Entry point of the `argus` command.

Each subcommand lives in its own module of `argus.cli` with `add_parser(subparsers)`; the module is imported
only when it exists, so a layer that is not built yet (or whose optional dependencies are missing) never
breaks the commands that are.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from argus import __version__

# The order `argus --help` lists them in.
SUBCOMMANDS = ("check", "build", "gate", "skills", "lineage", "refine", "serve", "demo")


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
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "run"):
        parser.print_help(sys.stderr)
        return 2
    return args.run(args)
