"""What every held-out set's test asserts, written once: a registered set is frozen (its files match the
SHA256SUMS written when it was committed), its README lists every kernel, each kernel checks and verifies with no
diagnostic and has a reference and a small and a large size set, and no kernel of it is an expert, an example,
a kernel of another set, or named by a lineage record or a card; and the facts of a kernel's text the later sets
register (a tune list or a policy, its dot accumulators, the programs its grid launches at `large`), read from the
text alone, not through argus.skills."""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable
from pathlib import Path

from argus.dsl.ast import PythonBlock, Sizes
from argus.dsl.check import check_source
from argus.skills.library import LIBRARY, LINEAGES
from argus.verify import verify_check


def kernel_names(text: str) -> list[str]:
    return [k.name for k in check_source(text).module.kernels]


def read_sums(folder: Path) -> dict[str, str]:
    sums = {}
    for line in (folder / "SHA256SUMS").read_text(encoding="utf-8").splitlines():
        if line.strip():
            digest, name = line.split()
            sums[name] = digest
    return sums


def assert_unchanged_since_registered(folder: Path, paths: list[Path]) -> None:
    sums = read_sums(folder)
    assert sorted(sums) == sorted(p.name for p in paths)
    for path in paths:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        never = f"never tune on skills/{folder.name}"
        assert digest == sums[path.name], f"{path.name} changed after it was registered: {never}"


def assert_readme_lists(folder: Path, names: Iterable[str]) -> None:
    readme = (folder / "README.md").read_text(encoding="utf-8")
    for name in names:
        assert f"`{name}.argus`" in readme, name


def assert_checks_and_verifies_clean(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    checked = check_source(text)
    assert [d.text_line(path.name) for d in checked.diagnostics] == []
    assert kernel_names(text) == [path.stem]
    result = verify_check(checked)
    assert [d.text_line(path.name) for d in result.diagnostics] == []
    assert result.stats.obligations == result.stats.proved > 0


def assert_reference_and_small_and_large_sizes(path: Path) -> None:
    items = check_source(path.read_text(encoding="utf-8")).module.items
    assert [b.kind for b in items if isinstance(b, PythonBlock) and b.kind == "reference"] == ["reference"]
    (sizes,) = [s for s in items if isinstance(s, Sizes)]
    assert {"small", "large"} <= {s.name for s in sizes.sets}


def assert_held_out(folder: Path, paths: list[Path], others: list[Path]) -> None:
    """No kernel of the set is a file or kernel of `others`, nor in a lineage record or a card."""
    found = [p for other in others for p in sorted(other.rglob("*.argus"))]
    assert found, "no expert, held-out or example kernels found"
    other_files = {p.stem for p in found}
    other_kernels = {name for p in found for name in kernel_names(p.read_text(encoding="utf-8"))}
    held_out = {name for p in paths for name in kernel_names(p.read_text(encoding="utf-8"))}
    assert not {p.stem for p in paths} & other_files
    assert not held_out & other_kernels
    records = sorted(LINEAGES.glob("*.json"))
    cards = sorted(LIBRARY.glob("*.yaml"))
    assert records, "no lineage records found"
    assert cards, "no skill cards found"
    for record in records + cards:
        raw = record.read_text(encoding="utf-8")
        assert folder.name not in raw, f"{record.name} references skills/{folder.name}"
        for name in held_out:
            assert f"kernel {name}(" not in raw, f"{record.name} holds the held-out kernel {name}"
            assert f'"kernel": "{name}"' not in raw, f"{record.name} is a lineage of {name}"


def has_tune_or_policy(text: str) -> bool:
    return bool(re.search(r"\btune\s*\[|^\s*policy\b", text, re.MULTILINE))


def dot_accumulators(text: str) -> int:
    """The tiles started from zeros that a `dot` adds into (`acc = dot(a, b, acc)` or `acc += dot(...)`)."""
    started = re.findall(r"^\s*(\w+) = zeros\(", text, re.MULTILINE)
    return sum(
        bool(re.search(rf"^\s*{name} \+= dot\(|^\s*{name} = dot\(.*, {name}\)$", text, re.MULTILINE))
        for name in started
    )


def programs_at_large(text: str) -> int:
    """The programs the kernel's `grid` launches at its `large` sizes, from the `tile`, `grid` and `sizes` lines
    (each tile constant's declared value, not its tune list)."""
    (tiles,) = re.findall(r"^\s*tile (.*)$", text, re.MULTILINE)
    (grid,) = re.findall(r"^\s*grid \((.*)\)$", text, re.MULTILINE)
    (large,) = re.findall(r"^\s*large: (.*)$", text, re.MULTILINE)
    names = {k: int(v) for k, v in re.findall(r"(\w+) = (\d+)", re.sub(r"tune \[[^\]]*\]", "", tiles))}
    names |= {k: int(v.replace("_", "")) for k, v in re.findall(r"(\w+) = ([\d_]+)", large)}
    cdiv = lambda a, b: -(-a // b)  # noqa: E731
    dims = eval(f"[{grid}]", {"__builtins__": {}, "cdiv": cdiv}, names)
    return math.prod(dims)


NOT_NAIVE = ("num_stages", "tma", "input_precision", "exp2", "requires", "warp_specialize", "GROUP")


def assert_naive(path: Path) -> None:
    """None of the words a tuned kernel writes (stages, tma, a precision, exp2, a requires dropping a mask, warp
    specialization, a grouped order) starts a name in the kernel's text, comments dropped."""
    code = "\n".join(line.split("#")[0] for line in path.read_text(encoding="utf-8").splitlines())
    for word in NOT_NAIVE:
        assert not re.search(rf"\b{word}", code), f"{path.stem}: {word}"
