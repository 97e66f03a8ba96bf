"""The server's settings: one typed tree, read from `initializationOptions` and `workspace/configuration`.

On the wire the keys are camelCase under the section `argus`:

    {"debounceMs": 150,
     "verify": {"enabled": true, "rlimit": 5000000, "timeoutMs": 1000},
     "gate": {"device": "auto", "onSave": false, "timeoutS": 300},
     "refine": {"planner": "search", "budget": 8, "device": "", "model": "", "host": ""},
     "inlayHints": {"enable": true},
     "check": {"maxFileKiB": 2048}}

A missing or malformed value keeps its default (and is logged), so a typo in a user's settings never stops
the server.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, fields, replace
from typing import Any

logger = logging.getLogger(__name__)

SECTION = "argus"
GATE_DEVICES = ("auto", "cpu", "cuda")
REFINE_PLANNERS = ("search", "llm")


@dataclass(frozen=True, slots=True)
class Settings:
    debounce_ms: int = 150  # quiet time after an edit before the verifier runs
    verify_enabled: bool = True
    verify_rlimit: int = 5_000_000  # z3 resource units per obligation (argus.verify.DEFAULT_RLIMIT): decides
    verify_timeout_ms: int = 1000  # the wall-clock safety net: at least 10x this (argus.verify.solve.wall_cap_ms)
    gate_device: str = "auto"
    gate_on_save: bool = False
    gate_timeout_s: float = 300.0
    refine_planner: str = "search"  # argus.refine: the skill search, or an LLM through ollama
    refine_budget: int = 8  # gate runs of candidates per refine
    refine_device: str = ""  # where refine's gate runs; empty: gate.device
    refine_model: str = ""  # llm: the ollama model; empty: the planner's default
    refine_host: str = ""  # llm: the ollama server; empty: $OLLAMA_HOST, else localhost:11434
    inlay_hints_enable: bool = True  # tile shapes and layouts written into the text (argus.lsp.inlay_hints)
    max_file_kib: int = 2048  # a larger file gets AR010 instead of a check (argus.lsp.diagnostics)

    def to_wire(self) -> dict[str, Any]:
        return {
            "debounceMs": self.debounce_ms,
            "verify": {
                "enabled": self.verify_enabled,
                "rlimit": self.verify_rlimit,
                "timeoutMs": self.verify_timeout_ms,
            },
            "gate": {"device": self.gate_device, "onSave": self.gate_on_save, "timeoutS": self.gate_timeout_s},
            "refine": {
                "planner": self.refine_planner,
                "budget": self.refine_budget,
                "device": self.refine_device,
                "model": self.refine_model,
                "host": self.refine_host,
            },
            "inlayHints": {"enable": self.inlay_hints_enable},
            "check": {"maxFileKiB": self.max_file_kib},
        }


# wire path -> (field, check)
_WIRE: dict[tuple[str, ...], tuple[str, Any]] = {
    ("debounceMs",): ("debounce_ms", lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 10_000),
    ("verify", "enabled"): ("verify_enabled", lambda v: isinstance(v, bool)),
    ("verify", "rlimit"): (
        "verify_rlimit",
        lambda v: isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 4_294_967_295,
    ),
    ("verify", "timeoutMs"): (
        "verify_timeout_ms",
        lambda v: isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 600_000,
    ),
    ("gate", "device"): ("gate_device", lambda v: v in GATE_DEVICES),
    ("gate", "onSave"): ("gate_on_save", lambda v: isinstance(v, bool)),
    ("gate", "timeoutS"): (
        "gate_timeout_s",
        lambda v: isinstance(v, int | float) and not isinstance(v, bool) and 1 <= v <= 3600,
    ),
    ("refine", "planner"): ("refine_planner", lambda v: v in REFINE_PLANNERS),
    ("refine", "budget"): (
        "refine_budget",
        lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 1000,
    ),
    ("refine", "device"): ("refine_device", lambda v: v == "" or v in GATE_DEVICES),
    ("refine", "model"): ("refine_model", lambda v: isinstance(v, str)),
    ("refine", "host"): ("refine_host", lambda v: isinstance(v, str)),
    ("inlayHints", "enable"): ("inlay_hints_enable", lambda v: isinstance(v, bool)),
    ("check", "maxFileKiB"): (
        "max_file_kib",
        lambda v: isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 1_048_576,
    ),
}
assert {f for f, _ in _WIRE.values()} == {f.name for f in fields(Settings)}


def apply(base: Settings, options: Any) -> Settings:
    """`base` with every valid value of `options` (a wire dict, possibly wrapped in {"argus": ...})."""
    if not isinstance(options, dict):
        return base
    if SECTION in options and isinstance(options[SECTION], dict):
        options = options[SECTION]
    changes: dict[str, Any] = {}
    for path, (name, valid) in _WIRE.items():
        node: Any = options
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        if node is None:
            continue
        if valid(node):
            changes[name] = node
        else:
            logger.warning("ignoring setting %s.%s = %r", SECTION, ".".join(path), node)
    return replace(base, **changes)
