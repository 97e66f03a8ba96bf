"""The strict unified-diff applier the loop uses for an LLM's diffs."""

from __future__ import annotations

import pytest

from argus.agent.diffs import DiffError, apply_diff

SOURCE = "a\nb\nc\nd\n"


def test_applies_a_hunk_where_its_header_says():
    assert apply_diff(SOURCE, "@@ -2,2 +2,2 @@\n b\n-c\n+C\n") == "a\nb\nC\nd\n"


def test_applies_insertions_and_several_hunks():
    diff = "--- a/f\n+++ b/f\n@@ -0,0 +1,1 @@\n+top\n@@ -4 +5,2 @@\n d\n+e\n"
    assert apply_diff(SOURCE, diff) == "top\na\nb\nc\nd\ne\n"


def test_refuses_a_hunk_whose_context_differs():
    with pytest.raises(DiffError, match="line 2 is 'b', the diff expects 'x'"):
        apply_diff(SOURCE, "@@ -2,2 +2,2 @@\n x\n-c\n+C\n")


def test_refuses_a_hunk_whose_counts_differ_from_its_header():
    with pytest.raises(DiffError, match="header says"):
        apply_diff(SOURCE, "@@ -2,3 +2,2 @@\n b\n-c\n+C\n")


def test_refuses_text_without_a_hunk():
    with pytest.raises(DiffError, match="no hunk"):
        apply_diff(SOURCE, "replace c with C")
