"""`argus lineage --cluster`: a cluster that cannot start is one line and exit status 1, before any gate run."""

from __future__ import annotations

from pathlib import Path

import pytest

from argus.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
EXPERT = ROOT / "skills" / "experts" / "softmax.argus"


def test_a_local_cluster_without_workers_is_refused_before_any_gate_run(tmp_path, capsys):
    out = tmp_path / "record.json"
    assert main(["lineage", str(EXPERT), "--workers", "0", "-o", str(out)]) == 1
    said = capsys.readouterr().err
    assert "argus lineage: cannot start a local cluster: a local cluster needs at least one worker" in said
    assert not out.exists()


def test_workers_is_a_whole_number(capsys):
    with pytest.raises(SystemExit) as usage:
        main(["lineage", str(EXPERT), "--workers", "two"])
    assert usage.value.code == 2
    assert "a whole number of at least 0" in capsys.readouterr().err
