"""End-to-end fixtures: `argus serve` in a subprocess, driven over stdio by pytest-lsp's client with the
capabilities of VS Code and of Neovim 0.7 (the Debian editor the smoke test uses). The client and its
initialize live in lsp_support, which tests import by a name of their own (`conftest` is every test folder's)."""

from __future__ import annotations

import pytest
import pytest_lsp
from lsp_support import CLIENTS, CONFIG, initialize
from pytest_lsp import LanguageClient


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
