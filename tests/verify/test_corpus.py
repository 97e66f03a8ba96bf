"""The bug corpus: each buggy kernel reports its code at its line, the witness is confirmed by running the
kernel's index arithmetic concretely (numpy, not z3), and the fixed twin verifies clean.

Each `corpus/NAME.argus` starts with `# expect: ARnnn line L` (1-based); `corpus/NAME.fixed.argus` is the
same kernel with the mistake repaired.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from verify_concrete import Concrete, scanned

from argus.dsl.atomics import WRITES
from argus.dsl.check import check_source
from argus.dsl.ir import walk_ops
from argus.verify import verify_check

CORPUS = Path(__file__).parent / "corpus"
BUGGY = sorted(p for p in CORPUS.glob("*.argus") if not p.name.endswith(".fixed.argus"))
EXPECT = re.compile(r"^# expect: (AR\d{3}) line (\d+)$", re.MULTILINE)
KINDS = {
    "in bounds": {"AR301"},
    "race-free": {"AR302", "AR303"},
    # AR315: each K index of a contraction reaches an atomic sum once; AR316: each reaches the value written
    "coverage": {"AR304", "AR315", "AR316"},
    "tags": {"AR305"},
    "loop invariants": {"AR306", "AR307"},
    "contraction": {"AR310"},
    "alignment of statistics": {"AR311"},
    "padding into reductions": {"AR313"},
    "division by zero": {"AR314"},
    "NaN of a row with no real lane": {"AR317"},
    "operands on their own axes": {"AR319"},
    "narrow integers that do not wrap": {"AR320"},
    "means over the real lanes only": {"AR322"},
    "partial sums reduced along their walked axis": {"AR323"},
    "carried results accumulated": {"AR324"},
}


def expectation(path: Path) -> tuple[str, int]:
    match = EXPECT.search(path.read_text())
    assert match, f"{path.name} has no `# expect: ARnnn line L` header"
    return match.group(1), int(match.group(2))


def verified(path: Path):
    check = check_source(path.read_text())
    assert not check.has_errors, [d.text_line(path.name) for d in check.diagnostics]
    return check, verify_check(check)


def reported(path: Path):
    code, line = expectation(path)
    check, result = verified(path)
    found = [d for d in result.diagnostics if d.code == code and d.line + 1 == line]
    assert found, [d.text_line(path.name) for d in result.diagnostics]
    return check, found[0]


def test_every_invariant_kind_has_three_buggy_kernels():
    codes = Counter(expectation(p)[0] for p in BUGGY)
    counts = {kind: sum(codes[c] for c in members) for kind, members in KINDS.items()}
    assert all(n >= 3 for n in counts.values()), counts


def test_every_buggy_kernel_has_a_fixed_twin():
    assert [p.name for p in BUGGY if not p.with_suffix(".fixed.argus").exists()] == []


@pytest.mark.parametrize("path", BUGGY, ids=lambda p: p.stem)
def test_buggy_kernel_reports_its_code_at_its_line(path):
    _, diagnostic = reported(path)
    assert diagnostic.source == "argus.verify"
    if diagnostic.severity.value == "error":
        assert diagnostic.data["verdict"] == "refuted"


@pytest.mark.parametrize("path", BUGGY, ids=lambda p: p.stem)
def test_fixed_twin_verifies_clean(path):
    fixed = path.with_suffix(".fixed.argus")
    _, result = verified(fixed)
    assert [d.text_line(fixed.name) for d in result.diagnostics] == []
    assert result.stats.obligations == result.stats.proved > 0


@pytest.mark.parametrize("path", BUGGY, ids=lambda p: p.stem)
def test_witness_is_confirmed_by_concrete_evaluation(path):
    check, diagnostic = reported(path)
    kernel = next(iter(check.analysis.kernels.values()))
    witness = diagnostic.data["counterexample"]
    assert confirm(kernel, witness) == "confirmed"


# ---- concrete confirmation ---------------------------------------------------------------------------
def tensor_data(kernel, witness) -> dict[str, np.ndarray]:
    """The loaded integer tensors of the witness; entries it leaves open follow the stated data facts."""
    sizes = witness["sizes"]
    partitions = {}
    for op in walk_ops(kernel.launch):
        if op.kind == "partition":
            total = next(name for name, v in kernel.sizes.items() if v.id == op.operands[1].id)
            partitions[op.operands[0].name] = sizes[total]
    data = {}
    for param in kernel.params:
        shape = getattr(param.type, "shape", None)
        if not shape or not param.type.dtype.is_integer:
            continue
        dims = [d.value(sizes) for d in shape]
        table = np.full(dims, np.iinfo(np.int64).min, np.int64)
        for key, value in witness["data"].items():
            name, args = key.split("[", 1)
            if name == param.name:
                table[tuple(int(a) for a in args.rstrip("]").split(","))] = value
        if param.name in partitions:
            table[0], table[-1] = 0, partitions[param.name]
            table = np.maximum.accumulate(table)
        data[param.name] = np.where(table == np.iinfo(np.int64).min, 0, table)
    return data


def run_at(kernel, witness, program, loops, line, kinds, floats=None):
    concrete = Concrete(kernel, witness["sizes"], tensor_data(kernel, witness), floats)
    events = concrete.run(tuple(program.values()))
    loops = {k: v for k, v in loops.items() if not k.endswith(" iteration")}
    return [
        e for e in events if e.line == line and e.kind in kinds and all(e.loops.get(k) == v for k, v in loops.items())
    ]


def carried_sum_confirmed(kernel, w, loop: str, following: int, element: tuple) -> str:
    """The loads of the tensor the witness names read other elements at the walk's next iteration."""
    tensor = next(k for k in w["values"] if " index " in k).split(" index ")[0]
    lines = {op.span.line for op in walk_ops(kernel.body) if op.kind == "load" and op.operands[0].name == tensor}
    later = dict(w["iteration"], **{loop: following})
    for line in lines:
        for e, f in itertools.product(
            run_at(kernel, w, w["program"], w["iteration"], line, ("load",)),
            run_at(kernel, w, w["program"], later, line, ("load",)),
        ):
            pairs = zip(e.detail["indices"], f.detail["indices"], strict=True)
            if e.detail["mask"][element] and any(int(x[element]) != int(y[element]) for x, y in pairs):
                return "confirmed"
    return "the two iterations read the same elements at the witness"


def confirm(kernel, w) -> str:
    kind = w["kind"]
    element = tuple(w["element"].values())
    memory = ("load", *WRITES)
    if kind == "in_bounds":
        for e in run_at(kernel, w, w["program"], w["iteration"], w["line"], memory):
            index = [int(i[element]) for i in e.detail["indices"]]
            outside = any(not 0 <= i < d for i, d in zip(index, e.detail["dims"], strict=True))
            if e.detail["mask"][element] and outside:
                return "confirmed"
        return "no out-of-bounds access at the witness"
    if kind in ("race_store", "race_read"):
        second = w["second"]
        if second["program"] == w["program"]:
            return "the two accesses are made by one program"
        mine = run_at(kernel, w, w["program"], w["iteration"], w["line"], memory)
        theirs = run_at(kernel, w, second["program"], second["iteration"], second["line"], memory)
        other = tuple(second["element"].values())
        for a, b in itertools.product(mine, theirs):
            same = all(
                int(x[element]) == int(y[other]) for x, y in zip(a.detail["indices"], b.detail["indices"], strict=True)
            )
            if same and a.detail["mask"][element] and b.detail["mask"][other]:
                return "confirmed"
        return "the two programs do not touch one element"
    if kind == "coverage":
        names = [k.split(" index ")[0] for k in w["values"]]
        target = tuple(w["values"].values())
        concrete = Concrete(kernel, w["sizes"], tensor_data(kernel, w))
        for program in itertools.product(*[range(g) for g in concrete.grid]):
            for e in concrete.run(program):
                if e.kind in WRITES and e.detail["tensor"] == names[0]:
                    hit = np.ones(e.detail["mask"].shape, bool) & e.detail["mask"]
                    for index, t in zip(e.detail["indices"], target, strict=True):
                        hit &= index == t
                    if hit.any():
                        return f"program {program} writes the element"
        return "confirmed"
    if kind == "contraction":
        i, kk, j = element
        for e in run_at(kernel, w, w["program"], w["iteration"], w["line"], ("dot",)):
            # the invariant: a's contracted index equals b's, element by element (masks aside: a tile carried
            # through a loop keeps its index map but not its mask, so the verifier may name a padded element);
            # axes of one dimension pair up, and where none share one (W [N, K] used without trans), every pair
            # must agree
            a_axes = [(idx, label) for idx, label in e.detail["a"].values() if idx[i, 0] != idx[i, -1]]
            b_axes = [(idx, label) for idx, label in e.detail["b"].values() if idx[0, j] != idx[-1, j]]
            pairs = list(itertools.product(a_axes, b_axes))  # the axes that vary along the contraction
            same = [(a, b) for a, b in pairs if a[1] == b[1]]
            for (a_idx, _), (b_idx, _) in same or pairs:
                if a_idx[i, kk] != b_idx[kk, j]:
                    return "confirmed"
        return "the contracted indices agree at the witness"
    if kind == "walked_sum":
        # the loop runs the witness's iteration, its second (the lanes then take in a second index of the walked
        # dimension), and the mistake runs: the update in the loop, or the reduction after it
        concrete = Concrete(kernel, w["sizes"], tensor_data(kernel, w))
        events = concrete.run(tuple(w["program"].values()))
        loops = {k: v for k, v in w["iteration"].items() if not k.endswith(" iteration")}
        second = any(all(e.loops.get(k) == v for k, v in loops.items()) for e in events)
        mistake = any(e.line == w["line"] and e.kind in ("elementwise", "reduce") for e in events)
        return "confirmed" if second and mistake else "the loop's second iteration or the mistake does not run"
    if kind == "rescale":
        # the sum's update runs at the witness's iteration, the loop's second: a block that can raise the max
        found = run_at(kernel, w, w["program"], w["iteration"], w["line"], ("elementwise", "reduce"))
        return "confirmed" if found else "the update does not run at the witness's iteration"
    if kind == "replaced_carry":
        # the witness's iteration runs the scan the carry offsets (its third: the first whose prefixes miss a
        # block) or the dot that replaces the accumulator (its second: the first that drops a block)
        kinds = ("scan", "dot")
        lines = {op.span.line for op in walk_ops(kernel.body) if op.kind in kinds}
        found = [e for line in lines for e in run_at(kernel, w, w["program"], w["iteration"], line, kinds)]
        return "confirmed" if found else "no scan or dot runs at the witness's iteration"
    if kind == "carried_tile":
        # the dot at the witness's iteration and at the next one computes different tiles (a's rows or b's
        # columns differ at the element), and the next one starts from the accumulator this one left
        key = next(k for k in w["values"] if k.startswith("the next iteration: "))
        loop = key.removeprefix("the next iteration: ")
        now = run_at(kernel, w, w["program"], w["iteration"], w["line"], ("dot",))
        if not now:  # no dot: a sum of loads carried across a persistent walk, named at its `zeros`
            return carried_sum_confirmed(kernel, w, loop, w["values"][key], element)
        i, j = element
        after = run_at(kernel, w, w["program"], dict(w["iteration"], **{loop: w["values"][key]}), w["line"], ("dot",))
        for e, f in itertools.product(now, after):
            rows = [(e.detail["a"][k][0][i, 0], f.detail["a"][k][0][i, 0]) for k in e.detail["a"] if k in f.detail["a"]]
            cols = [(e.detail["b"][k][0][0, j], f.detail["b"][k][0][0, j]) for k in e.detail["b"] if k in f.detail["b"]]
            if any(x != y for x, y in rows + cols):
                return "confirmed"
        return "the two iterations compute the same tile at the witness"
    if kind == "alignment":
        for e in run_at(kernel, w, w["program"], w["iteration"], w["line"], ("elementwise",)):
            for x, y in itertools.combinations(e.detail["layouts"], 2):
                for key in set(x) & set(y):
                    if x[key][0][element] != y[key][0][element]:
                        return "confirmed"
        return "the operands stand for the same indices at the witness"
    if kind == "paired_axes":
        # two operands of the op at the witness element stand for the two tensors' indices the witness names,
        # with those different values
        (name_a, value_a), (name_b, value_b) = ((k.split("'s ")[0], v) for k, v in w["values"].items())
        for e in run_at(kernel, w, w["program"], w["iteration"], w["line"], ("elementwise", "store")):
            layouts = e.detail.get("layouts")
            if e.kind == "store":  # the value's layout against the indices it is stored at
                shape = e.detail["mask"].shape
                at = dict(enumerate(e.detail["indices"]))
                value = {k: (np.broadcast_to(i, shape), label) for k, (i, label) in e.detail["layout"].items()}
                layouts = [value, {(e.detail["tensor"], d): (i, None) for d, i in at.items()}]
            for x, y in itertools.permutations(layouts, 2):
                at_a = [int(x[k][0][element]) for k in x if k[0] == name_a]
                at_b = [int(y[k][0][element]) for k in y if k[0] == name_b]
                if value_a in at_a and value_b in at_b and value_a != value_b:
                    return "confirmed"
        return "no operands pair the two indices at the witness"
    if kind == "narrow_wrap":
        # the op's exact result at the witness element, computed from its operands here, is outside its dtype
        lo = next(v for k, v in w["values"].items() if k.startswith("lowest "))
        hi = next(v for k, v in w["values"].items() if k.startswith("highest "))
        exact = {"+": np.add, "-": np.subtract, "*": np.multiply}
        for e in run_at(kernel, w, w["program"], w["iteration"], w["line"], ("elementwise",)):
            if e.detail["name"] in exact and all(v is not None for v in e.detail["floats"]):
                result = exact[e.detail["name"]](*(v[element] for v in e.detail["floats"]))
                if not lo <= result <= hi:
                    return "confirmed"
        return "the result fits its dtype at the witness"
    if kind == "padding" and any(k.endswith("loop's stop") for k in w["values"]):
        # a lane past the loop's stop: real (its loads keep it) at the accumulation, its index at the stop or more
        stop = next(v for k, v in w["values"].items() if k.endswith("loop's stop"))
        label, index = next((k, v) for k, v in w["values"].items() if " index " in k)
        tensor, axis = label.split(" index ")[0], int(label.split(" index ")[1].split(" ")[0])
        for e in run_at(kernel, w, w["program"], w["iteration"], w["line"], ("elementwise",)):
            for layout, valid in zip(e.detail["layouts"], e.detail["valids"], strict=True):
                at = layout.get((tensor, axis))
                if at is None or valid is None or not valid[element] or int(at[0][element]) != index:
                    continue
                return "confirmed" if index >= stop else "the lane is inside the loop's range"
        return "no real lane past the loop's stop at the witness"
    if kind == "padding" and not any(k.startswith(("a real lane", "an iteration where")) for k in w["values"]):
        # an atomic_add's padding lane: its index was masked off, the atomic keeps the lane and adds a non-zero
        for e in run_at(kernel, w, w["program"], w["iteration"], w["line"], ("atomic_add",), "normal"):
            off = any(v is not None and not v[element] for v in e.detail["valids"])
            if off and e.detail["mask"][element] and e.detail["value"][element] != 0:
                return "confirmed"
        return "no masked-off index lane adds a non-zero value at the witness"
    if kind == "padding":
        lanes = padding_lanes(kernel, w)
        if lanes != "confirmed":
            return lanes
        # and the value: with some data, the padding lane changes the reduction (or is not the identity)
        if any(padding_value(kernel, w, floats) for floats in ("normal", "negative", "positive", "alternating")):
            return "confirmed"
        return "the padding lanes hold the reduction's identity at the witness"
    if kind == "padded_mean":
        return mean_over_padding(kernel, w)
    if kind == "double_count":
        return double_count(kernel, w)
    if kind == "contraction_coverage":
        return k_never_read(kernel, w)
    if kind == "walked_axis":
        return walk_never_read(kernel, w)
    if kind == "division":
        # the divisor computed with data: exactly 0 at the witness element
        for floats in ("normal", "positive"):
            for e in run_at(kernel, w, w["program"], w["iteration"], w["line"], ("elementwise",), floats):
                divisor = e.detail["floats"][1] if e.detail["name"] == "/" else None
                if divisor is not None and divisor[element] == 0:
                    return "confirmed"
        return "the divisor is not 0 at the witness"
    if kind == "nan":
        # both operands infinite at the witness element, so their difference (or sum) is NaN; or, at a store,
        # a NaN the store keeps
        for floats in ("normal", "positive"):
            for e in run_at(kernel, w, w["program"], w["iteration"], w["line"], ("store",), floats):
                if e.detail["mask"][element] and np.isnan(e.detail["value"][element]):
                    return "confirmed"
            for e in run_at(kernel, w, w["program"], w["iteration"], w["line"], ("elementwise",), floats):
                if e.detail["name"] not in ("-", "+") or any(f is None for f in e.detail["floats"]):
                    continue
                a, b = (f[element] for f in e.detail["floats"])
                with np.errstate(invalid="ignore"):  # the NaN is what is looked for
                    made = a - b if e.detail["name"] == "-" else a + b
                if np.isnan(made) and not (np.isnan(a) or np.isnan(b)):
                    return "confirmed"
        return "no -inf - -inf at the witness"
    if kind == "tag":
        events = run_at(kernel, w, w["program"], w["iteration"], w["line"], ("assert",))
        return "confirmed" if any(not e.detail["holds"] for e in events) else "the assertion holds at the witness"
    if kind in ("invariant_entry", "invariant_step"):
        events = run_at(kernel, w, w["program"], {}, w["line"], ("invariant",))
        return "confirmed" if any(not e.detail["holds"] for e in events) else "the invariant holds in every iteration"
    return f"no concrete check for {kind}"


def double_count(kernel, w) -> str:
    """Two programs atomic_add into one element, each having multiplied the same K index (unmasked) in its dot."""
    second = w["second"]
    if second["program"] == w["program"]:
        return "the two contributions come from one program"
    out = next(iter(w["values"])).split(" index ")[0]  # the atomic's tensor comes first, then the K index read
    name = next(k for k in w["values"] if " index " in k and k.split(" index ")[0] != out)
    tensor, axis = name.split(" index ")[0], int(name.split(" index ")[1].split(" ")[0])
    k_index = w["values"][name]
    sides = [
        (w["program"], w["iteration"], tuple(w["element"].values()), w["values"]["kk"]),
        (second["program"], second["iteration"], tuple(second["element"].values()), w["values"]["kk (other program)"]),
    ]
    written = []
    for program, iteration, element, kk in sides:
        concrete = Concrete(kernel, w["sizes"], tensor_data(kernel, w))
        events = concrete.run(tuple(program.values()))
        loops = {k: v for k, v in iteration.items() if not k.endswith(" iteration")}
        dots = [e for e in events if e.kind == "dot" and all(e.loops.get(k) == v for k, v in loops.items())]
        reads = False
        for e in dots:
            side = "a" if (tensor, axis) in e.detail["a"] else "b"
            if (tensor, axis) not in e.detail[side]:
                continue
            idx = e.detail[side][(tensor, axis)][0]
            at = (element[0], kk) if side == "a" else (kk, element[-1])
            valid = e.detail[f"{side}_valid"]
            real = valid is None or bool(np.broadcast_to(valid, idx.shape)[at])
            reads = reads or (int(idx[at]) == k_index and real)
        if not reads:
            return f"program {program} does not read {name} = {k_index} at the witness"
        outs = [
            tuple(int(i[element]) for i in e.detail["indices"])
            for e in events
            if e.kind == "atomic_add" and e.detail["mask"][element]
        ]
        written.append(set(outs))
    return "confirmed" if written[0] & written[1] else "the two programs add into different elements"


def summed_by(kernel, line: int):
    """The `sum` op a division (or a product) at `line` takes in, through casts and shape ops, and the other
    operand: read from the kernel's IR, the way an engineer follows `ms = sum(v * v, axis=0) / BN` back."""
    for op in walk_ops(kernel.body):
        if op.kind != "binary" or op.attrs["op"] not in ("/", "*") or op.span.line != line:
            continue
        for k, value in enumerate(op.operands[: 1 if op.attrs["op"] == "/" else 2]):
            source = value.op
            while source is not None and source.kind in ("cast", "expand_dims", "broadcast_to", "reshape"):
                source = source.operands[0].op
            if source is not None and source.kind == "reduce" and source.attrs["fn"] == "sum":
                return op, source, k
    return None, None, None


def mean_over_padding(kernel, w) -> str:
    """At the witness's sizes, the sum the mean divides has a masked-off lane (the witness element) beside a real
    one, and the divisor (run with data) is the number of lanes it adds up, more than the real lanes of its row."""
    op, reduce, k = summed_by(kernel, w["line"])
    if reduce is None:
        return "no sum is divided at the witness's line"
    element = tuple(w["element"].values())
    real = [v for name, v in w["values"].items() if name.startswith("a real lane summed with it")]
    for e in run_at(kernel, w, w["program"], w["iteration"], reduce.span.line, ("reduce",)):
        valid, axis = e.detail["valid"], e.detail["axis"]
        if e.detail["fn"] != "sum" or valid is None:
            continue
        axes = axis if isinstance(axis, tuple | list) else (axis,)
        row = tuple(slice(None) if d in axes else c for d, c in enumerate(element))
        beside = list(element)
        for d, v in zip(axes, real, strict=False):
            beside[d] = v
        if valid[element] or not valid[tuple(beside)]:
            return "the witness element is real, or the lane beside it is not"
        width, kept = int(valid[row].size), int(valid[row].sum())
        for f in run_at(kernel, w, w["program"], w["iteration"], w["line"], ("elementwise",), "normal"):
            if f.detail["name"] != op.attrs["op"]:
                continue
            other = np.unique(np.asarray(f.detail["floats"][1 - k]))
            divisor = 1 / other if op.attrs["op"] == "*" else other
            if divisor.size == 1 and divisor[0] == width != kept:
                return "confirmed"
        return f"the sum of {kept} real lanes is not divided by its {width} lanes"
    return "no masked sum at the witness"


def walk_never_read(kernel, w) -> str:
    """No program's load inside the accumulating loop (at the witness's line) reads the index along the axis
    unmasked."""
    [(name, target)] = w["values"].items()
    tensor, axis = name.split(" index ")[0], int(name.split(" index ")[1].split(" ")[0])
    loop = next(op for op in walk_ops(kernel.body) if op.kind == "for" and op.span.line == w["line"])
    concrete = Concrete(kernel, w["sizes"], tensor_data(kernel, w))
    for program in itertools.product(*[range(g) for g in concrete.grid]):
        for e in concrete.run(program):
            inside = loop.span.line <= e.line <= loop.span.end_line  # a later loop may reuse the variable's name
            if e.kind == "load" and e.detail["tensor"] == tensor and inside:
                index = np.broadcast_to(e.detail["indices"][axis], e.detail["mask"].shape)
                if (e.detail["mask"] & (index == target)).any():
                    return f"program {program} reads {name} = {target} in iteration {e.loops}"
    return "confirmed"


def k_never_read(kernel, w) -> str:
    """No program that writes the element (a store, or any of the atomic_adds into it) has a dot whose lane
    reads the K index unmasked at the element's row and column (the write's tile element, the dot's result)."""
    names = list(w["values"])
    out = names[0].split(" index ")[0]
    key = names[-1]  # the K index read: "A index 1 (K)"
    tensor, axis = key.split(" index ")[0], int(key.split(" index ")[1].split(" ")[0])
    target, k_index = tuple(w["values"][n] for n in names[:-1]), w["values"][key]
    concrete = Concrete(kernel, w["sizes"], tensor_data(kernel, w))
    writers = 0
    for program in itertools.product(*[range(g) for g in concrete.grid]):
        events = concrete.run(program)
        for e in events:
            if e.kind not in ("store", "atomic_add") or e.detail["tensor"] != out:
                continue
            hit = e.detail["mask"].copy()
            for index, t in zip(e.detail["indices"], target, strict=True):
                hit &= np.broadcast_to(index, hit.shape) == t
            for at in zip(*np.nonzero(hit), strict=True):
                writers += 1
                row, col = at[-2], at[-1]
                for d in (d for d in events if d.kind == "dot"):
                    side = "a" if (tensor, axis) in d.detail["a"] else "b"
                    if (tensor, axis) not in d.detail[side]:
                        continue
                    idx = d.detail[side][(tensor, axis)][0]
                    ones = np.ones((1, 1), bool)
                    av = np.broadcast_to(
                        ones if d.detail["a_valid"] is None else d.detail["a_valid"], d.detail["a_shape"]
                    )
                    bv = np.broadcast_to(
                        ones if d.detail["b_valid"] is None else d.detail["b_valid"], d.detail["b_shape"]
                    )
                    for kk in range(d.detail["a_shape"][-1]):
                        at_k = idx[row, kk] if side == "a" else idx[kk, col]
                        if int(at_k) == k_index and av[row, kk] and bv[kk, col]:
                            return f"program {program} reads {key} = {k_index} into the element"
    return "confirmed" if writers else "no program writes the element"


def padding_lanes(kernel, w) -> str:
    """A masked-off lane and a real lane of the same row, along the axis the reduction (or the dot) reduces, or
    for an accumulation the same lane real in the other iteration; for a scan, the real lane after the padding
    one (before it, reversed), whose running value takes the padding in."""
    element = tuple(w["element"].values())
    real = next(v for k, v in w["values"].items() if k.startswith(("a real lane", "an iteration where")))
    for e in run_at(kernel, w, w["program"], w["iteration"], w["line"], ("reduce", "dot", "scan")):
        if e.kind in ("reduce", "scan"):
            valid = e.detail["valid"]
            axis = e.detail["axis"]
            lane = list(element)
            lane[axis] = real
            ordered = e.kind == "reduce" or (real > element[axis]) != e.detail["reverse"]
            if valid is not None and not valid[element] and valid[tuple(lane)] and ordered:
                return "confirmed"
        else:
            i, kk, j = element
            a_valid, b_valid = (
                np.ones((1, 1), bool) if v is None else v for v in (e.detail["a_valid"], e.detail["b_valid"])
            )
            a_valid = np.broadcast_to(a_valid, e.detail["a_shape"])
            b_valid = np.broadcast_to(b_valid, e.detail["b_shape"])
            if not (a_valid[i, kk] and b_valid[kk, j]) and a_valid[i, real] and b_valid[real, j]:
                return "confirmed"
    if any(k.startswith("an iteration where the lane is real") for k in w["values"]):
        # an accumulation across iterations: the lane is masked off now and real in the other iteration
        loop = next(k for k in w["values"] if k.startswith("an iteration")).rsplit(": ", 1)[1]
        then = dict(w["iteration"], **{loop: real})
        now = run_at(kernel, w, w["program"], w["iteration"], w["line"], ("elementwise",))
        before = run_at(kernel, w, w["program"], then, w["line"], ("elementwise",))
        for e, f in zip(now, before, strict=False):
            for v, u in zip(e.detail["valids"], f.detail["valids"], strict=True):
                if v is not None and u is not None and not v[element] and u[element]:
                    return "confirmed"
    return "no masked-off lane beside a real one at the witness"


ACCUMULATED = {"+": 0.0, "maximum": -np.inf, "minimum": np.inf}  # an accumulation's identity
SCAN_IDENTITY = {"cumsum": 0.0, "cumprod": 1.0, "cummax": -np.inf, "cummin": np.inf}


def at_element(valid, element: tuple[int, ...]) -> bool:
    """Whether a mask is one of the witness element's lanes (a row statistic beside the row has a rank less)."""
    return (
        valid is not None
        and valid.ndim == len(element)
        and all(e < n for e, n in zip(element, valid.shape, strict=True))
    )


def padding_value(kernel, w, floats: str) -> bool:
    """With data of kind `floats`, the witness's padding lane changes the reduction's result in its row (for a
    dot, the product at its (i, j)), or, for an accumulation, holds a value that is not the identity."""
    element = tuple(w["element"].values())
    kinds = ("reduce", "dot", "elementwise", "scan")
    for e in run_at(kernel, w, w["program"], w["iteration"], w["line"], kinds, floats):
        if e.kind == "scan" and e.detail["floats"] is not None and e.detail["valid"] is not None:
            # the running values of the real lanes, with the padding as it is and with the identity in its place
            row = list(element)
            row[e.detail["axis"]] = slice(None)
            values, valid = e.detail["floats"][tuple(row)], e.detail["valid"][tuple(row)]
            fn, reverse = e.detail["fn"], e.detail["reverse"]
            clean = np.where(valid, values, SCAN_IDENTITY[fn])
            with np.errstate(all="ignore"):
                got, want = scanned(fn, values, 0, reverse)[valid], scanned(fn, clean, 0, reverse)[valid]
            if not np.array_equal(got, want, equal_nan=False):
                return True
        if e.kind == "reduce" and e.detail["floats"] is not None and e.detail["valid"] is not None:
            row = list(element)
            row[e.detail["axis"]] = slice(None)
            values, valid = e.detail["floats"][tuple(row)], e.detail["valid"][tuple(row)]
            fn = e.detail["fn"]
            with np.errstate(all="ignore"):
                if fn.startswith("arg"):
                    changed = np.argmax(values) if fn == "argmax" else np.argmin(values)
                    kept = np.flatnonzero(valid)[(np.argmax if fn == "argmax" else np.argmin)(values[valid])]
                    if changed != kept:
                        return True
                else:
                    reduce = {"sum": np.sum, "max": np.max, "min": np.min}[fn]
                    if not np.array_equal(reduce(values), reduce(values[valid]), equal_nan=False):
                        return True
        if e.kind == "dot" and e.detail["a_floats"] is not None and e.detail["b_floats"] is not None:
            i, _, j = element
            a = np.broadcast_to(e.detail["a_floats"], e.detail["a_shape"])[i, :]
            b = np.broadcast_to(e.detail["b_floats"], e.detail["b_shape"])[:, j]
            ones = np.ones(1, bool)
            va = np.broadcast_to(ones if e.detail["a_valid"] is None else e.detail["a_valid"], e.detail["a_shape"])
            vb = np.broadcast_to(ones if e.detail["b_valid"] is None else e.detail["b_valid"], e.detail["b_shape"])
            both = va[i, :] & vb[:, j]
            with np.errstate(all="ignore"):
                if not np.array_equal(np.sum(a * b), np.sum((a * b)[both])):
                    return True
        if e.kind == "elementwise" and e.detail["name"] == "where":
            # a running max or min written as where(v > acc, v, acc): a finite padding value is not its identity
            for values, valid in zip(e.detail["floats"][1:], e.detail["valids"][1:], strict=True):
                padded = values is not None and at_element(valid, element) and not valid[element]
                if padded and not np.isinf(values[element]):
                    return True
        if e.kind == "elementwise" and e.detail["name"] in ACCUMULATED:
            for values, valid in zip(e.detail["floats"], e.detail["valids"], strict=True):
                padded = values is not None and at_element(valid, element) and not valid[element]
                if padded and values[element] != ACCUMULATED[e.detail["name"]]:  # NaN is not the identity either
                    return True
    return False


# ---- the witness shows the failure (issue 17, class 8) --------------------------------------------
# In the launch a witness names, the mistake can be seen: a contraction's two K indices are elements that
# exist, a statistic is that of a real row and meets a tile with another real lane beside the element along
# each axis (not a softmax of one column), and the outputs the buggy kernel writes there differ from its
# fixed twin's with some data. An out-of-bounds access and a race are the failure themselves (and numpy
# neither faults nor races), and so is an element no program writes (a twin fixed by `requires` cannot even
# be launched at those sizes): for them the confirmation above is the whole check.
IN_OUTPUT = {
    "rescale",
    "contraction",
    "alignment",
    "tag",
    "invariant_entry",
    "invariant_step",
    "padding",
    "division",
    "double_count",
    "contraction_coverage",
    "paired_axes",
    "padded_mean",
    "walked_sum",
    "replaced_carry",
}
DATA = ("normal", "negative", "positive", "alternating", "wide")


@pytest.mark.parametrize("path", BUGGY, ids=lambda p: p.stem)
def test_witness_shows_its_failure(path):
    check, diagnostic = reported(path)
    kernel = next(iter(check.analysis.kernels.values()))
    witness = diagnostic.data["counterexample"]
    assert visible(kernel, witness) == "visible"
    if witness["kind"] in IN_OUTPUT:
        fixed = check_source(path.with_suffix(".fixed.argus").read_text())
        twin = next(iter(fixed.analysis.kernels.values()))
        assert any(outputs_differ(kernel, twin, witness, floats) for floats in DATA), witness["sizes"]


def extent(kernel, witness, label: str) -> int | None:
    """The extent a dimension's label stands for at the witness: a size, a tile constant or a number."""
    if label in witness["sizes"]:
        return witness["sizes"][label]
    constant = kernel.constants.get(label)
    if constant is not None and isinstance(constant.value, int):
        return constant.value
    return int(label) if label.isdigit() else None


def inside(kernel, witness, label: str, index: int) -> bool:
    bound = extent(kernel, witness, label)
    return bound is None or 0 <= index < bound


def visible(kernel, w) -> str:
    element = tuple(w["element"].values())
    if w["kind"] == "contraction":
        i, kk, j = element
        for e in run_at(kernel, w, w["program"], w["iteration"], w["line"], ("dot",)):
            a_axes = [(idx, label) for idx, label in e.detail["a"].values() if idx[i, 0] != idx[i, -1]]
            b_axes = [(idx, label) for idx, label in e.detail["b"].values() if idx[0, j] != idx[-1, j]]
            pairs = list(itertools.product(a_axes, b_axes))
            for (a_idx, a_label), (b_idx, b_label) in [p for p in pairs if p[0][1] == p[1][1]] or pairs:
                a_at, b_at = int(a_idx[i, kk]), int(b_idx[kk, j])
                if a_at != b_at and inside(kernel, w, a_label, a_at) and inside(kernel, w, b_label, b_at):
                    return "visible"
        return "a contracted index at the witness is past its dimension (padding)"
    if w["kind"] == "alignment":
        for e in run_at(kernel, w, w["program"], w["iteration"], w["line"], ("elementwise",)):
            valids = [v for v in e.detail["valids"] if v is not None]
            shape = np.broadcast_shapes(*[np.shape(idx) for x in e.detail["layouts"] for idx, _ in x.values()])
            real = np.ones(shape, bool)
            for v in valids:
                real = real & np.broadcast_to(v, shape)
            lonely = [
                k
                for k, n in enumerate(shape)
                if n > 1 and real[(*element[:k], slice(None), *element[k + 1 :])].sum() < 2
            ]
            for x, y in itertools.combinations(e.detail["layouts"], 2):
                for key in set(x) & set(y):
                    (a, label), (b, _) = x[key], y[key]
                    at, other = int(np.broadcast_to(a, shape)[element]), int(np.broadcast_to(b, shape)[element])
                    if at == other:
                        continue
                    if not (inside(kernel, w, label, at) and inside(kernel, w, label, other)):
                        return "the statistic's index or the element's is past the dimension"
                    if lonely:
                        return f"the element has no other real lane along axis {lonely[0]}"
                    return "visible"
        return "the operands stand for the same indices at the witness"
    if w["kind"] == "padding" and any(k.startswith("a real lane") for k in w["values"]):
        for e in run_at(kernel, w, w["program"], w["iteration"], w["line"], ("reduce", "dot", "scan")):
            if e.kind in ("reduce", "scan") and e.detail["valid"] is not None:
                row = list(element)
                row[e.detail["axis"]] = slice(None)
                real = int(e.detail["valid"][tuple(row)].sum())
            elif e.kind == "dot":
                i, _, j = element
                ones = np.ones((1, 1), bool)
                a = np.broadcast_to(ones if e.detail["a_valid"] is None else e.detail["a_valid"], e.detail["a_shape"])
                b = np.broadcast_to(ones if e.detail["b_valid"] is None else e.detail["b_valid"], e.detail["b_shape"])
                real = int((a[i, :] & b[:, j]).sum())
            else:
                continue
            return "visible" if real >= 2 else f"the padding lane's row has {real} real lane"
        return "no reduction of the padding lane at the witness"
    return "visible"


COMBINE = {"atomic_add": (0.0, np.add), "atomic_max": (-np.inf, np.maximum), "atomic_min": (np.inf, np.minimum)}


def outputs(kernel, witness, floats: str, tables: dict) -> dict[str, np.ndarray]:
    """What every program of the launch writes into each `out` tensor at the witness's sizes and data (NaN
    where nothing is written); `tables` holds the float data, shared between a kernel and its twin."""
    concrete = Concrete(kernel, witness["sizes"], tensor_data(kernel, witness), floats)
    concrete.float_data = tables
    out = {p.name: np.full(concrete.dims(p), np.nan) for p in kernel.params if p.is_out}
    for program in itertools.product(*[range(g) for g in concrete.grid]):
        for e in concrete.run(program):
            if e.kind not in WRITES or e.detail["tensor"] not in out or e.detail["value"] is None:
                continue
            target = out[e.detail["tensor"]]
            keep = e.detail["mask"].copy()
            for index, dim in zip(e.detail["indices"], e.detail["dims"], strict=True):
                keep &= (index >= 0) & (index < dim)
            where = tuple(index[keep] for index in e.detail["indices"])
            values = np.broadcast_to(e.detail["value"], keep.shape)[keep]
            if e.kind in COMBINE:  # an atomic accumulation: from its start, in any order
                start, combine = COMBINE[e.kind]
                target[where] = np.where(np.isnan(target[where]), start, target[where])
                combine.at(target, where, values)
            else:
                target[where] = values
    return out


def outputs_differ(kernel, twin, witness, floats: str) -> bool:
    tables: dict = {}
    mine, theirs = outputs(kernel, witness, floats, tables), outputs(twin, witness, floats, tables)
    with np.errstate(all="ignore"):
        return any(not np.allclose(mine[n], theirs[n], rtol=1e-6, atol=1e-9, equal_nan=True) for n in mine)


# ---- the concrete check can fail: a witness moved off the bug is not confirmed ---------------------
def witness_of(name: str):
    check, diagnostic = reported(CORPUS / f"{name}.argus")
    return next(iter(check.analysis.kernels.values())), dict(diagnostic.data["counterexample"])


def fixed_twin(name: str):
    """The kernel of the corpus kernel `name`'s fixed twin, to try a buggy kernel's witness on."""
    text = (CORPUS / f"{name}.fixed.argus").read_text()
    return next(iter(check_source(text).analysis.kernels.values()))


def test_an_in_bounds_element_is_not_confirmed_as_out_of_bounds():
    kernel, witness = witness_of("bounds_off_by_one_mask")
    witness["element"] = {"i": 0}
    witness["sizes"] = {"N": 1024}
    assert confirm(kernel, witness) != "confirmed"


def test_two_programs_on_disjoint_elements_are_not_confirmed_as_a_race():
    kernel, witness = witness_of("race_overlapping_blocks")
    witness["program"], witness["element"] = {"program_id(0)": 0}, {"i": 0}
    witness["second"] = dict(witness["second"], program={"program_id(0)": 1}, element={"i": 0})
    assert confirm(kernel, witness) != "confirmed"


def test_matching_contraction_indices_are_not_confirmed_as_a_mismatch():
    _, witness = witness_of("contraction_b_next_k")
    witness["line"] -= 1  # the fixed twin has no `# expect` line
    assert confirm(fixed_twin("contraction_b_next_k"), witness) != "confirmed"


def test_a_written_element_is_not_confirmed_as_uncovered():
    kernel, witness = witness_of("coverage_floor_grid")
    witness["values"] = {"z index 0 (N)": 0}
    assert confirm(kernel, witness) != "confirmed"


def test_a_real_lane_is_not_confirmed_as_padding():
    kernel, witness = witness_of("padding_row_max_other_zero")
    witness["element"] = dict(witness["element"], j=0)
    assert confirm(kernel, witness) != "confirmed"


def test_padding_that_holds_the_identity_is_not_confirmed():
    _, witness = witness_of("padding_row_max_other_zero")
    text = (CORPUS / "padding_row_max_other_zero.fixed.argus").read_text().splitlines()
    witness["line"] = next(n for n, line in enumerate(text) if "max(v" in line)  # the twin's comments differ
    kernel = fixed_twin("padding_row_max_other_zero")
    assert padding_lanes(kernel, witness) == "confirmed"  # the same masks: only the value tells them apart
    assert confirm(kernel, witness) != "confirmed"


def test_a_scans_padding_that_holds_the_identity_is_not_confirmed():
    _, witness = witness_of("padding_reverse_cummax_other_zero")
    text = (CORPUS / "padding_reverse_cummax_other_zero.fixed.argus").read_text()
    kernel = next(iter(check_source(text).analysis.kernels.values()))
    witness["line"] = next(n for n, line in enumerate(text.splitlines()) if "cummax(v" in line)
    assert padding_lanes(kernel, witness) == "confirmed"  # the same masks: only the value tells them apart
    assert confirm(kernel, witness) != "confirmed"


def test_padding_after_the_real_lane_is_not_confirmed_for_a_forward_scan():
    """The reversed scan's witness (a real lane before the padding one) on the same kernel scanning forward:
    the real lane's running value never takes the padding in (the verifier proves that kernel clean)."""
    _, witness = witness_of("padding_reverse_cummax_other_zero")
    text = (CORPUS / "padding_reverse_cummax_other_zero.argus").read_text().replace(", reverse=True", "")
    check = check_source(text)
    assert verify_check(check).diagnostics == []
    kernel = next(iter(check.analysis.kernels.values()))
    assert padding_lanes(kernel, witness) == "no masked-off lane beside a real one at the witness"


def test_a_one_column_softmax_does_not_show_a_wrong_max():
    """The witness alignment_softmax_next_row_max had before visible.py: N = 1, where any max gives 1."""
    kernel, witness = witness_of("alignment_softmax_next_row_max")
    assert visible(kernel, witness) == "visible"
    witness["sizes"] = dict(witness["sizes"], N=1)
    assert visible(kernel, witness) == "the element has no other real lane along axis 0"


def test_a_statistic_of_a_row_past_m_is_not_visible():
    """alignment_layernorm_wrong_axis's old witness, M = 1: the statistic applied is row 1's, which is not there."""
    kernel, witness = witness_of("alignment_layernorm_wrong_axis")
    witness["sizes"] = dict(witness["sizes"], M=1)
    assert visible(kernel, witness) == "the statistic's index or the element's is past the dimension"


def test_a_contraction_index_past_k_is_not_visible():
    """contraction_pipelined_prologue's old witness, K = 32: a's K index 32 is a padding lane of a carried tile."""
    kernel, witness = witness_of("contraction_pipelined_prologue")
    witness["sizes"] = dict(witness["sizes"], K=32)
    assert visible(kernel, witness) == "a contracted index at the witness is past its dimension (padding)"


def test_a_layernorm_of_one_column_writes_the_same_outputs_whatever_its_variance():
    """padding_layernorm_variance_not_remasked's old witness, N = 1: every output is 0, bug or not."""
    path = CORPUS / "padding_layernorm_variance_not_remasked.argus"
    kernel, witness = witness_of(path.stem)
    twin = fixed_twin(path.stem)
    assert any(outputs_differ(kernel, twin, witness, floats) for floats in DATA)
    witness["sizes"], witness["element"] = dict(witness["sizes"], N=1), {"i": 1}
    witness["values"] = dict(witness["values"], **{"a real lane of the same row: i": 0})
    assert not any(outputs_differ(kernel, twin, witness, floats) for floats in DATA)
    assert visible(kernel, witness) == "the padding lane's row has 1 real lane"


def test_a_divisor_that_is_not_zero_is_not_confirmed_as_one():
    """division_causal_attention_skips_diagonal's witness (program 0) on the fixed twin, whose loop runs."""
    path = CORPUS / "division_causal_attention_skips_diagonal.argus"
    kernel, witness = witness_of(path.stem)
    assert confirm(kernel, witness) == "confirmed"
    twin = fixed_twin(path.stem)
    witness["line"] -= 1  # the fixed twin's header is one line shorter
    assert confirm(twin, witness) == "the divisor is not 0 at the witness"


def test_k_ranges_that_do_not_overlap_are_not_confirmed_as_a_double_count():
    """coverage_split_k_step_one_block's witness on the fixed twin, whose slices step BK * SPLIT."""
    path = CORPUS / "coverage_split_k_step_one_block.argus"
    kernel, witness = witness_of(path.stem)
    assert confirm(kernel, witness) == "confirmed"
    twin = fixed_twin(path.stem)
    assert confirm(twin, witness) != "confirmed"


def test_a_k_index_that_is_read_is_not_confirmed_as_missing():
    """coverage_k_loop_drops_last_block's witness on the fixed twin, whose K loop walks every block."""
    path = CORPUS / "coverage_k_loop_drops_last_block.argus"
    kernel, witness = witness_of(path.stem)
    assert confirm(kernel, witness) == "confirmed"
    twin = fixed_twin(path.stem)
    assert confirm(twin, witness).startswith("program ")


def test_a_vector_on_its_own_axis_is_not_confirmed_as_paired_with_another():
    _, witness = witness_of("paired_rmsnorm_weight_on_rows")
    witness["line"] -= 1  # the fixed twin has no `# expect` line
    assert confirm(fixed_twin("paired_rmsnorm_weight_on_rows"), witness) != "confirmed"


def test_a_row_as_wide_as_its_tile_is_not_confirmed_as_a_mean_over_padding():
    """mean_rmsnorm_divides_by_tile_width's witness at N = BN: no lane is masked off, dividing by BN is right."""
    kernel, witness = witness_of("mean_rmsnorm_divides_by_tile_width")
    assert confirm(kernel, witness) == "confirmed"
    witness["sizes"] = dict(witness["sizes"], N=4096)
    assert confirm(kernel, witness) == "the witness element is real, or the lane beside it is not"


def test_a_mean_divided_by_the_real_count_is_not_confirmed():
    """The same witness on the fixed twin, which divides by N: the divisor is not the tile's width."""
    _, witness = witness_of("mean_rmsnorm_divides_by_tile_width")
    witness["line"] -= 3  # the fixed twin's header is three lines shorter
    assert confirm(fixed_twin("mean_rmsnorm_divides_by_tile_width"), witness).startswith("the sum of ")


def test_a_difference_that_fits_its_dtype_is_not_confirmed_as_wrapping():
    kernel, witness = witness_of("wrap_awq_zero_point_in_u8")
    witness["data"] = {"q[0, 0]": 5, "zero[0, 0]": 1}
    assert confirm(kernel, witness) != "confirmed"
