"""Transforms of the order programs run in: grouped order for L2 reuse, and heaviest programs first."""

from __future__ import annotations

from dataclasses import dataclass

from argus.dsl import ast
from argus.dsl.spans import Span
from argus.dsl.unparse import unparse
from argus.skills.facts import walk
from argus.skills.provider import Edit
from argus.skills.transforms.base import Application, Check, Transform
from argus.skills.transforms.settings import appended_setting, loop_has_dot, setting_node, tune_values


def statements(kernel: ast.Kernel) -> list:
    return list(kernel.body)


def is_call(expr, name: str) -> bool:
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == name


def program_ids(stmt) -> tuple[str, str] | None:
    """`a, b = program_id(0), program_id(1)`: (a, b)."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 2 and isinstance(stmt.value, ast.Tuple):
        first, second = stmt.value.elts
        if unparse(first) == "program_id(0)" and unparse(second) == "program_id(1)":
            return stmt.targets[0].id, stmt.targets[1].id
    return None


def cdiv_args(expr) -> tuple[str, str] | None:
    if is_call(expr, "cdiv") and len(expr.args) == 2:
        return unparse(expr.args[0]), unparse(expr.args[1])
    return None


def used_names(kernel: ast.Kernel) -> set[str]:
    return {n.id for n in walk(kernel.body) if isinstance(n, ast.Name)} | {
        s.name for st in kernel.body if isinstance(st, ast.TileDecl | ast.PolicyDecl) for s in st.settings
    }


def line_span(stmt) -> Span:
    return Span(stmt.span.line, stmt.span.col, stmt.span.end_line, stmt.span.end_col)


@dataclass(frozen=True)
class GroupedOrder(Transform):
    name: str = "grouped_order"
    title: str = "Grouped program order for L2 reuse"
    intent: str = (
        "number programs so that GROUP_M row tiles walk down one column panel before moving right: the A row "
        "panels and the B column panel they share stay in L2"
    )
    anchor: str = "a 2-D grid `(cdiv(M, BM), cdiv(N, BN))` with `pm, pn = program_id(0), program_id(1)`"
    preconditions: tuple[str, ...] = ("grid_row_major_2d", "loop_has_dot", "name_free", "still_checks")

    def sites(self, doc, kernel, facts, params) -> list[Application]:
        body = statements(kernel)
        grid = next((s for s in body if isinstance(s, ast.Grid)), None)
        if grid is None:
            return []
        ids_at = next((i for i, s in enumerate(body) if program_ids(s)), None)
        dims = [cdiv_args(d) for d in grid.dims] if len(grid.dims) == 2 else [None]
        row_major = ids_at is not None and None not in dims
        title = "Grouped program order for L2 reuse"
        if not row_major:
            found = "the grid is not `(cdiv(M, BM), cdiv(N, BN))` with `pm, pn = program_id(0), program_id(1)`"
            return [self.app("forward", kernel, grid.span, title, {}, [], [Check("grid_row_major_2d", False, found)])]
        group = int(params.get("group", 8))
        name = str(params.get("name", "GROUP_M"))
        tune = str(params.get("tune", ""))
        (m, bm), (n, bn) = dims
        pm, pn = program_ids(body[ids_at])
        ids = body[ids_at]
        indent = " " * ids.span.col
        taken = used_names(kernel) & {name, "q", "group"}
        checks = [
            Check("grid_row_major_2d", True),
            loop_has_dot(facts),
            Check("name_free", not taken, f"{', '.join(sorted(taken))} already used" if taken else ""),
        ]
        tile = next((s for s in body if isinstance(s, ast.TileDecl)), None)
        if tile is None:
            return []
        setting_text = f"{name} = {group}" + (f" tune {tune}" if tune else "")
        edits = [
            appended_setting(tile, setting_text),
            Edit(grid.span, f"grid ({name} * cdiv({n}, {bn}), cdiv(cdiv({m}, {bm}), {name}))"),
            Edit(
                ids.span,
                f"q, group = program_id(0), program_id(1)\n{indent}{pm} = group * {name} + q % {name}\n"
                f"{indent}{pn} = q // {name}",
            ),
        ]
        return [
            self.app("forward", kernel, grid.span, title, {"group": group, "name": name, "tune": tune}, edits, checks)
        ]

    def inverse_sites(self, doc, kernel, facts) -> list[Application]:
        body = statements(kernel)
        grid = next((s for s in body if isinstance(s, ast.Grid)), None)
        at = next((i for i, s in enumerate(body) if program_ids(s) == ("q", "group")), None)
        if grid is None or at is None or at + 2 >= len(body) or len(grid.dims) != 2:
            return []
        first, second = body[at + 1], body[at + 2]
        if not (isinstance(first, ast.Assign) and isinstance(second, ast.Assign)):
            return []
        match grid.dims:
            case [ast.BinOp(op="*", left=ast.Name(id=name), right=cols), ast.Call(args=[rows, ast.Name(id=name2)])]:
                if name2 != name or cdiv_args(cols) is None or cdiv_args(rows) is None:
                    return []
            case _:
                return []
        if unparse(first.value) != f"group * {name} + q % {name}" or unparse(second.value) != f"q // {name}":
            return []
        setting = setting_node(kernel, name, ast.TileDecl)
        tile = next(s for s in body if isinstance(s, ast.TileDecl))
        index = tile.settings.index(setting) if setting is not None else -1
        if (
            setting is None
            or index == 0
            or sum(n.id == name for n in walk(kernel.body) if isinstance(n, ast.Name)) != 5
        ):
            return []  # the group size is used elsewhere too: not the pattern this inverse knows
        previous = tile.settings[index - 1].span
        tune = doc.source(setting.tune.span) if setting.tune is not None else ""
        pm, pn = first.targets[0].id, second.targets[0].id
        edits = [
            Edit(Span(previous.end_line, previous.end_col, setting.span.end_line, setting.span.end_col), ""),
            Edit(grid.span, f"grid ({unparse(rows)}, {unparse(cols)})"),
            Edit(
                Span(body[at].span.line, body[at].span.col, second.span.end_line, second.span.end_col),
                f"{pm}, {pn} = program_id(0), program_id(1)",
            ),
        ]
        params = {"group": setting.value.value, "name": name, "tune": tune}
        return [self.app("inverse", kernel, grid.span, "undo grouped program order (row-major grid)", params, edits)]


@dataclass(frozen=True)
class HeavyFirst(Transform):
    name: str = "heavy_first"
    title: str = "Heaviest programs first"
    intent: str = (
        "start the programs with the most work first (reversed program order) so the long ones do not run alone "
        "at the end of the launch"
    )
    anchor: str = "`x = program_id(0)` in a kernel whose loop bounds depend on x (triangular work)"
    preconditions: tuple[str, ...] = ("work_depends_on_program", "still_checks")

    def sites(self, doc, kernel, facts, params) -> list[Application]:
        grid = next((s for s in kernel.body if isinstance(s, ast.Grid)), None)
        found = []
        for stmt in kernel.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and unparse(stmt.value) == "program_id(0)":
                name = stmt.targets[0].id
                loops = [n for n in walk(kernel.body) if isinstance(n, ast.For)]
                depends = any(name in {x.id for x in walk(loop.iter) if isinstance(x, ast.Name)} for loop in loops)
                check = Check("work_depends_on_program", depends, "" if depends else f"no loop's bounds use {name}")
                if grid is None:
                    continue
                edit = Edit(stmt.value.span, f"{unparse(grid.dims[0])} - 1 - program_id(0)")
                found.append(self.app("forward", kernel, stmt.span, self.title, {"program": name}, [edit], [check]))
        return found

    def inverse_sites(self, doc, kernel, facts) -> list[Application]:
        grid = next((s for s in kernel.body if isinstance(s, ast.Grid)), None)
        found = []
        for stmt in kernel.body:
            if grid is None or not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
                continue
            if unparse(stmt.value) == f"{unparse(grid.dims[0])} - 1 - program_id(0)":
                edit = Edit(stmt.value.span, "program_id(0)")
                title = "undo heaviest-first order (program_id(0) as launched)"
                found.append(self.app("inverse", kernel, stmt.span, title, {"program": stmt.targets[0].id}, [edit]))
        return found


__all__ = ["GroupedOrder", "HeavyFirst", "tune_values"]
