"""Language server latency: didChange → publishDiagnostics of that version, start-up, memory. Prints a table.

    .venv/bin/python bench/lsp_latency.py [--edits 200] [--startups 5] [--no-pylsp]

Each server runs as a subprocess driven over stdio by pygls's LanguageClient. One edit at a time: send a
didChange, wait for the publication of that version, pause, send the next. Every edit rewrites one float
literal of examples/attention.argus to a double never used before, so the kernel's IR changes each time and the
verifier's cache cannot answer from an earlier edit.

  (a) syntax and types: `argus serve` with the verifier off; the first publication of the version.
  (b) with invariants: the verifier on; the publication that carries the verifier's verdicts on the kernel as
      written (the second of the version), and, in the same run, the one that adds its `tune` values' verdicts
      (the third: attention's BN has a tune list). The next edit is sent only after the third. Measured at the
      default debounce (150 ms, part of the figure by design) and at 0 ms.
  pylsp: python-lsp-server with only pyflakes, the same edits to a Python file of as many lines. Its lint is
      debounced by 500 ms in pylsp itself (LINT_DEBOUNCE_S), which dominates its figure.

  (c) read-only requests while the verifier works, on the 1,000-line file of (d): its first verification, then
      an edit every 200 ms, each in another kernel, and between them a hover and a completion every 25 ms at
      random places of the file; each request timed from sent to answered.
  (d) keystroke to squiggle on a 1,000-line file of 58 small kernels (the file bench/vscode_latency.js types
      into): one character that makes an unknown name (`mask=mask` to `mask=maskx` in the middle kernel), then
      the character deleted; didChange to the first publication of that version (with its AR101, or without).

Start-up: process start to the initialize answer, median of --startups runs, for `argus serve` and for the
server module started directly (the difference is what the CLI imports before it dispatches). Memory: VmRSS of
the server process after its run. Exits 2 when python-lsp-server is missing and --no-pylsp is not given.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.protocol import LanguageServerProtocol

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "lsp"))
from server_load import many_kernels_file  # noqa: E402  (the tests' long file, shared on purpose)

ATTENTION = ROOT / "examples" / "attention.argus"
LITERAL = "1.4426950408889634"  # log2(e) in the attention kernel; same length for every replacement

# A Python file with the attention example's line count and the same literal to edit.
PYTHON_FILE = '''"""Flash attention forward, the reference way: numpy, one head at a time."""

import math

import numpy as np


def softmax_rows(x):
    m = x.max(axis=1, keepdims=True)
    p = np.exp2((x - m) * 1.4426950408889634)
    return p / p.sum(axis=1, keepdims=True)


def attention(q, k, v, sm_scale=None):
    z, h, s, d = q.shape
    if sm_scale is None:
        sm_scale = 1.0 / math.sqrt(d)
    out = np.empty_like(q)
    for zi in range(z):
        for hi in range(h):
            scores = q[zi, hi] @ k[zi, hi].T * sm_scale
            out[zi, hi] = softmax_rows(scores) @ v[zi, hi]
    return out


def check(seed=0):
    rng = np.random.default_rng(seed)
    shape = (1, 2, 256, 128)
    q = rng.standard_normal(shape, dtype=np.float32)
    k = rng.standard_normal(shape, dtype=np.float32)
    v = rng.standard_normal(shape, dtype=np.float32)
    o = attention(q, k, v)
    assert o.shape == shape
    return float(np.abs(o).max())


if __name__ == "__main__":
    print(check())
    print(check(seed=1))
'''


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))]


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class LenientProtocol(LanguageServerProtocol):
    """Reads the initialize answer as plain JSON: pylsp's capabilities do not validate against lsprotocol 2025
    (and the bench needs none of them)."""

    def get_result_type(self, method: str):
        return None if method == types.INITIALIZE else super().get_result_type(method)


class Session:
    """One server process and the publications it sends, with their arrival times."""

    def __init__(self, command: list[str]):
        self.command = command
        self.client = LanguageClient("lsp-latency-bench", "1", protocol_cls=LenientProtocol)
        self.arrivals: dict[tuple[str, int | None], list[float]] = {}

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def publish(params: types.PublishDiagnosticsParams) -> None:
            self.arrivals.setdefault((params.uri, params.version), []).append(time.perf_counter())

        for method in (types.WINDOW_LOG_MESSAGE, types.WINDOW_SHOW_MESSAGE):
            self.client.feature(method)(lambda params: None)

    async def start(self, options: dict | None = None) -> float:
        started = time.perf_counter()
        await self.client.start_io(*self.command)
        await self.client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(), root_uri=ROOT.as_uri(), initialization_options=options
            )
        )
        answered = time.perf_counter() - started
        self.client.initialized(types.InitializedParams())
        return answered

    @property
    def pid(self) -> int:
        return self.client._server.pid

    async def publication(self, uri: str, version: int, nth: int, timeout: float = 30.0) -> float:
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            arrived = self.arrivals.get((uri, version), [])
            if len(arrived) >= nth:
                return arrived[nth - 1]
            await asyncio.sleep(0.001)
        raise TimeoutError(f"publication {nth} of version {version} never came")

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()


async def latencies(
    session: Session, path: Path, text: str, edits: int, nths: list[int], pause: float
) -> list[list[float]]:
    """Per edit, the time from didChange to each of the `nths` publications of its version (ms), per nth."""
    uri = path.as_uri()
    language = "python" if path.suffix == ".py" else "argus"
    session.client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id=language, version=1, text=text))
    )
    await session.publication(uri, 1, max(nths))
    lines = text.split("\n")
    line = next(i for i, t in enumerate(lines) if LITERAL in t)
    column = lines[line].index(LITERAL)
    span = types.Range(types.Position(line, column), types.Position(line, column + len(LITERAL)))
    found = []
    for i in range(edits):
        version = i + 2
        literal = f"{float(LITERAL) + (i + 1) * 1e-6:.16f}"  # a different double each time, same length
        change = types.TextDocumentContentChangePartial(range=span, text=literal)
        sent = time.perf_counter()
        session.client.text_document_did_change(
            types.DidChangeTextDocumentParams(types.VersionedTextDocumentIdentifier(version=version, uri=uri), [change])
        )
        found.append([(await session.publication(uri, version, nth)) - sent for nth in nths])
        await asyncio.sleep(pause)
    return [[1000 * times[k] for times in found] for k in range(len(nths))]


async def readonly_while_verifying(session: Session, edits: int) -> tuple[list[float], list[float]]:
    """Section (c): hover and completion latencies (ms) on the 1,000-line file while the verifier works: its
    first verification (58 kernels and their tune values, seconds), then an edit every 200 ms, each in another
    kernel (so that kernel is verified again), with a hover and a completion every 25 ms at random places."""
    text = many_kernels_file()
    uri = (Path(os.environ.get("TMPDIR", "/tmp")) / "lsp_latency_readonly.argus").as_uri()
    session.client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="argus", version=1, text=text))
    )
    await session.publication(uri, 1, 1)
    lines = text.split("\n")
    stores = [i for i, t in enumerate(lines) if t.startswith("    store(z[offs], ")]
    places = [(n, c) for n, t in enumerate(lines) for c in range(4, len(t), 7) if t.startswith("    ")]
    rng = random.Random(0)
    document = types.TextDocumentIdentifier(uri)
    hovers: list[float] = []
    completions: list[float] = []
    for i in range(edits):
        line = stores[i % len(stores)]
        at = types.Position(line, len("    store(z[offs], "))
        change = types.TextDocumentContentChangePartial(range=types.Range(at, at), text="1.0 * ")
        session.client.text_document_did_change(
            types.DidChangeTextDocumentParams(types.VersionedTextDocumentIdentifier(version=i + 2, uri=uri), [change])
        )
        until = time.perf_counter() + 0.2
        while time.perf_counter() < until:
            position = types.Position(*rng.choice(places))
            started = time.perf_counter()
            await session.client.text_document_hover_async(types.HoverParams(document, position))
            hovers.append(1000 * (time.perf_counter() - started))
            started = time.perf_counter()
            await session.client.text_document_completion_async(types.CompletionParams(document, position))
            completions.append(1000 * (time.perf_counter() - started))
            await asyncio.sleep(0.025)
    return hovers, completions


async def squiggle_latencies(session: Session, runs: int, pause: float) -> list[float]:
    """Section (d): didChange to the first publication of that version, typing and deleting one character."""
    text = many_kernels_file()
    uri = (Path(os.environ.get("TMPDIR", "/tmp")) / "lsp_latency_1000.argus").as_uri()
    session.client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="argus", version=1, text=text))
    )
    await session.publication(uri, 1, 1)
    lines = text.split("\n")
    middle = [i for i, t in enumerate(lines) if "b = load(y[offs], mask=mask" in t]
    line = middle[len(middle) // 2]
    column = lines[line].index("mask=mask") + len("mask=mask")
    found = []
    version = 1
    for i in range(2 * runs):
        version += 1
        at = types.Position(line, column)
        typed = i % 2 == 0
        change = types.TextDocumentContentChangePartial(
            range=types.Range(at, at if typed else types.Position(line, column + 1)), text="x" if typed else ""
        )
        sent = time.perf_counter()
        session.client.text_document_did_change(
            types.DidChangeTextDocumentParams(types.VersionedTextDocumentIdentifier(version=version, uri=uri), [change])
        )
        found.append(1000 * ((await session.publication(uri, version, 1)) - sent))
        await asyncio.sleep(pause)
    return found


def table_row(name: str, values: list[float], memory: float) -> dict:
    return {
        "name": name,
        "p50": statistics.median(values),
        "p95": percentile(values, 95),
        "max": max(values),
        "rss": memory,
        "n": len(values),
    }


async def measure(names: list[str], command, path, text, options, nths: list[int], edits, pause) -> list[dict]:
    """One server run; a row per publication counted (`nths`, named by `names`)."""
    session = Session(command)
    await session.start(options)
    try:
        per_nth = await latencies(session, path, text, edits, nths, pause)
        memory = rss_mib(session.pid)
    finally:
        await session.stop()
    return [table_row(name, values, memory) for name, values in zip(names, per_nth, strict=True)]


async def startup(command: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        session = Session(command)
        times.append(1000 * await session.start())
        await session.stop()
    return statistics.median(times)


async def main(args: argparse.Namespace) -> int:
    argus = [sys.executable, "-m", "argus", "serve"]
    peer = [sys.executable, "-m", "pylsp"]
    if not args.no_pylsp and importlib.util.find_spec("pylsp") is None:
        print("python-lsp-server is not installed: pip install python-lsp-server pyflakes", file=sys.stderr)
        return 2
    text = ATTENTION.read_text()
    lines = len(text.splitlines())
    python_path = Path(os.environ.get("TMPDIR", "/tmp")) / "lsp_latency_attention.py"
    python_path.write_text(PYTHON_FILE)
    assert len(PYTHON_FILE.splitlines()) == lines, (len(PYTHON_FILE.splitlines()), lines)
    pause = args.pause_ms / 1000
    load = os.getloadavg()  # the machine may be shared: say how busy it was
    off = {"argus": {"verify": {"enabled": False}}}
    rows: list[dict] = []
    if "a" in args.sections:
        rows += await measure(["(a) argus: syntax and types"], argus, ATTENTION, text, off, [1], args.edits, pause)
    for debounce, options in (("150 ms", None), ("0 ms", {"argus": {"debounceMs": 0}})):
        if "b" not in args.sections:
            break
        names = [
            f"(b) argus: + invariants of the kernel as written, debounce {debounce}",
            f"(b) argus: + its tune values' invariants too, debounce {debounce}",
        ]
        rows += await measure(names, argus, ATTENTION, text, options, [2, 3], args.edits, pause)
    if "c" in args.sections:
        session = Session(argus)
        await session.start()
        try:
            hovers, completions = await readonly_while_verifying(session, max(args.edits // 4, 10))
            memory = rss_mib(session.pid)
        finally:
            await session.stop()
        rows.append(table_row("(c) argus: hover while the verifier works, 1,000-line file", hovers, memory))
        rows.append(table_row("(c) argus: completion while the verifier works, 1,000-line file", completions, memory))
    if "d" in args.sections:
        session = Session(argus)
        await session.start()
        try:
            squiggles = await squiggle_latencies(session, max(args.edits // 10, 10), 0.3)
            memory = rss_mib(session.pid)
        finally:
            await session.stop()
        rows.append(table_row("(d) argus: keystroke to squiggle, 1,000-line file of 58 kernels", squiggles, memory))
    if not args.no_pylsp:
        settings = {"pylsp": {"plugins": {name: {"enabled": name == "pyflakes"} for name in PYLSP_PLUGINS}}}
        session = Session(peer)
        await session.start()
        session.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=settings))
        try:
            (values,) = await latencies(session, python_path, PYTHON_FILE, args.edits, [1], pause)
            memory = rss_mib(session.pid)
        finally:
            await session.stop()
        rows.append(table_row("pylsp + pyflakes (its own 500 ms lint debounce)", values, memory))
    print(
        f"# LSP latency, {time.strftime('%Y-%m-%d')}, {platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}; {lines}-line files, {args.edits} edits, {args.pause_ms} ms apart; "
        f"load average {load[0]:.1f} at the start, {os.getloadavg()[0]:.1f} at the end"
    )
    print("| server | samples | p50 ms | p95 ms | max ms | RSS after MiB |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for row in rows:
        figures = f"{row['p50']:.1f} | {row['p95']:.1f} | {row['max']:.1f} | {row['rss']:.0f}"
        print(f"| {row['name']} | {row['n']} | {figures} |")
    if not args.no_pylsp:
        pylsp_row = rows[-1]
        for row in [r for r in rows if r["name"][:3] in ("(a)", "(b)")][:3]:
            print(f"ratio p95 pylsp / {row['name'][:3]} ({row['name'][4:]}): {pylsp_row['p95'] / row['p95']:.1f}×")
    argus_start = await startup(argus, args.startups)
    alone = [sys.executable, "-c", "from argus.lsp.server import create_server; create_server().start_io()"]
    alone_start = await startup(alone, args.startups)
    print(
        f"start-up to initialize answer, median of {args.startups}: `argus serve` {argus_start:.0f} ms "
        f"(the server module alone, without the CLI's imports: {alone_start:.0f} ms)",
        end="",
    )
    if not args.no_pylsp:
        print(f", pylsp {await startup(peer, args.startups):.0f} ms")
    else:
        print()
    return 0


PYLSP_PLUGINS = (
    "pyflakes",
    "pycodestyle",
    "pydocstyle",
    "mccabe",
    "autopep8",
    "yapf",
    "pylint",
    "flake8",
    "rope_autoimport",
    "jedi_completion",
)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=200)
    parser.add_argument("--pause-ms", type=int, default=30, help="quiet time after each publication")
    parser.add_argument("--startups", type=int, default=5)
    parser.add_argument("--no-pylsp", action="store_true", help="skip the python-lsp-server peer")
    parser.add_argument("--sections", default="abcd", help="which of (a) to (d) to run, e.g. cd (default abcd)")
    raise SystemExit(asyncio.run(main(parser.parse_args())))
