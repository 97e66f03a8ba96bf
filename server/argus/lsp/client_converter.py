"""lsprotocol's converter for a pygls *client* (`argus demo`, the end-to-end tests), with one hook corrected.

lsprotocol reads a `textDocument/codeAction` answer item as a bare Command whenever it has a `command` key, so
a CodeAction that carries a command (the library skills' `argus.applySkill`) comes back as a Command whose
`command` is the stringified object, and its kind, data and disabled reason are lost. The protocol tells the
two apart by the type of `command`: a string in a Command, an object in a CodeAction.
"""

from __future__ import annotations

from typing import Any

from cattrs import Converter
from lsprotocol import types
from pygls.protocol import default_converter


def client_converter() -> Converter:
    converter = default_converter()

    def command_or_code_action(item: Any, _: type) -> types.Command | types.CodeAction:
        if isinstance(item.get("command"), str):
            return converter.structure(item, types.Command)
        return converter.structure(item, types.CodeAction)

    converter.register_structure_hook(types.Command | types.CodeAction, command_or_code_action)
    return converter
