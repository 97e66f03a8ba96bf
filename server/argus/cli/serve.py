"""`argus serve [--tcp HOST:PORT]`: the language server, over stdio by default."""

from __future__ import annotations

import argparse
import logging
import sys


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="run the language server (stdio, or --tcp HOST:PORT)",
        description="Run the Argus language server. It speaks LSP over stdin/stdout unless --tcp is given; "
        "logs go to stderr (or --log-file), never to stdout.",
    )
    parser.add_argument("--tcp", metavar="HOST:PORT", help="listen on a TCP socket instead of stdio")
    parser.add_argument("--log-file", metavar="PATH", help="write the log here instead of stderr")
    parser.add_argument(
        "--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"], help="default: WARNING"
    )
    parser.set_defaults(run=run)


def parse_address(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"--tcp wants HOST:PORT, got {text!r}")
    return host or "127.0.0.1", int(port)


def run(args: argparse.Namespace) -> int:
    try:
        address = parse_address(args.tcp) if args.tcp else None
    except ValueError as problem:
        print(f"argus serve: {problem}", file=sys.stderr)
        return 2
    handler = logging.FileHandler(args.log_file) if args.log_file else logging.StreamHandler(sys.stderr)
    logging.basicConfig(
        level=args.log_level, handlers=[handler], format="%(asctime)s %(name)s %(levelname)s %(message)s"
    )
    # pygls and lsprotocol load only for this command
    from argus.lsp import lifecycle
    from argus.lsp.server import create_server

    server = create_server()
    if address is None:
        return lifecycle.run_stdio(server)  # it ends the process itself (argus.lsp.lifecycle says how)
    return lifecycle.run_tcp(server, *address)
