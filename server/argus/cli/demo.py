"""`argus demo`: what a user sees in the editor, printed. It starts `argus serve`, talks to it over stdio with a
real LSP client (pygls), and walks through one kernel with a planted invariant bug: the diagnostic and its
counterexample, the code actions at the cursor (disabled ones with their reasons), the document after the quick
fix, and a gate run on the CPU. Nothing here calls the server's code directly.
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import logging
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from argus.cli import read_source
from argus.dsl.lines import split_lines

DEMO_FILE = Path("examples") / "buggy" / "matmul_next_k.argus"
WAIT_S = 60.0


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="walk through the language server on a kernel with a planted bug",
        description="Start `argus serve`, open a kernel with a planted invariant bug the way an editor does, and "
        "print the diagnostic, the code actions, the fixed document and a CPU gate run. Exit status 0 when "
        "the bug is found, the fix clears it and the fixed kernel passes the gate.",
    )
    parser.add_argument("path", nargs="?", help=f"the kernel to open (default: {DEMO_FILE})")
    parser.add_argument("--no-gate", action="store_true", help="skip the gate run (it takes about 10 s on a CPU)")
    parser.set_defaults(run=run)


def find_demo_file() -> Path | None:
    import argus

    for base in (Path.cwd(), Path(argus.__file__).resolve().parents[2]):
        if (base / DEMO_FILE).is_file():
            return base / DEMO_FILE
    return None


def run(args: argparse.Namespace) -> int:
    path = Path(args.path) if args.path else find_demo_file()
    if path is None or not path.is_file():
        print(f"argus demo: cannot find {args.path or DEMO_FILE} (run it from the repository root)", file=sys.stderr)
        return 2
    text = read_source("demo", path)
    if text is None:
        return 2
    if not re.search(r"^kernel\b", text, re.MULTILINE):  # no server to start for a file with nothing to show
        print(f"argus demo: {path} has no kernel to walk through", file=sys.stderr)
        return 2
    try:
        return asyncio.run(Demo(path.resolve(), gate=not args.no_gate).main())
    except DemoFailure as failure:
        print(f"\nargus demo: {failure}", file=sys.stderr)
        return 1


class DemoFailure(Exception):
    pass


def section(title: str) -> None:
    print(f"\n── {title} " + "─" * max(0, 100 - len(title)))


def where(path: Path, line: int, character: int) -> str:
    try:
        shown = path.relative_to(Path.cwd())
    except ValueError:
        shown = path
    return f"{shown}:{line + 1}:{character + 1}"


class Demo:
    def __init__(self, path: Path, gate: bool):
        self.path = path
        self.uri = path.as_uri()
        self.text = path.read_text(encoding="utf-8")
        self.version = 1
        self.gate = gate
        self.published: list[Any] = []
        self.started = time.perf_counter()

    def elapsed(self) -> str:
        return f"{time.perf_counter() - self.started:5.1f} s"

    async def main(self) -> int:
        from lsprotocol import types
        from pygls.lsp.client import LanguageClient

        from argus.lsp.client_converter import client_converter

        self.types = types
        # pygls logs through Python's last-resort handler when nobody configured logging: on Ctrl-C the answer to
        # a request the demo stopped waiting for became a traceback on the user's terminal. The demo says itself
        # what went wrong (DemoFailure, with the server's log).
        logging.getLogger("pygls").addHandler(logging.NullHandler())
        logging.getLogger("pygls").propagate = False
        client = LanguageClient("argus-demo", "1", converter_factory=client_converter)
        self.client = client
        self.register_handlers(client)
        with tempfile.NamedTemporaryFile(prefix="argus-serve-", suffix=".log", delete=False) as log:
            self.log_path = Path(log.name)
        await client.start_io(sys.executable, "-m", "argus", "serve", "--log-file", str(self.log_path))
        failed = False
        try:
            return await self.walk_through()
        except Exception as error:
            failed = True
            tail = self.log_path.read_text(errors="replace")[-2000:] if self.log_path.exists() else ""
            log = f"\nserver log ({self.log_path}):\n{tail}" if tail.strip() else ""  # an empty log is removed
            raise DemoFailure(f"{error}{log}") from error
        finally:
            await self.stop()
            self.drop_log(keep=failed)

    def drop_log(self, keep: bool) -> None:
        """The server's log matters only when the walk-through failed (the failure names it), and only if the
        server wrote to it; a demo that ran through, or that Ctrl-C stopped, leaves nothing behind."""
        try:
            if not keep or self.log_path.stat().st_size == 0:
                self.log_path.unlink()
        except OSError:
            pass  # already gone

    def register_handlers(self, client) -> None:
        types = self.types

        @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def publish(params: types.PublishDiagnosticsParams) -> None:
            self.published.append(params)

        @client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def create_progress(params: types.WorkDoneProgressCreateParams) -> None:
            return None

        @client.feature(types.PROGRESS)
        def progress(params: types.ProgressParams) -> None:
            value = params.value if isinstance(params.value, dict) else {}
            text = value.get("title") or value.get("message") or ""
            if text:
                print(f"  [{self.elapsed()}] progress ({value.get('kind')}): {text}")

        @client.feature(types.WINDOW_SHOW_MESSAGE)
        def show_message(params: types.ShowMessageParams) -> None:
            print(f"  server says: {params.message}")

        @client.feature(types.WINDOW_LOG_MESSAGE)
        def log_message(params: types.LogMessageParams) -> None:
            return None

        @client.feature("argus/gateResult")
        def gate_result(params) -> None:
            return None  # the gate's answer is printed from the runGate response; the editor's status bar uses this

    async def stop(self) -> None:
        client = self.client
        try:
            await asyncio.wait_for(client.shutdown_async(None), timeout=10)
            client.exit(None)
        except Exception:
            pass  # the server is stopped below in any case
        try:
            await asyncio.wait_for(client.stop(), timeout=10)
        except Exception:
            if client._server is not None and client._server.returncode is None:
                client._server.kill()

    # ---- the walk-through ------------------------------------------------------------------------------
    async def walk_through(self) -> int:
        types = self.types
        section("1. The editor starts the server and opens a kernel")
        capabilities = types.ClientCapabilities(
            text_document=types.TextDocumentClientCapabilities(
                code_action=types.CodeActionClientCapabilities(disabled_support=True),
                publish_diagnostics=types.PublishDiagnosticsClientCapabilities(related_information=True),
            ),
            workspace=types.WorkspaceClientCapabilities(
                workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True)
            ),
            window=types.WindowClientCapabilities(work_done_progress=True),
        )
        started = time.perf_counter()
        result = await self.client.initialize_async(
            types.InitializeParams(
                capabilities=capabilities,
                root_uri=self.path.parent.as_uri(),
                initialization_options={"argus": {"gate": {"device": "cpu"}}},
            )
        )
        self.client.initialized(types.InitializedParams())
        info = result.server_info
        print(f"server: {info.name} {info.version}, initialized in {(time.perf_counter() - started) * 1000:.0f} ms")
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=self.uri, language_id="argus", version=1, text=self.text)
            )
        )
        print(f"opened {where(self.path, 0, 0)[:-4]} ({len(self.text.splitlines())} lines)")

        section("2. Diagnostics (syntax and types at once; invariants after the verifier)")
        diagnostics = await self.verified_diagnostics(1)
        if not diagnostics:
            raise DemoFailure("the server reported no diagnostic for the planted bug")
        for diagnostic in diagnostics:
            self.print_diagnostic(diagnostic)
        target = next((d for d in diagnostics if str(d.code).startswith("AR3")), diagnostics[0])

        section("3. Code actions at the cursor (the loop, where the light bulb shows)")
        selection = self.loop_selection(target)
        print(f"selection: lines {selection.start.line + 1}-{selection.end.line + 1}")
        actions = await self.client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=self.uri),
                range=selection,
                context=types.CodeActionContext(diagnostics=[target], trigger_kind=types.CodeActionTriggerKind.Invoked),
            )
        )
        for action in actions:
            kind = "quick fix" if action.kind == types.CodeActionKind.QuickFix else "skill"
            if action.disabled is not None:
                print(f"  ✗ {kind:9} {action.title}\n      disabled: {action.disabled.reason}")
            else:
                print(f"  ✓ {kind:9} {action.title}")
        fix = next((a for a in actions if a.kind == types.CodeActionKind.QuickFix and a.disabled is None), None)
        if fix is None:
            raise DemoFailure("no quick fix was offered for the diagnostic")

        section(f"4. The document after applying “{fix.title}”")
        before = self.text
        self.apply(fix.edit)
        for line in difflib.unified_diff(
            before.splitlines(), self.text.splitlines(), "before", "after", n=1, lineterm=""
        ):
            print(f"  {line}")
        after = await self.verified_diagnostics(self.version)
        if any(d.code == target.code for d in after):
            raise DemoFailure(f"{target.code} is still reported after the fix")
        remaining = ", ".join(f"{d.code} line {d.range.start.line + 1}" for d in after) or "none"
        print(f"diagnostics of version {self.version}: {remaining}")

        if not self.gate:
            return 0
        section("5. The gate on the CPU: compile for sm_90, then correct against the PyTorch reference")
        summary = await self.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="argus.runGate", arguments=[self.uri])
        )
        if summary.get("error"):
            raise DemoFailure(f"the gate did not run: {summary['error']}")
        passed = True
        for result in summary["results"]:
            passed &= self.print_gate_result(result)
        lenses = await self.client.text_document_code_lens_async(
            types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=self.uri))
        )
        for lens in lenses:
            print(f"code lens above line {lens.range.start.line + 1}: {lens.command.title}")
        print(f"\ndone in {self.elapsed()}")
        return 0 if passed else 1

    async def verified_diagnostics(self, version: int) -> list[Any]:
        """The diagnostics once both stages have published for this version (the second publication carries
        the verifier's), or the first one if the verifier is off."""
        deadline = time.perf_counter() + WAIT_S
        while time.perf_counter() < deadline:
            mine = [p for p in self.published if p.uri == self.uri and p.version == version]
            if len(mine) >= 2:
                return list(mine[-1].diagnostics)
            await asyncio.sleep(0.02)
        mine = [p for p in self.published if p.uri == self.uri and p.version == version]
        if mine:
            return list(mine[-1].diagnostics)
        raise DemoFailure(f"no diagnostics for version {version} within {WAIT_S:.0f} s")

    def print_diagnostic(self, d) -> None:
        severity = {1: "error", 2: "warning", 3: "information", 4: "hint"}.get(int(d.severity or 1), "error")
        start = d.range.start
        head, *parts = d.message.split("\n")  # the counterexample reads one part a line under the first
        print(f"{where(self.path, start.line, start.character)}: {severity}[{d.code}] ({d.source}): {head}")
        print(f"    {split_lines(self.text)[start.line].strip()}")
        for part in parts:
            print(f"  {part.strip()}")
        record = (d.data or {}).get("argus", {}).get("counterexample") if isinstance(d.data, dict) else None
        if record:
            fields = ", ".join(key for key in record if record.get(key))
            print(f"  (and as a record for agents, in the diagnostic's data.argus.counterexample: {fields})")
        for related in d.related_information or []:
            r = related.location.range.start
            print(f"  related: {where(self.path, r.line, r.character)}: {related.message}")

    def loop_selection(self, target):
        """From the `for` line above the diagnostic down to the diagnostic: what a user selects."""
        types = self.types
        lines = self.text.splitlines()
        line = target.range.start.line
        start = next((i for i in range(line, -1, -1) if lines[i].lstrip().startswith("for ")), line)
        return types.Range(
            start=types.Position(line=start, character=0),
            end=types.Position(line=line, character=len(lines[line])),
        )

    def apply(self, edit) -> None:
        """Apply a WorkspaceEdit to our copy and send it to the server as an incremental change."""
        types = self.types
        (change,) = edit.document_changes
        if change.text_document.version != self.version:
            raise DemoFailure(f"the edit is for version {change.text_document.version}, we are at {self.version}")
        self.version += 1
        content = []
        for text_edit in sorted(
            change.edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True
        ):
            self.text = replace(self.text, text_edit.range, text_edit.new_text)
            content.append(types.TextDocumentContentChangePartial(range=text_edit.range, text=text_edit.new_text))
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version),
                content_changes=content,
            )
        )

    def print_gate_result(self, result: dict) -> bool:
        print(f"kernel {result['kernel']} on {result['device']}, Triton {result['versions'].get('triton', '?')}:")
        ok = True
        for stage in ("compile", "correct", "profile"):
            outcome = result[stage]
            mark = {"passed": "✓", "failed": "✗", "error": "✗", "skipped": "–"}[outcome["status"]]
            facts = outcome.get("facts") or {}
            note = ""
            if stage == "compile" and facts:
                note = (
                    f"{facts['target']}, {(facts.get('shared_memory_bytes') or 0) / 1024:.0f} KiB shared memory, "
                    f"{facts.get('registers')} registers, {facts.get('spill_stores_bytes') or 0} B spilled"
                )
            elif stage == "correct" and facts:
                note = (
                    f"{facts['trials']} trials at {format_record(facts['sizes'][0])}, "
                    f"max abs err {facts['max_abs_error']:.2e}, "
                    f"max rel err {facts['max_rel_error']:.2e}"
                    + (" (Triton interpreter)" if facts.get("interpreter") else "")
                )
                if facts.get("first_mismatch"):
                    note += f", first mismatch {facts['first_mismatch']}"
            else:
                note = outcome.get("message", "")
            print(f"  {mark} {stage:8} {outcome['status']:8} {outcome['seconds']:5.1f} s  {note}")
            if stage in ("compile", "correct"):
                ok &= outcome["status"] == "passed"
        for error in result.get("errors", []):
            print(f"  {error['code']}: {error['message']}")
        return ok


def format_record(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items())
    return str(value)


def replace(text: str, r, new_text: str) -> str:
    lines = text.split("\n")
    start = sum(len(line) + 1 for line in lines[: r.start.line]) + r.start.character
    end = sum(len(line) + 1 for line in lines[: r.end.line]) + r.end.character
    return text[:start] + new_text + text[end:]
