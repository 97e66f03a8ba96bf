"""Fixtures for the gate's tests; the bundle builders live in gate_support.py."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def bundle_dir(tmp_path: Path) -> Path:
    return tmp_path / "bundle"
