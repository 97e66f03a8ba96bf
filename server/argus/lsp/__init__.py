"""The Argus language server (pygls): live diagnostics, hover, completion, code actions and gate commands.

`argus.lsp.server.create_server()` builds the server; `argus serve` runs it. Each feature lives in its own
module and registers itself there; heavy work (checking, verifying, the gate) runs off the event loop.
"""
