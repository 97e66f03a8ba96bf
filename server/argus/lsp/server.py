"""The language server: the pygls server, its state, the document lifecycle and configuration, and the
registration of every feature module. Only this module knows them all: a feature module works with the
server's state (argus.lsp.state.ServerState), never with this module."""

from __future__ import annotations

import logging

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from argus import __version__
from argus.lsp import settings as config
from argus.lsp.diagnostics import DiagnosticsScheduler
from argus.lsp.guard import guarded
from argus.lsp.protocol import ArgusProtocol, strict_converter
from argus.lsp.state import ServerState

logger = logging.getLogger(__name__)

SETTINGS_COMMAND = "argus.settings"


class ArgusServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "argus",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=ArgusProtocol,
            converter_factory=strict_converter,
        )
        self.state = ServerState(self)
        self.lifecycle = self.state.lifecycle
        self.documents = self.state.documents
        self.diagnostics = DiagnosticsScheduler(self.state)

    def cancel_work_of_request(self, msg_id: object) -> None:
        """The protocol's `$/cancelRequest` hook (argus.lsp.protocol.Served)."""
        self.state.cancel_work_of_request(msg_id)


def register_lifecycle(server: ArgusServer) -> None:
    """The handlers that change state: the document lifecycle, configuration, shutdown."""
    shared = server.state  # what the features share (argus.lsp.state.ServerState)

    @server.feature(types.INITIALIZE)
    @guarded()
    async def initialize(params: types.InitializeParams) -> None:
        shared.initial_settings = config.apply(config.Settings(), params.initialization_options)
        shared.client_name = params.client_info.name if params.client_info is not None else ""
        shared.global_settings = shared.initial_settings

    @server.feature(types.INITIALIZED)
    @guarded()
    async def initialized(params: types.InitializedParams) -> None:
        if shared.client_supports("workspace", "did_change_configuration", "dynamic_registration"):
            registration = types.Registration(
                id="argus-configuration", method=types.WORKSPACE_DID_CHANGE_CONFIGURATION, register_options={}
            )
            try:
                await server.client_register_capability_async(types.RegistrationParams(registrations=[registration]))
            except Exception:  # a client that cannot register still answers workspace/configuration
                logger.warning("the client refused to register didChangeConfiguration", exc_info=True)
        await fetch_configuration(shared)
        server.diagnostics.warm_up()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    @guarded()
    async def did_change_configuration(params: types.DidChangeConfigurationParams) -> None:
        if shared.client_supports("workspace", "configuration"):
            await fetch_configuration(shared)
        else:  # push-style clients send the settings themselves
            shared.global_settings = config.apply(shared.initial_settings, params.settings)
        server.diagnostics.settings_changed()

    @server.command(SETTINGS_COMMAND)
    @guarded(empty=dict)
    async def effective_settings(*arguments: object) -> dict:
        """The settings in force for a document (or globally): what the user's configuration resolved to."""
        uri = arguments[0] if arguments and isinstance(arguments[0], str) else ""
        return shared.settings_for(uri).to_wire()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    @guarded()
    async def did_open(params: types.DidOpenTextDocumentParams) -> None:
        doc = params.text_document
        server.diagnostics.opened(server.documents.open(doc.uri, doc.version, doc.text))

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    @guarded()
    async def did_change(params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        state = server.documents.get(uri)
        if state is None:
            logger.warning("didChange for a document that is not open: %s", uri)
            return
        # our own copy, not pygls' (argus.lsp.text_sync says why)
        state.edit(params.text_document.version, params.content_changes, server.workspace.position_codec)
        server.diagnostics.changed(state)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    @guarded()
    async def did_save(params: types.DidSaveTextDocumentParams) -> None:
        state = server.documents.get(params.text_document.uri)
        if state is None:
            return
        server.diagnostics.saved(state)
        if shared.settings_for(state.uri).gate_on_save:
            from argus.lsp import gate

            await gate.start_on_save(shared, state)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    @guarded()
    async def did_close(params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        if server.documents.close(uri) is not None:
            server.diagnostics.closed(uri)

    @server.feature(types.SHUTDOWN)
    @guarded()
    async def shutdown(params: None) -> None:
        server.lifecycle.shutdown()


async def fetch_configuration(server: ServerState) -> None:
    """`workspace/configuration` for the section `argus`: once globally, once per workspace folder."""
    if not server.client_supports("workspace", "configuration"):
        return
    folders = [f.uri for f in server.client.workspace.folders.values()]
    items = [types.ConfigurationItem(section=config.SECTION)]
    items += [types.ConfigurationItem(scope_uri=uri, section=config.SECTION) for uri in folders]
    try:
        values = await server.client.workspace_configuration_async(types.ConfigurationParams(items=items))
    except Exception:
        logger.exception("workspace/configuration failed; keeping the current settings")
        return
    if not isinstance(values, list | tuple) or len(values) != len(items):
        return
    server.global_settings = config.apply(server.initial_settings, values[0])
    server.folder_settings = {
        uri: config.apply(server.global_settings, value) for uri, value in zip(folders, values[1:], strict=True)
    }


def create_server() -> ArgusServer:
    from argus.lsp import (
        code_actions,
        completion,
        document_text,
        gate,
        hover,
        inlay_hints,
        navigation,
        pull_diagnostics,
        refine,
        semantic_tokens,
        skill_commands,
    )

    server = ArgusServer()
    register_lifecycle(server)
    features = (
        hover,
        completion,
        navigation,
        semantic_tokens,
        code_actions,
        gate,
        skill_commands,
        refine,
        document_text,
        inlay_hints,
        pull_diagnostics,
    )
    for feature in features:
        feature.register(server.state)
    return server
