"""Every subcommand, given a path that is missing, a folder, an empty file, undecodable bytes or (when the test
is not root) an unreadable file, says what is wrong in a line and exits 1 or 2: no traceback, no internal
error. And the outputs a user names (-o, --bundle, --log) that cannot be written are refused the same way."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from cli_support import argus, copy_example, no_traceback

UNREADABLE = ["unreadable"] if os.geteuid() != 0 else []  # root reads a file whatever its mode
ALL = ["missing", "folder", "empty", "undecodable", *UNREADABLE]
# What a command that reads FILE through argus.cli.read_source can be given: a missing file takes the same
# `except OSError` there as a folder does, so the folder stands for both; an empty file is each command's own.
READ = ["folder", "empty", "undecodable", *UNREADABLE]
FOLDER = ["missing", "empty", "folder"]  # for an option that names a folder: none, a file, one with nothing in it

# {} is the bad input; the lists are argv after `argus`. One entry per way a command reads what it is given
# (build --problem, gate --bundle and skills apply read their FILE as build, gate and skills match do).
COMMANDS = {
    "check": (["check", "{}"], ALL),
    "build": (["build", "{}"], READ),
    "gate": (["gate", "{}", "--device", "cpu"], READ),
    "gate --read": (["gate", "--read", "{}"], ALL),
    "refine": (["refine", "{}", "--device", "cpu", "--budget", "0"], READ),
    "lineage": (["lineage", "{}"], READ),
    "lineage --read": (["lineage", "--read", "{}"], FOLDER),
    "lineage --record": (["lineage", "{kernel}", "--device", "bundle", "--record", "{}", "-o", "{out}"], ALL),
    "skills match": (["skills", "match", "{}:3"], READ),
    "skills --library": (["skills", "--library", "{}", "list"], FOLDER),
    "skills --lineages": (["skills", "--lineages", "{}", "--library", "{out}", "extract"], FOLDER),
    "demo": (["demo", "--no-gate", "{}"], READ),
}
# An empty .argus file is a file without a kernel: check reports that as a warning and exits 0.
EXIT_0 = {("check", "empty")}


def make_input(folder: Path, kind: str) -> Path:
    path = folder / f"{kind}.argus"
    if kind == "folder":
        path.mkdir()
    elif kind == "empty":
        path.write_text("")
    elif kind == "undecodable":
        path.write_bytes(b"\xff\xfe\x00kernel")
    elif kind == "unreadable":
        path.write_text("kernel k():\n")
        path.chmod(0)
    return path


def run_case(folder: Path, name: str, kind: str):
    bad = make_input(folder / name.replace(" ", "_"), kind)
    kernel = copy_example(bad.parent)
    out = bad.parent / f"out-{kind}"
    argv = [
        a.replace("{}", str(bad)).replace("{out}", str(out)).replace("{kernel}", str(kernel)) for a in COMMANDS[name][0]
    ]
    return argv, argus(*argv, cwd=bad.parent, timeout=120)


@pytest.mark.parametrize("name", COMMANDS)
def test_a_bad_input_path_gets_a_message_and_a_usage_or_error_status(tmp_path, name):
    (tmp_path / name.replace(" ", "_")).mkdir()
    with ThreadPoolExecutor(2) as pool:
        inputs = COMMANDS[name][1]
        runs = dict(zip(inputs, pool.map(lambda kind: run_case(tmp_path, name, kind), inputs), strict=True))
    for kind, (argv, done) in runs.items():
        no_traceback(done)
        assert "internal error" not in done.stderr, (argv, done.stderr)
        expected = {0} if (name, kind) in EXIT_0 else {1, 2}
        assert done.returncode in expected, (argv, done.returncode, done.stdout, done.stderr)
        assert done.stderr.strip(), (argv, "nothing said")


def test_build_creates_the_folders_of_its_output(tmp_path):
    kernel = copy_example(tmp_path)
    out = tmp_path / "missing" / "dir" / "x.py"
    done = argus("build", str(kernel), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert "def vector_add" in out.read_text()


def test_build_refuses_an_output_that_is_a_folder(tmp_path):
    kernel = copy_example(tmp_path)
    done = argus("build", str(kernel), "-o", str(tmp_path))
    no_traceback(done)
    assert done.returncode == 2 and f"argus build: cannot write {tmp_path}" in done.stderr, done.stderr


def test_gate_bundle_refuses_a_path_that_is_a_file(tmp_path):
    kernel = copy_example(tmp_path)
    taken = tmp_path / "taken"
    taken.write_text("mine\n")
    done = argus("gate", str(kernel), "--bundle", str(taken))
    no_traceback(done)
    assert done.returncode == 2 and f"--bundle {taken}: a file is there, not a folder" in done.stderr, done.stderr
    assert taken.read_text() == "mine\n"


def test_refine_refuses_a_log_it_cannot_write_before_any_gate_run(tmp_path):
    kernel = copy_example(tmp_path)
    done = argus("refine", str(kernel), "--device", "cpu", "--log", str(tmp_path))
    no_traceback(done)
    assert done.returncode == 2 and "cannot write" in done.stderr and "[refine] gating" not in done.stderr, done.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["gate", "{kernel}", "--trials", "0"],
        ["gate", "{kernel}", "--timeout", "-1"],
        ["refine", "{kernel}", "--timeout", "0"],
        ["lineage", "{kernel}", "--timeout", "nan"],
    ],
    ids=lambda argv: " ".join(argv[::2]),
)
def test_a_count_or_time_limit_that_is_not_positive_is_a_usage_error(tmp_path, argv):
    kernel = copy_example(tmp_path)
    done = argus(*[a.replace("{kernel}", str(kernel)) for a in argv])
    assert done.returncode == 2 and "a positive" in done.stderr and f"not {argv[-1]!r}" in done.stderr
