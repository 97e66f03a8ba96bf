"""The JSON schema of a gate result file (GateRun, one GateResult per kernel), as docs/gate.md shows it.

python -m argus.gate.schema     prints it; tests/gate/test_schema_doc.py checks docs/gate.md holds it
"""

from __future__ import annotations

import json

from argus.gate.result import GateRun


def schema_text() -> str:
    return json.dumps(GateRun.model_json_schema(), indent=2) + "\n"


if __name__ == "__main__":
    print(schema_text(), end="")
