"""Dropping edge masks where `requires` makes every tile whole, and (inverse) masking every tiled axis."""

from __future__ import annotations

from dataclasses import dataclass

from argus.dsl import ast
from argus.dsl.spans import Span
from argus.dsl.unparse import unparse
from argus.skills.facts import walk
from argus.skills.provider import Edit
from argus.skills.transforms.base import Application, Check, Transform
from argus.skills.transforms.settings import runs

ACCESSES = ("load", "store")


def accesses(kernel: ast.Kernel) -> list[ast.Call]:
    return [
        n
        for n in walk(kernel.body)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Name)
        and n.func.id in ACCESSES
        and n.args
        and isinstance(n.args[0], ast.Subscript)
        and isinstance(n.args[0].value, ast.Name)
    ]


def shapes(kernel: ast.Kernel) -> dict[str, list[str]]:
    return {p.name: [unparse(d) for d in p.shape] for p in kernel.params if p.shape is not None}


def mask_entries(call: ast.Call) -> list[ast.Expr] | None:
    mask = next((k for k in call.keywords if k.name == "mask"), None)
    if mask is None:
        return None
    return list(mask.value.elts) if isinstance(mask.value, ast.Tuple) else [mask.value]


@dataclass(frozen=True)
class DropEdgeMasks(Transform):
    name: str = "drop_edge_masks"
    title: str = "Drop edge masks"
    intent: str = "no mask arithmetic and no predicated loads where `requires` makes every tile whole"
    anchor: str = "a load or store masked `r < S` on runs `r` of `B`, in a kernel that states `requires S % B == 0`"
    preconditions: tuple[str, ...] = ("divisible_by_tile", "still_checks")

    def sites(self, doc, kernel, facts, params) -> list[Application]:
        lengths = runs(kernel)
        found = []
        for call in accesses(kernel):
            entries = mask_entries(call)
            if entries is None:
                continue
            missing = []
            for entry in entries:
                match entry:
                    case ast.NoneLit():
                        continue
                    case ast.Compare(op="<", left=ast.Name(id=run), right=bound) if run in lengths:
                        if (unparse(bound), lengths[run]) not in facts.divisible:
                            needed = f"requires {unparse(bound)} % {lengths[run]} == 0"
                            missing.append(f"needs `{needed}`, not established here")
                    case _:
                        missing.append(f"the mask entry `{unparse(entry)}` is not of the form `run < size`")
            keywords = [k for k in call.keywords if k.name in ("mask", "other")]
            start = call.args[-1].span
            end = keywords[-1].span
            edit = Edit(Span(start.end_line, start.end_col, end.end_line, end.end_col), "")
            found_text = missing[0] if missing else ""
            check = Check("divisible_by_tile", not missing, found_text)
            title = f"Drop edge masks ({call.func.id} of {call.args[0].value.id})"
            params = {"tensor": call.args[0].value.id}
            found.append(self.app("forward", kernel, call.span, title, params, [edit], [check]))
        return found

    def inverse_sites(self, doc, kernel, facts) -> list[Application]:
        lengths = runs(kernel)
        dims = shapes(kernel)
        constants = set(facts.constants)
        found = []
        for call in accesses(kernel):
            if mask_entries(call) is not None or any(k.name == "other" for k in call.keywords):
                continue
            sub = call.args[0]
            entries = []
            for index, dim in zip(sub.indices, dims.get(sub.value.id, []), strict=False):
                if isinstance(index, ast.Name) and index.id in lengths:
                    # a run over a whole fixed dimension (`arange(D)` on a D axis) needs no bound
                    whole = dim == lengths[index.id] and dim in constants
                    entries.append("None" if whole else f"{index.id} < {dim}")
            if not any(e != "None" for e in entries):
                continue
            mask = entries[0] if len(entries) == 1 else f"({', '.join(entries)})"
            text = f", mask={mask}" + (", other=0" if call.func.id == "load" else "")
            end = call.args[-1].span
            edit = Edit(Span(end.end_line, end.end_col, end.end_line, end.end_col), text)
            title = f"undo dropped masks: mask the {call.func.id} of {sub.value.id}"
            found.append(self.app("inverse", kernel, call.span, title, {"tensor": sub.value.id}, [edit]))
        return found
