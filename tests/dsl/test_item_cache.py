"""Items parsed once and reused: a file parses the same with the cache as without it, when nothing changed,
when lines were added above an item, and when one item was edited."""

from __future__ import annotations

from pathlib import Path

import pytest

from argus.dsl import parser

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("**/*.argus"))


def fresh(text: str) -> parser.ParseResult:
    parser.ITEMS._items.clear()
    return parser.parse(text)


def same(a: parser.ParseResult, b: parser.ParseResult) -> bool:
    return repr(a.module) == repr(b.module) and [d.model_dump() for d in a.diagnostics] == [
        d.model_dump() for d in b.diagnostics
    ]


def variants(text: str) -> list[str]:
    first_kernel = text.index("\nkernel ") + 1
    return [
        text,
        "\n\n# three lines above\n" + text,  # every item moves down
        text.replace("\n", "\n\n", 3),  # the items below the third line move
        text[:first_kernel] + text[first_kernel:].replace("(", "( ", 1),  # one item edited, the others kept
        text.replace(":\n", "\n", 1),  # a header without its colon: the diagnostics move too
    ]


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_a_file_parses_the_same_with_items_from_the_cache(path):
    text = path.read_text()
    for variant in variants(text):
        expected = fresh(variant)
        fresh(text)  # the cache now holds the items at their original lines
        assert same(parser.parse(variant), expected)


def test_a_cached_item_is_a_copy_that_no_caller_can_change():
    text = (EXAMPLES[0]).read_text()
    first = fresh(text)
    first.module.items[0].span = None
    first.diagnostics.clear()
    assert same(parser.parse(text), fresh(text))


def test_the_cache_keeps_at_most_its_budget_of_item_text():
    from argus.dsl.item_cache import ItemCache

    cache = ItemCache(capacity=100, max_chars=1000)
    item = parser.parse("kernel k():\n    grid (1,)\n").module.items[0]
    for n in range(50):
        cache.put("x" * 90 + str(n), 0, item, [])
    assert len(cache) == 10  # ten 92-character texts fit in 1,000, the older ones went first
    assert cache.get("x" * 90 + "49", 0) is not None and cache.get("x" * 90 + "0", 0) is None
