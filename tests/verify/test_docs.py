"""docs/verification.md shows real output: the counterexample record, its schema and a layout's hover text."""

from __future__ import annotations

import json
import re
from pathlib import Path

from argus.dsl.check import check_source
from argus.verify import verify_check
from argus.verify.witness import Counterexample

ROOT = Path(__file__).resolve().parents[2]
TEXT = (ROOT / "docs" / "verification.md").read_text(encoding="utf-8")
JSON_BLOCKS = re.findall(r"```json\n(.*?)```", TEXT, re.DOTALL)


def test_the_record_shown_is_what_the_verifier_reports():
    shown = json.loads(JSON_BLOCKS[0])
    check = check_source((ROOT / "tests" / "verify" / "corpus" / "contraction_b_next_k.argus").read_text())
    produced = next(d for d in verify_check(check).diagnostics if d.code == shown["code"])
    record = produced.model_dump(mode="json")
    assert {k: record[k] for k in shown} == shown


def test_the_schema_shown_is_the_models():
    assert json.loads(JSON_BLOCKS[1]) == Counterexample.model_json_schema()


def test_the_layout_shown_is_what_hover_gets():
    layouts = verify_check(check_source((ROOT / "examples" / "matmul.argus").read_text())).layouts
    text = next(v.text for v in layouts if v.name == "a")
    assert f"\n{text}\n" in TEXT
