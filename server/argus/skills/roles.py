"""The role each `tile` constant plays in its kernel, whatever the author named it.

Tile-size cards are learned per role: `tile_size.BM.dot` is the rows of a dot's output tile, `BN` its columns,
`BK` the contraction step, and `tile_size.BN.row` the tile along a row. Experts name them so; users write
`BLOCK`, `BI`/`BO`/`BT` or `BLOCK_SIZE_M`. The roles come from what the constants do:

- a dot's accumulator `acc = zeros((X, Y), ...)` (updated as `acc += dot(a, b)` or `acc = dot(a, b, acc)`): X is
  BM and Y is BN;
- the step of a loop `for k in range(start, stop, Z)` whose body has a dot: Z is BK;
- in a kernel without a dot, the one tile constant some `arange(B)` takes is BN, the row tile (with several,
  which one walks the row is not known here, and none gets a role).
"""

from __future__ import annotations

from argus.dsl import ast
from argus.skills.facts import dot_in_loop, has_dot, walk


def tile_roles(kernel: ast.Kernel) -> dict[str, str]:
    """Tile constant name -> its role (BM, BN, BK), for the constants whose role the kernel shows."""
    tiles = set(tile_names(kernel))
    roles: dict[str, str] = {}
    accumulators = dot_accumulators(kernel)
    for node in walk(kernel.body):
        match node:
            case ast.Assign(targets=[ast.Name(id=name)], value=value) if name in accumulators:
                shape = zeros_shape(value)
                if shape is not None and len(shape) == 2:
                    for role, dim in zip(("BM", "BN"), shape, strict=True):
                        if dim in tiles:
                            roles.setdefault(dim, role)
            case ast.For() if has_dot(node.body):
                step = range_step(node)
                if step in tiles:
                    roles.setdefault(step, "BK")
    if not accumulators and not dot_in_loop(kernel):
        lengths = sorted(tiles & arange_lengths(kernel))
        if len(lengths) == 1:
            roles[lengths[0]] = "BN"
    return roles


def tile_names(kernel: ast.Kernel) -> list[str]:
    return [s.name for stmt in kernel.body if isinstance(stmt, ast.TileDecl) for s in stmt.settings]


def arange_lengths(kernel: ast.Kernel) -> set[str]:
    """Every name some `arange(X)` of the kernel takes, bound to a run or not."""
    found = set()
    for node in walk(kernel.body):
        match node:
            case ast.Call(func=ast.Name(id="arange"), args=[ast.Name(id=name), *_]):
                found.add(name)
    return found


def dot_accumulators(kernel: ast.Kernel) -> set[str]:
    """Names a dot accumulates into: `acc += dot(...)`, `acc = acc + dot(...)`, `acc = dot(a, b, acc)`."""
    found = set()
    for node in walk(kernel.body):
        match node:
            case ast.AugAssign(target=ast.Name(id=name), value=value) if has_dot(value):
                found.add(name)
            case ast.Assign(targets=[ast.Name(id=name)], value=value) if has_dot(value):
                names = {n.id for n in walk(value) if isinstance(n, ast.Name)}
                if name in names:
                    found.add(name)
    return found


def zeros_shape(expr) -> list[str] | None:
    """The names of `zeros((X, Y), dtype)`'s shape, where each is a name."""
    match expr:
        case ast.Call(func=ast.Name(id="zeros"), args=[ast.Tuple(elts=elts), *_]) if all(
            isinstance(e, ast.Name) for e in elts
        ):
            return [e.id for e in elts]
    return None


def range_step(loop: ast.For) -> str | None:
    match loop.iter:
        case ast.Call(func=ast.Name(id="range"), args=[_, _, ast.Name(id=step)]):
            return step
    return None


def constants_for(kernel: ast.Kernel, role: str) -> list[str]:
    """The tile constants a card learned for `role` applies to: the one named so, where the kernel has it (the
    names of the experts: attention's BN is its key block, which the roles above would call BK), else those in
    that role."""
    tiles = tile_names(kernel)
    if role in tiles:
        return [role]
    roles = tile_roles(kernel)
    return [name for name in tiles if roles.get(name) == role]
