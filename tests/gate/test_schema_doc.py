"""docs/gate.md carries the GateRun JSON schema generated from the pydantic models, and it is current."""

from __future__ import annotations

import json
import re
from pathlib import Path

from argus.gate.result import GateRun
from argus.gate.schema import schema_text

DOC = Path(__file__).resolve().parents[2] / "docs" / "gate.md"


def test_the_schema_in_docs_gate_md_is_the_one_the_models_generate():
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Result schema", 1)[1]
    shown = re.search(r"```json\n(.*?)```", section, re.DOTALL).group(1)
    assert shown == schema_text(), "regenerate it: python -m argus.gate.schema"


def test_the_schema_describes_a_result_per_kernel():
    schema = json.loads(schema_text())
    assert schema["title"] == "GateRun"
    result = schema["$defs"]["GateResult"]["properties"]
    assert {"kernel", "device", "compile", "correct", "profile", "errors", "seconds"} <= set(result)
    assert GateRun.model_validate({"results": []}).results == []
