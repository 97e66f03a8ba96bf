"""End-to-end fixtures: `argus serve` in a subprocess, driven over stdio by pytest-lsp's client with the
capabilities of VS Code and of Neovim 0.7 (the Debian editor the smoke test uses)."""

from __future__ import annotations

import sys

import pytest
import pytest_lsp
from lsp_support import ROOT
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from argus.lsp.client_converter import client_converter

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


async def initialize(lsp_client: LanguageClient, kind: str) -> None:
    lsp_client.kind = kind
    params = types.InitializeParams(
        capabilities=client_capabilities(CLIENTS[kind]),
        client_info=types.ClientInfo(*CLIENT_INFO[kind]),
        root_uri=ROOT.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=ROOT.as_uri(), name="argus")],
        initialization_options=INITIALIZATION_OPTIONS,
    )
    await lsp_client.initialize_session(params)


# The gate runs on the CPU here (the Triton interpreter); everything else keeps its default.
INITIALIZATION_OPTIONS = {"argus": {"gate": {"device": "cpu", "timeoutS": 300}}}


@pytest_lsp.fixture(config=CONFIG, params=list(CLIENTS))
async def client(request, lsp_client: LanguageClient):
    """A server initialized by each client in turn; `client.kind` says which."""
    await initialize(lsp_client, request.param)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=CONFIG)
async def vscode(lsp_client: LanguageClient):
    """A server initialized by VS Code only, for the slow tests where one client is enough."""
    await initialize(lsp_client, "vscode")
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def uri(tmp_path) -> str:
    return (tmp_path / "kernel.argus").as_uri()
