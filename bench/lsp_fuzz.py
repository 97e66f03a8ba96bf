"""Fuzzed edits against `argus serve`: divergences, ranges outside the document, crashes and memory. Prints a table.

    .venv/bin/python bench/lsp_fuzz.py [--edits 100000] [--check-every 100] [--seed 0]

One server, one document per example in turn (a new one every --edits / 6 edits), driven over stdio by pygls's
client with random incremental edits from tests/lsp/edit_model.py: typing, deletions, pastes of code, every line
break LSP counts and the ones it does not (form feed, U+2028, NEL, ...), characters outside the BMP, several
changes in one didChange, and now and then a whole-document replacement. Every --check-every edits the server's
copy (`argus.documentText`) is compared with the client's; every publication's ranges are checked against the
text of the version it names. RSS of the server is sampled every tenth of the run. The CI test
(tests/lsp/test_edit_stress.py) runs a slice of this; this is the long run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import sys
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "lsp"))
from edit_model import ClientDocument  # noqa: E402  (the tests' client model, shared on purpose)

MAX_CHARS = 12_000  # past this the fuzzer deletes until the document is back under it


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Fuzz:
    def __init__(self) -> None:
        self.client = LanguageClient("lsp-fuzz-bench", "1")
        self.texts: dict[tuple[str, int], str] = {}
        self.outside = 0
        self.publications = 0

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def publish(params: types.PublishDiagnosticsParams) -> None:
            self.publications += 1
            text = self.texts.get((params.uri, params.version))
            if text is None:
                return
            doc = ClientDocument(text)
            for d in params.diagnostics:
                for r in [d.range, *(x.location.range for x in d.related_information or [])]:
                    self.outside += not doc.inside(r)

        for method in (types.WINDOW_LOG_MESSAGE, types.WINDOW_SHOW_MESSAGE):
            self.client.feature(method)(lambda params: None)

    async def start(self) -> None:
        await self.client.start_io(sys.executable, "-m", "argus", "serve")
        await self.client.initialize_async(types.InitializeParams(capabilities=types.ClientCapabilities()))
        self.client.initialized(types.InitializedParams())

    @property
    def pid(self) -> int:
        return self.client._server.pid

    async def server_text(self, uri: str) -> dict:
        params = types.ExecuteCommandParams(command="argus.documentText", arguments=[uri])
        return await asyncio.wait_for(self.client.workspace_execute_command_async(params), 60)


def change_for(doc: ClientDocument, rng: random.Random) -> types.TextDocumentContentChangeEvent:
    if len(doc.text) > MAX_CHARS:  # keep the document the size of a real kernel file
        lines = doc.text_lines_with_breaks()
        start = rng.randrange(max(len(lines) - 40, 1))
        return types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(start, 0), types.Position(min(start + 40, len(lines) - 1), 0)), text=""
        )
    return doc.random_change(rng)


async def run(args: argparse.Namespace) -> int:
    rng = random.Random(args.seed)
    examples = sorted((ROOT / "examples").glob("*.argus"))
    fuzz = Fuzz()
    await fuzz.start()
    rss = [(0, rss_mib(fuzz.pid))]
    divergences = checks = 0
    started = time.perf_counter()
    per_document = max(args.edits // len(examples), 1)
    sent = 0
    for n, path in enumerate(examples):
        uri = (Path(os.environ.get("TMPDIR", "/tmp")) / f"fuzz{n}.argus").as_uri()
        doc = ClientDocument(path.read_text())
        fuzz.texts[(uri, 1)] = doc.text
        fuzz.client.text_document_did_open(
            types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "argus", 1, doc.text))
        )
        for i in range(per_document if n < len(examples) - 1 else args.edits - sent):
            changes = []
            for _ in range(rng.choice([1, 1, 1, 2, 3])):
                change = change_for(doc, rng)
                doc.apply(change)
                changes.append(change)
            doc.version += 1
            fuzz.texts[(uri, doc.version)] = doc.text
            fuzz.client.text_document_did_change(
                types.DidChangeTextDocumentParams(types.VersionedTextDocumentIdentifier(doc.version, uri), changes)
            )
            sent += 1
            if i % args.check_every == args.check_every - 1:
                copy = await fuzz.server_text(uri)
                checks += 1
                divergences += copy.get("text") != doc.text or copy.get("version") != doc.version
                for key in [k for k in fuzz.texts if k[0] == uri and k[1] < doc.version - 200]:
                    del fuzz.texts[key]
            if sent % max(args.edits // 10, 1) == 0:
                rss.append((sent, rss_mib(fuzz.pid)))
        copy = await fuzz.server_text(uri)
        checks += 1
        divergences += copy.get("text") != doc.text
        fuzz.client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))
    await asyncio.sleep(2.0)
    alive = fuzz.client._server.returncode is None
    rss.append((sent, rss_mib(fuzz.pid)))
    elapsed = time.perf_counter() - started
    await fuzz.client.shutdown_async(None)
    fuzz.client.exit(None)
    await fuzz.client.stop()
    print(
        f"# LSP fuzz, {time.strftime('%Y-%m-%d')}, {platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}; seed {args.seed}; {elapsed:.0f} s"
    )
    print("| edits | copies compared | divergences | publications | ranges outside | server alive at the end |")
    print("| ---: | ---: | ---: | ---: | ---: | --- |")
    print(f"| {sent} | {checks} | {divergences} | {fuzz.publications} | {fuzz.outside} | {'yes' if alive else 'no'} |")
    print()
    print("| after edits | " + " | ".join(str(n) for n, _ in rss) + " |")
    print("| ---: | " + " | ".join("---:" for _ in rss) + " |")
    print("| server RSS, MiB | " + " | ".join(f"{m:.0f}" for _, m in rss) + " |")
    return 0 if divergences == 0 and fuzz.outside == 0 and alive else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=100_000)
    parser.add_argument("--check-every", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    raise SystemExit(asyncio.run(run(parser.parse_args())))
