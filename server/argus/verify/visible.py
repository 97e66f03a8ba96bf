"""What makes a witness show its failure (issue 17, class 8): conditions a refuted obligation's counterexample
should meet, on top of being small, so that the launch it names is one where the mistake can be seen.

The smallest model z3 finds is often degenerate: a softmax over one column (any max gives 1), a statistic of a
row that does not exist (row 1 when M = 1), a contraction whose mismatched K index is past K (a padding lane
of a carried tile, so "a reads 32, b reads 0" names an element that is not there). Per obligation kind:

- contraction (AR310): each contracted index the witness shows lies inside its dimension (0 <= index < K):
  the two elements multiplied together both exist, and they are different elements;
- alignment (AR311): the element's index and the statistic's index both lie inside the dimension (the
  statistic is one of a real row), and the tile the statistic meets has another real lane beside the witness
  element along each of its axes (a row of at least two columns: a statistic of one lane, a softmax of one
  column, hides what it is combined with);
- padding (AR313) of a reduction or a dot: the row has a second real lane beside the one the witness shows.
  With one real lane a LayerNorm's output is 0 whatever the variance, so padding that spoils the variance
  changes nothing there (padding_layernorm_variance_not_remasked at N = 1);
- a mean over padding lanes (AR322): the same, a second real lane in the sum: a mean of one element is the
  element, which shows the mistake less plainly than the mean of a row of two.

The other kinds are visible by construction: an out-of-bounds index is one (AR301), two programs touching
one element are a race (AR302, AR303), an element no program writes is a hole (AR304), a tag or invariant
that differs from its stated value is the failure (AR305-AR307), and a padding lane accumulated across
iterations is real in the other iteration the witness names.

Each condition is a preference, not a requirement: solve.Prover.small_model keeps those that a model can
meet, in the order given here, so a kernel where one cannot hold (a tile of one column) still gets its
witness. Deterministic: the same queries in the same order, in the kernel's own z3 context.
"""

from __future__ import annotations

import re

import z3

from argus.verify.model import Obligation
from argus.verify.terms import substitute

CONTRACTED = re.compile(r"^[ab]'s (.+) index$")  # dot.dot_rule's shown values: "a's K index"
REAL_LANE = "a real lane of the same row"  # padding_checks' shown value: the row's real lane
SUMMED_LANE = "a real lane summed with it"  # padded_means' shown value: a real lane of the mean's sum
ALIGNED = re.compile(r"\(axis \d+, (.+)\) than it was computed from$")  # evaluate.alignment's message


def preferences(ob: Obligation, sizes: dict[str, z3.ArithRef], constants: dict[str, object]) -> list[z3.BoolRef]:
    """The conditions under which `ob`'s witness shows its failure, most important first (terms of the
    evaluator's context, like the obligation's)."""
    if ob.kind == "contraction":
        found = []
        for name, term in ob.shown:
            match = CONTRACTED.match(name)
            extent = dimension(match.group(1), sizes, constants) if match else None
            if extent is not None:
                found.append(inside(term, extent))
        return found
    if ob.kind == "alignment":
        match = ALIGNED.search(ob.message.split("\n")[0])
        extent = dimension(match.group(1), sizes, constants) if match else None
        found = [] if extent is None else [inside(term, extent) for _, term in ob.shown]
        return found + other_lanes(ob)
    if ob.kind == "padding":
        return [beside(ob, term) for name, term in ob.shown if name.startswith(REAL_LANE)]
    if ob.kind == "padded_mean":
        return [beside(ob, term) for name, term in ob.shown if name.startswith(SUMMED_LANE)]
    return []


def dimension(label: str, sizes: dict[str, z3.ArithRef], constants: dict[str, object]) -> z3.ArithRef | None:
    """The extent a tensor dimension's label stands for: a size (`K`), a tile constant (`D = 64`) or a number."""
    label = label.strip()
    if label in sizes:
        return sizes[label]
    value = constants.get(label)
    if isinstance(value, int) and not isinstance(value, bool):
        return z3.IntVal(value)
    if label.isdigit():
        return z3.IntVal(int(label))
    return None


def inside(term: z3.ArithRef, extent: z3.ArithRef) -> z3.BoolRef:
    return z3.And(term >= 0, term < extent)


def other_lanes(ob: Obligation) -> list[z3.BoolRef]:
    """For each coordinate of the witness element, another lane of the same tile, different along that axis
    only, that meets the obligation's assumptions too (its coordinate range and the tile's mask): a real
    neighbour beside the element along every axis."""
    return [beside(ob, coord) for _, coord in ob.coords]


def beside(ob: Obligation, lane: z3.ArithRef) -> z3.BoolRef:
    """Another value of `lane` (a coordinate, or the real lane a padding witness shows) for which the
    obligation's assumptions hold as well: a second real lane of the same row."""
    other = z3.Int(f"{lane} (another lane)")
    return z3.And(other != lane, *[substitute(a, [(lane, other)]) for a in ob.assumptions])
