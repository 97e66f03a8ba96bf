"""Transforms that change one `tile` or `policy` setting: pipelining depth, warps, tile sizes, TMA.

The inverse moves a setting to its plainest value the kernel's own `tune` list allows (so the rewritten
kernel still checks: a tune list must contain the default, AR409); the forward moves it one step up (or to
the value a skill card recorded, passed as `to`).

A kernel as a user first writes it often sets nothing: no `policy` line (Triton's defaults, 4 warps and 3
stages) and tile sizes without `tune` lists. The forward applies there too: a policy setting the kernel leaves
to the compiler is written out with its new value, and a tile constant with no tune list doubles, where every
load and store over a run of it is masked (so it is a tile size, not the extent of an axis such as a head
dimension). The inverse, which the lineage walks use, still moves only what the kernel sets.
"""

from __future__ import annotations

from dataclasses import dataclass

from argus.dsl import ast
from argus.dsl.resources import DEFAULT_NUM_STAGES, DEFAULT_NUM_WARPS, SHARED_MEMORY_LIMIT, kib
from argus.dsl.spans import Span
from argus.skills.facts import KernelFacts, walk
from argus.skills.provider import Edit
from argus.skills.transforms.base import Application, Check, Transform


def setting_node(kernel: ast.Kernel, name: str, decl_type: type) -> ast.Setting | None:
    for stmt in kernel.body:
        if isinstance(stmt, decl_type):
            for setting in stmt.settings:
                if setting.name == name:
                    return setting
    return None


def literal(setting: ast.Setting) -> int | float | None:
    value = setting.value
    return value.value if isinstance(value, ast.Int | ast.Float) else None


def tune_values(setting: ast.Setting) -> list[int | float]:
    if setting.tune is None:
        return []
    return [e.value for e in setting.tune.elts if isinstance(e, ast.Int | ast.Float)]


def in_tune(setting: ast.Setting, value) -> Check:
    tune = tune_values(setting)
    holds = not tune or value in tune
    return Check("in_tune_list", holds, "" if holds else f"{setting.name} = {value} is not in its tune list {tune}")


@dataclass(frozen=True)
class SettingTransform(Transform):
    """A numeric setting; subclasses say which, its plain value and its next step up."""

    setting: str = ""
    decl: type = ast.PolicyDecl
    plain: int = 1
    default: int | None = None  # what the compiler uses where the kernel does not set it; None: not a policy

    def up(self, value: int, setting: ast.Setting) -> int | None:
        return value + 1

    def down(self, value: int, setting: ast.Setting) -> int | None:
        tune = [v for v in tune_values(setting) if isinstance(v, int)]
        target = min(tune) if tune else self.plain
        return target if target < value else None

    def settings(self, kernel: ast.Kernel) -> list[ast.Setting]:
        node = setting_node(kernel, self.setting, self.decl)
        return [node] if node is not None else []

    def forward_settings(self, kernel: ast.Kernel) -> list[ast.Setting]:
        """The settings the forward may move: those the kernel sets (the inverse moves only these)."""
        return self.settings(kernel)

    def restoring(self, inverse: Application) -> dict:
        return {"setting": inverse.params["setting"], "to": inverse.params["from"]}

    def extra_checks(self, facts: KernelFacts, setting: ast.Setting, old: int, new: int) -> list[Check]:
        return []

    def sites(self, doc, kernel, facts, params) -> list[Application]:
        found = []
        if not self.settings(kernel) and self.default is not None:
            found += self.unset_sites(kernel, facts, params)
        for setting in self.forward_settings(kernel):
            if params.get("setting", setting.name) != setting.name:
                continue
            old = literal(setting)
            if old is None:
                continue
            new = params.get("to") or self.up(old, setting)
            if new is None or new == old:
                continue
            checks = [*self.extra_checks(facts, setting, old, new), in_tune(setting, new)]
            title = f"{self.title}: {setting.name} {old} → {new}"
            edit = Edit(setting.value.span, str(new))
            found.append(
                self.app(
                    "forward",
                    kernel,
                    setting.span,
                    title,
                    {"setting": setting.name, "from": old, "to": new},
                    [edit],
                    checks,
                )
            )
        return found

    def unset_sites(self, kernel: ast.Kernel, facts: KernelFacts, params: dict) -> list[Application]:
        """The policy setting the kernel leaves to the compiler, written out with its next value."""
        if params.get("setting", self.setting) != self.setting:
            return []
        old = self.default
        new = params.get("to") or self.up(old, None)
        if new is None or new == old:
            return []
        edit, anchor = policy_insertion(kernel, f"{self.setting} = {new}")
        title = f"{self.title}: {self.setting} {old} (the default) → {new}"
        checks = self.extra_checks(facts, None, old, new)
        params = {"setting": self.setting, "from": old, "to": new}
        return [self.app("forward", kernel, anchor, title, params, [edit], checks)]

    def inverse_sites(self, doc, kernel, facts) -> list[Application]:
        found = []
        for setting in self.settings(kernel):
            old = literal(setting)
            new = self.down(old, setting) if isinstance(old, int) else None
            if new is None:
                continue
            title = f"undo {self.title.lower()}: {setting.name} {old} → {new}"
            edit = Edit(setting.value.span, str(new))
            params = {"setting": setting.name, "from": old, "to": new}
            found.append(self.app("inverse", kernel, setting.span, title, params, [edit]))
        return found


def appended_setting(decl: ast.TileDecl | ast.PolicyDecl, setting_text: str) -> Edit:
    """The edit that adds `, setting_text` after the last setting of a `tile` or `policy` line."""
    last = decl.settings[-1].span
    return Edit(Span(last.end_line, last.end_col, last.end_line, last.end_col), f", {setting_text}")


def policy_insertion(kernel: ast.Kernel, setting_text: str) -> tuple[Edit, Span]:
    """The edit that adds `setting_text` to the kernel's `policy` line (a new line after its `tile` line, or
    first in its body, where it has none) and the span to anchor the action at."""
    policy = next((stmt for stmt in kernel.body if isinstance(stmt, ast.PolicyDecl)), None)
    if policy is not None:
        return appended_setting(policy, setting_text), policy.span
    tiles = [stmt for stmt in kernel.body if isinstance(stmt, ast.TileDecl)]
    first = kernel.body[0].span
    line = tiles[0].span.end_line + 1 if tiles else first.line
    indent = " " * first.col
    anchor = tiles[0].span if tiles else first
    return Edit(Span(line, 0, line, 0), f"{indent}policy {setting_text}\n"), anchor


def loop_has_dot(facts: KernelFacts) -> Check:
    return Check(
        "loop_has_dot", facts.dot_in_loop, "" if facts.dot_in_loop else f"`{facts.name}` has no loop with a dot"
    )


def fits(facts: KernelFacts, stages: int | None, overrides: dict | None = None) -> Check:
    needed = facts.shared_memory(stages, overrides)
    holds = needed is None or needed <= SHARED_MEMORY_LIMIT
    found = "" if holds else f"needs {kib(needed)} of shared memory; an sm_90 program has {kib(SHARED_MEMORY_LIMIT)}"
    return Check("fits_shared_memory", holds, found)


@dataclass(frozen=True)
class Pipelining(SettingTransform):
    name: str = "pipelining"
    title: str = "Software pipelining"
    intent: str = "keep the next stages' loads in flight while the tensor cores work on this one"
    anchor: str = (
        "`policy num_stages` (Triton's 3 where the kernel sets none) of a kernel whose loop feeds loaded tiles to a dot"
    )
    preconditions: tuple[str, ...] = (
        "loop_has_dot",
        "no_memory_carried_dependency",
        "fits_shared_memory",
        "in_tune_list",
        "still_checks",
    )
    setting: str = "num_stages"
    default: int | None = DEFAULT_NUM_STAGES

    def extra_checks(self, facts, setting, old, new) -> list[Check]:
        carried = sorted(facts.memory_carried)
        return [
            loop_has_dot(facts),
            Check(
                "no_memory_carried_dependency",
                not carried,
                f"{', '.join(carried)} is loaded and stored" if carried else "",
            ),
            fits(facts, new),
        ]


@dataclass(frozen=True)
class NumWarps(SettingTransform):
    name: str = "num_warps"
    title: str = "More warps"
    intent: str = "more warps per program: two warpgroups for a big wgmma tile, or more threads for a long row"
    anchor: str = "`policy num_warps` (Triton's 4 where the kernel sets none)"
    preconditions: tuple[str, ...] = ("in_tune_list", "still_checks")
    setting: str = "num_warps"
    plain: int = 4
    default: int | None = DEFAULT_NUM_WARPS

    def up(self, value, setting):
        """The next valid num_warps (a power of two up to 32): 4 → 8, and a stray 6 → 8, never 12."""
        return 1 << value.bit_length() if 0 < value < 32 else None


@dataclass(frozen=True)
class Tma(SettingTransform):
    name: str = "tma"
    title: str = "TMA descriptors"
    intent: str = "move the dot operand tiles with the copy engine (TMA) instead of per-thread loads"
    anchor: str = "`policy tma` (off where the kernel sets none) of a kernel whose loop loads tiles for a dot"
    preconditions: tuple[str, ...] = ("loop_has_dot", "loads_are_runs", "in_tune_list", "still_checks")
    setting: str = "tma"
    plain: int = 0
    default: int | None = 0

    def up(self, value, setting):
        return 1 if value == 0 else None

    def down(self, value, setting):
        return 0 if value == 1 else None

    def extra_checks(self, facts, setting, old, new) -> list[Check]:
        bad = non_run_loads(facts.source)
        return [
            loop_has_dot(facts),
            Check("loads_are_runs", not bad, f"the load at line {bad[0] + 1} gathers" if bad else ""),
        ]


def runs(kernel: ast.Kernel) -> dict[str, str]:
    """Names bound to a run `start + arange(B)` (or `arange(B)`), with B's text."""
    found = {}
    for node in walk(kernel.body):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            length = run_length(node.value)
            if length is not None:
                found[node.targets[0].id] = length
    return found


def run_length(expr) -> str | None:
    match expr:
        case ast.Call(func=ast.Name(id="arange"), args=[ast.Name(id=length)]):
            return length
        case ast.BinOp(op="+", right=right):
            return run_length(right)
    return None


def non_run_loads(kernel: ast.Kernel) -> list[int]:
    """Lines of loads inside loops with a dot whose indices are not all names (runs or scalars)."""
    lines = []
    for loop in (n for n in walk(kernel.body) if isinstance(n, ast.For)):
        for call in (n for n in walk(loop.body) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)):
            is_load = call.func.id == "load" and call.args and isinstance(call.args[0], ast.Subscript)
            if is_load and not all(
                isinstance(i, ast.Name | ast.Int) or is_scalar_expr(i) for i in call.args[0].indices
            ):
                lines.append(call.span.line)
    return lines


def is_scalar_expr(expr) -> bool:
    return isinstance(expr, ast.BinOp) and not any(isinstance(n, ast.Call) for n in walk(expr))


@dataclass(frozen=True)
class TileSize(SettingTransform):
    """A tile constant that is some run's length (`arange(B)`) and has a tune list: bigger tiles reuse each
    loaded byte for more FLOPs, at the price of registers and shared memory."""

    name: str = "tile_size"
    title: str = "Bigger tile"
    intent: str = "a bigger tile: each loaded byte feeds more FLOPs"
    anchor: str = "a `tile` constant that is a run length (`arange(B)`), with a tune list or masked wherever it indexes"
    preconditions: tuple[str, ...] = ("fits_shared_memory", "in_tune_list", "still_checks")
    decl: type = ast.TileDecl

    def settings(self, kernel):
        lengths = set(runs(kernel).values())
        found = []
        for stmt in kernel.body:
            if isinstance(stmt, ast.TileDecl):
                found += [s for s in stmt.settings if s.name in lengths and s.tune is not None]
        return found

    def forward_settings(self, kernel):
        """Also the tile constants without a tune list that are run lengths masked wherever they index."""
        lengths = set(runs(kernel).values())
        free = []
        for stmt in kernel.body:
            if isinstance(stmt, ast.TileDecl):
                free += [
                    s
                    for s in stmt.settings
                    if s.tune is None
                    and s.name in lengths
                    and isinstance(literal(s), int)
                    and masked_wherever_used(kernel, s.name)
                ]
        return self.settings(kernel) + free

    def up(self, value, setting):
        if setting is not None and setting.tune is None:
            return 2 * value if 2 * value <= FREE_TILE_LIMIT else None
        bigger = [v for v in tune_values(setting) if v > value]
        return min(bigger) if bigger else None

    def extra_checks(self, facts, setting, old, new) -> list[Check]:
        return [fits(facts, None, {setting.name: new})]


# A tile constant the kernel gives no tune list doubles up to this: the largest block the lineages measured (a
# 4096-wide row tile); past it the cards have nothing to say and Triton's 2^20-element block limit nears.
FREE_TILE_LIMIT = 4096


def tied_to(kernel: ast.Kernel, length: str) -> set[str]:
    """Names whose value depends on `arange(length)`, directly or through other such names."""
    assigns = [n for n in walk(kernel.body) if isinstance(n, ast.Assign)]
    tied: set[str] = set()
    changed = True
    while changed:
        changed = False
        for node in assigns:
            if any(t.id not in tied for t in node.targets) and depends(node.value, length, tied):
                tied |= {t.id for t in node.targets}
                changed = True
    return tied


def depends(expr, length: str, tied: set[str]) -> bool:
    for node in walk(expr):
        if isinstance(node, ast.Name) and node.id in tied:
            return True
        match node:
            case ast.Call(func=ast.Name(id="arange"), args=[ast.Name(id=name), *_]) if name == length:
                return True
    return False


def masked_wherever_used(kernel: ast.Kernel, length: str) -> bool:
    """Every load and store that indexes with a run of `length` has a mask that names one: the constant is a
    tile of an axis the kernel masks at its edge, so a bigger tile still reads and writes in bounds."""
    tied = tied_to(kernel, length)
    for call in (n for n in walk(kernel.body) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)):
        if call.func.id not in ("load", "store") or not call.args or not isinstance(call.args[0], ast.Subscript):
            continue
        if not any(depends(index, length, tied) for index in call.args[0].indices):
            continue
        mask = next((k.value for k in call.keywords if k.name == "mask"), None)
        if mask is None or not any(isinstance(n, ast.Name) and n.id in tied for n in walk(mask)):
            return False
    return True


def point(line: int, col: int) -> Span:
    return Span(line, col, line, col)


@dataclass(frozen=True)
class WarpSpecialize(Tma):
    """Triton's Hopper warp specialization of the main loop: producer warps issue the loads, consumer warps
    run the MMAs."""

    name: str = "warp_specialize"
    title: str = "Warp specialization"
    intent: str = "split the loop's warps into producers (loads) and consumers (MMA), so both run at once"
    anchor: str = "`policy warp_specialize` (off where the kernel sets none) of a kernel whose loop feeds a dot"
    preconditions: tuple[str, ...] = ("loop_has_dot", "in_tune_list", "still_checks")
    setting: str = "warp_specialize"

    def extra_checks(self, facts, setting, old, new) -> list[Check]:
        return [loop_has_dot(facts)]
