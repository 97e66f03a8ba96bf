"""Settings: initializationOptions first, then workspace/configuration per folder, refetched on
didChangeConfiguration."""

from __future__ import annotations

import asyncio

from lsp_support import ROOT
from lsprotocol import types

from argus.lsp.settings import Settings, apply


async def effective(client, uri: str = "") -> dict:
    params = types.ExecuteCommandParams(command="argus.settings", arguments=[uri] if uri else [])
    return await client.workspace_execute_command_async(params)


async def test_initialization_options_are_the_starting_point(client):
    settings = await effective(client)
    assert settings["gate"]["device"] == "cpu"  # from the fixture's initializationOptions
    assert settings["debounceMs"] == 150  # the default


async def test_workspace_configuration_is_read_per_folder_and_refetched_on_change(client):
    folder_file = (ROOT / "examples" / "matmul.argus").as_uri()
    client.set_configuration({"debounceMs": 40, "gate": {"onSave": True}}, section="argus")
    client.set_configuration({"argus": {"verify": {"timeoutMs": 250}}}, scope_uri=ROOT.as_uri())
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"argus": {"debounceMs": 60}})
    )
    for _ in range(100):
        settings = await effective(client, folder_file)
        if settings["verify"]["timeoutMs"] != 1000 or settings["debounceMs"] != 150:
            break
        await asyncio.sleep(0.02)
    if client.kind == "vscode":  # pull model: the global section, then the folder's, over initializationOptions
        assert settings["debounceMs"] == 40 and settings["gate"]["onSave"] is True
        assert settings["verify"]["timeoutMs"] == 250 and settings["gate"]["device"] == "cpu"
        assert (await effective(client, "file:///elsewhere/k.argus"))["verify"]["timeoutMs"] == 1000
    else:  # Neovim 0.7 has no workspace/configuration: the pushed settings apply
        assert settings["debounceMs"] == 60 and settings["gate"]["device"] == "cpu"


def test_malformed_values_keep_their_defaults():
    settings = apply(Settings(), {"argus": {"debounceMs": "fast", "gate": {"device": "tpu", "onSave": True}}})
    assert settings == Settings(gate_on_save=True)
