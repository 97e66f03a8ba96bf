"""Split-K: when a GEMM's output tiles are too few to fill the GPU and K is long, SPLIT_K programs share each
output tile, each summing an interleaved share of the K loop, and `atomic_add` combines their partial sums.

The forward rewrite, on a kernel whose one top-level loop sums dots into a zeros tile:

    tile ..., SPLIT_K = 8 tune [1, 4, 8, 16]           # appended to the first `tile` line
    grid (cdiv(M, BM), cdiv(N, BN), SPLIT_K)           # one more grid axis
    pk = program_id(2)                                 # after the last statement that reads a program id
    for k0 in range(pk * BK, K, SPLIT_K * BK):         # was range(0, K, BK)
    atomic_add(C[rm, rn], acc, mask=...)               # was store(...)

Split s runs iterations s, s + SPLIT_K, s + 2·SPLIT_K, ... of the original loop, so the splits partition the
iterations and the atomic adds sum every partial sum once; outputs written by `atomic_add` are zeroed before
the launch (docs/codegen.md), so the result is the unsplit sum up to the order of f32 additions. That holds
only for what is linear in the sum: the stored value may be the accumulator, sums of such terms and products
with values that do not depend on it; a bias added after the loop, an activation, a cast or any other store
would be applied once per split (`linear_epilogue`). The inverse folds the canonical form above back.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from argus.dsl import ast
from argus.dsl.check import check_source
from argus.dsl.evaluate import cdiv
from argus.dsl.spans import Span
from argus.dsl.unparse import unparse
from argus.skills.facts import walk
from argus.skills.provider import Edit
from argus.skills.text import whole_lines
from argus.skills.transforms.base import Application, Check, Transform, kernel_span_at
from argus.skills.transforms.order import used_names
from argus.skills.transforms.problem import described, profiled_sizes, value_at
from argus.skills.transforms.settings import setting_node

SMS = 132  # streaming multiprocessors of an H200: fewer output programs than this leave SMs idle
MIN_ITERATIONS = 4  # iterations each split must still run (the pipeline needs a few to overlap)
VERIFIED = ("AR301", "AR302", "AR303", "AR304", "AR312")  # bounds, races, coverage, unknown: new ones refuse


def is_call(expr, name: str) -> bool:
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == name


def names_in(node) -> set[str]:
    return {n.id for n in walk(node) if isinstance(n, ast.Name)}


def assigned_in(stmts) -> set[str]:
    found = set()
    for node in walk(stmts):
        if isinstance(node, ast.Assign):
            found |= {t.id for t in node.targets}
        elif isinstance(node, ast.AugAssign):
            found.add(node.target.id)
    return found


def dot_loops(kernel: ast.Kernel) -> list[ast.For]:
    return [s for s in kernel.body if isinstance(s, ast.For) and any(is_call(n, "dot") for n in walk(s.body))]


def loop_range(loop: ast.For) -> tuple[ast.Expr | None, ast.Expr, ast.Expr | None] | None:
    """(start, stop, step) of `range(...)`, None for a missing start or step; None for another iterator."""
    if not is_call(loop.iter, "range") or loop.iter.keywords:
        return None
    args = loop.iter.args
    if len(args) == 1:
        return None, args[0], None
    if len(args) in (2, 3):
        return args[0], args[1], args[2] if len(args) == 3 else None
    return None


def stores(stmts) -> list[ast.Call]:
    return [n for n in walk(stmts) if is_call(n, "store") or is_call(n, "atomic_add")]


def stored_value(call: ast.Call):
    if len(call.args) >= 2:
        return call.args[1]
    return next((k.value for k in call.keywords if k.name == "value"), None)


def target_tensor(call: ast.Call) -> str | None:
    target = call.args[0] if call.args else None
    if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
        return target.value.id
    return None


def accumulator_updates(loop: ast.For) -> tuple[list[str], dict[str, list]]:
    """The names a dot accumulates into in the loop (`acc = dot(a, b, acc)`, `acc += dot(a, b)`,
    `acc = acc + dot(a, b)`), and every statement of the loop that assigns each."""
    accs: list[str] = []
    for node in walk(loop.body):
        match node:
            case ast.Assign(targets=[ast.Name(id=acc)], value=ast.Call(func=ast.Name(id="dot"), args=[_, _, c])):
                if isinstance(c, ast.Name) and c.id == acc and acc not in accs:
                    accs.append(acc)
            case ast.AugAssign(target=ast.Name(id=acc), op="+", value=value) if is_call(value, "dot"):
                if acc not in accs:
                    accs.append(acc)
            case ast.Assign(targets=[ast.Name(id=acc)], value=ast.BinOp(op="+", left=ast.Name(id=left), right=r)):
                if left == acc and is_call(r, "dot") and acc not in accs:
                    accs.append(acc)
    updates: dict[str, list] = {acc: [] for acc in accs}
    for node in walk(loop.body):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and node.targets[0].id in updates:
            updates[node.targets[0].id].append(node)
        elif isinstance(node, ast.AugAssign) and node.target.id in updates:
            updates[node.target.id].append(node)
    return accs, updates


def is_sum_update(stmt, acc: str) -> bool:
    """`acc = dot(a, b, acc)`, `acc += E`, `acc -= E`, `acc = acc + E` with E free of acc."""
    match stmt:
        case ast.Assign(value=ast.Call(func=ast.Name(id="dot"), args=[a, b, ast.Name(id=c)], keywords=kws)):
            return c == acc and acc not in names_in([a, b, *[k.value for k in kws]])
        case ast.AugAssign(op="+" | "-", value=value):
            return acc not in names_in(value)
        case ast.Assign(value=ast.BinOp(op="+" | "-", left=ast.Name(id=left), right=right)):
            return left == acc and acc not in names_in(right)
    return False


def zeros_init(kernel: ast.Kernel, loop: ast.For, acc: str) -> ast.Call | None:
    """The `acc = zeros(shape, dtype)` at the top level before the loop, when that is how acc starts."""
    init = None
    for stmt in kernel.body:
        if stmt is loop:
            break
        if isinstance(stmt, ast.Assign) and [t.id for t in stmt.targets] == [acc]:
            init = stmt.value if is_call(stmt.value, "zeros") else None
        elif acc in assigned_in([stmt]):
            init = None
    return init


def zeros_dtype(call: ast.Call) -> str:
    dtype = call.args[1] if len(call.args) >= 2 else next((k.value for k in call.keywords if k.name == "dtype"), None)
    return dtype.id if isinstance(dtype, ast.Name) else "f32"


def reduction_problem(kernel: ast.Kernel, loop: ast.For, accs: list[str], updates: dict[str, list]) -> str:
    """Why the loop is not a plain sum over its iterations into zeros tiles ("" when it is)."""
    if not accs:
        return f"line {loop.span.line + 1}: the loop's dot accumulates into no named tile"
    form = loop_range(loop)
    if form is None:
        return f"line {loop.span.line + 1}: `{unparse(loop.iter)}` is not `range(0, K, BK)`"
    start = form[0]
    if start is not None and not (isinstance(start, ast.Int) and start.value == 0):
        return f"line {loop.span.line + 1}: the loop starts at `{unparse(start)}`, not 0"
    for acc in accs:
        if zeros_init(kernel, loop, acc) is None:
            return f"`{acc}` does not start as `zeros(...)` before the loop: each split would add its start value"
        for stmt in updates[acc]:
            if not is_sum_update(stmt, acc):
                return (
                    f"line {stmt.span.line + 1}: `{unparse_stmt(stmt)}` is not a sum over the iterations: a split "
                    "does not see the other splits' iterations"
                )
    before = set()
    for stmt in kernel.body:
        if stmt is loop:
            break
        before |= assigned_in([stmt])
    carried = sorted((assigned_in(loop.body) & before) - set(accs))
    if carried:
        return f"the loop carries `{carried[0]}` besides the sum: a split does not see the other splits' iterations"
    after = kernel.body[kernel.body.index(loop) + 1 :]
    leaked = sorted((assigned_in(loop.body) | {loop.var.id}) - set(accs) & names_in(after))
    if leaked:
        return f"`{leaked[0]}` is read after the loop: a split's last iteration is not the loop's"
    inside = [s for s in stores(loop.body)] + [s for s in stores(kernel.body[: kernel.body.index(loop)])]
    if inside:
        return f"line {inside[0].span.line + 1}: a store outside the epilogue would be written by every split"
    return ""


def unparse_stmt(stmt) -> str:
    if isinstance(stmt, ast.AugAssign):
        return f"{stmt.target.id} {stmt.op}= {unparse(stmt.value)}"
    if isinstance(stmt, ast.Assign):
        return f"{', '.join(t.id for t in stmt.targets)} = {unparse(stmt.value)}"
    return unparse(getattr(stmt, "expr", stmt))


def linear_form(expr, linear: set[str], bad: dict[str, str]) -> tuple[str, str]:
    """("free", "") when the expression does not depend on the sum, ("linear", "") when it is linear in it,
    ("bad", why) otherwise."""
    used = names_in(expr)
    tainted = sorted(used & set(bad))
    if tainted:
        return "bad", bad[tainted[0]]
    if not used & linear:
        return "free", ""
    match expr:
        case ast.Name():
            return "linear", ""
        case ast.UnaryOp(op="-" | "+", operand=operand):
            return linear_form(operand, linear, bad)
        case ast.BinOp(op="+" | "-" as op, left=left, right=right):
            kinds = [linear_form(side, linear, bad) for side in (left, right)]
            for kind, why in kinds:
                if kind == "bad":
                    return kind, why
            if all(kind == "linear" for kind, _ in kinds):
                return "linear", ""
            term = left if kinds[0][0] == "free" else right
            verb = "subtract" if op == "-" and term is right else "add"
            return "bad", (
                f"`{unparse(term)}` does not scale with the sum: each split would {verb} it, SPLIT_K times in all"
            )
        case ast.BinOp(op="*" | "/" as op, left=left, right=right):
            kinds = [linear_form(side, linear, bad) for side in (left, right)]
            for kind, why in kinds:
                if kind == "bad":
                    return kind, why
            if op == "*" and sorted(kind for kind, _ in kinds) == ["free", "linear"]:
                return "linear", ""
            if op == "/" and [kind for kind, _ in kinds] == ["linear", "free"]:
                return "linear", ""
            return "bad", f"`{unparse(expr)}` is not linear in the sum"
        case ast.Call(func=ast.Attribute(attr="to", value=value), args=[dtype]):
            if isinstance(dtype, ast.Name) and dtype.id == "f32":
                return linear_form(value, linear, bad)
            return "bad", f"`{unparse(expr)}` rounds each split's partial sum, not the sum"
        case ast.Subscript(value=value, indices=indices) if all(
            isinstance(i, ast.FullSlice | ast.NoneLit) for i in indices
        ):
            return linear_form(value, linear, bad)
        case ast.Call(func=ast.Name(id=fn)):
            return "bad", f"`{unparse(expr)}`: {fn} of a partial sum is not a part of {fn} of the sum"
    return "bad", f"`{unparse(expr)}` is not linear in the sum"


@dataclass
class Epilogue:
    outputs: list[ast.Call]  # the stores (or atomic adds) of the sum after the loop
    problem: str = ""  # why the stored value is not linear in the sum ("" when it is)
    derived: set[str] | None = None  # names that depend on the sum after the loop


def epilogue(kernel: ast.Kernel, loop: ast.For, accs: list[str]) -> Epilogue:
    linear, bad = set(accs), {}
    outputs: list[ast.Call] = []
    problem = ""
    for stmt in kernel.body[kernel.body.index(loop) + 1 :]:
        line = f"line {stmt.span.line + 1}: "
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            name = stmt.targets[0].id
            kind, why = linear_form(stmt.value, linear, bad)
            linear.discard(name)
            bad.pop(name, None)
            if kind == "linear":
                linear.add(name)
            elif kind == "bad":
                bad[name] = why if why.startswith("line ") else line + why
        elif isinstance(stmt, ast.AugAssign):
            name = stmt.target.id
            as_binop = ast.BinOp(stmt.op, ast.Name(name, stmt.target.span), stmt.value, stmt.span)
            kind, why = linear_form(as_binop, linear, bad)
            if kind == "bad":
                linear.discard(name)
                bad[name] = why if why.startswith("line ") else line + why
            elif kind == "linear":
                linear.add(name)
        elif isinstance(stmt, ast.ExprStmt) and (is_call(stmt.expr, "store") or is_call(stmt.expr, "atomic_add")):
            value = stored_value(stmt.expr)
            kind, why = linear_form(value, linear, bad) if value is not None else ("free", "")
            if kind != "free" or names_in(value) & (linear | set(bad)):
                outputs.append(stmt.expr)
            if kind == "bad" and not problem:
                problem = why if why.startswith("line ") else line + why
            elif kind == "free" and not problem:
                tensor = target_tensor(stmt.expr) or "a tensor"
                problem = f"{line}the store into `{tensor}` does not depend on the sum: every split would write it"
        elif (names_in(stmt) & (linear | set(bad)) or stores([stmt])) and not problem:
            problem = f"{line}the sum is used under control flow after the loop"
    if not outputs and not problem:
        problem = "the sum is never stored after the loop"
    return Epilogue(outputs, problem, linear | set(bad))


def f32_problem(kernel: ast.Kernel, loop: ast.For, accs: list[str], outputs: list[ast.Call]) -> str:
    for acc in accs:
        init = zeros_init(kernel, loop, acc)
        if init is not None and zeros_dtype(init) != "f32":
            return f"`{acc}` accumulates in {zeros_dtype(init)}, not f32"
    params = {p.name: p for p in kernel.params}
    for call in outputs:
        tensor = target_tensor(call)
        param = params.get(tensor or "")
        if param is None or param.dtype.id != "f32":
            dtype = param.dtype.id if param is not None else "?"
            return (
                f"`{tensor}` is {dtype}: the splits combine with atomic_add in the output's dtype, which must be f32 "
                "(a 16-bit output would round every partial sum)"
            )
    return ""


def program_statement(kernel: ast.Kernel, loop: ast.For) -> int | None:
    """Index in the body of the last top-level statement before the loop that reads a program id."""
    found = None
    for i, stmt in enumerate(kernel.body[: kernel.body.index(loop)]):
        if any(is_call(n, "program_id") for n in walk(stmt)):
            found = i
    return found


def grid_of(kernel: ast.Kernel) -> ast.Grid | None:
    return next((s for s in kernel.body if isinstance(s, ast.Grid)), None)


def choose_splits(programs: int, iterations: int) -> int:
    """The smallest power of two that fills the SMs, at most one that leaves each split MIN_ITERATIONS."""
    splits = 2
    while programs * splits < SMS and iterations // (splits * 2) >= MIN_ITERATIONS:
        splits *= 2
    return splits


def tune_list(splits: int, iterations: int | None) -> str:
    values = sorted({1, max(splits // 2, 1), splits, splits * 2})
    if iterations is not None:
        values = [v for v in values if v <= splits or iterations // v >= MIN_ITERATIONS]
    return "[" + ", ".join(str(v) for v in values) + "]"


def verified(doc, kernel: ast.Kernel, app: Application) -> Application:
    """`verifies`: the verifier finds no new out-of-bounds access, race, uncovered output or unknown in the
    split kernel (the splits add one more program id to every obligation)."""
    if not app.applicable:
        return app
    from argus.verify import verify_check  # the verifier loads z3: only for a site that passed everything else

    def codes(check) -> list:
        spans = kernel_span_at(check, kernel.span.line) or kernel_span_at(check, app.anchor.line)
        if not spans:
            return []
        first, last = spans[0].span.line, spans[0].span.end_line
        return [
            d
            for d in verify_check(check, timeout_ms=1000).diagnostics
            if d.code in VERIFIED and first <= d.range.start.line <= last
        ]

    before = [d.code for d in codes(doc.check)]
    new = []
    for d in codes(check_source(app.result(doc.text))):
        if d.code in before:
            before.remove(d.code)
        else:
            new.append(d)
    found = f"the split kernel does not verify: {new[0].code} {new[0].message.splitlines()[0]}" if new else ""
    return replace(app, checks=(*app.checks, Check("verifies", not new, found)))


@dataclass(frozen=True)
class SplitK(Transform):
    name: str = "split_k"
    title: str = "Split-K"
    intent: str = (
        "more programs for a GEMM whose output tiles are too few to fill the GPU: SPLIT_K programs share each "
        "output tile, each summing every SPLIT_K-th step of the K loop, combined by atomic_add into an f32 output"
    )
    anchor: str = (
        "a top-level `for k0 in range(0, K, BK)` that sums dots into a zeros tile, in a kernel with a grid of one "
        "or two axes"
    )
    preconditions: tuple[str, ...] = (
        "loop_has_dot",
        "reduction_loop",
        "f32_output",
        "linear_epilogue",
        "small_output_grid",
        "name_free",
        "still_checks",
        "verifies",
    )

    def forward(self, doc, params=None, where=None) -> list[Application]:
        apps = super().forward(doc, params, where)
        return [verified(doc, next(k for k in doc.kernels() if k.name == a.kernel), a) for a in apps]

    def restoring(self, inverse: Application) -> dict:
        return dict(inverse.params)

    def sites(self, doc, kernel, facts, params) -> list[Application]:
        loops = dot_loops(kernel)
        if not loops:
            return []
        loop = loops[0]
        grid = grid_of(kernel)
        ids_at = program_statement(kernel, loop)
        tiles = [s for s in kernel.body if isinstance(s, ast.TileDecl)]
        form = loop_range(loop)
        if grid is None or ids_at is None or not tiles or form is None or not 1 <= len(grid.dims) <= 2:
            return []  # no grid axis left, or nothing to anchor the edits to
        name = str(params.get("name", "SPLIT_K"))
        program = str(params.get("program", "pk"))
        after = str(params.get("after", tiles[0].settings[-1].name))
        after_node = setting_node(kernel, after, ast.TileDecl)
        if after_node is None:
            return []

        accs, updates = accumulator_updates(loop)
        reduction = reduction_problem(kernel, loop, accs, updates)
        ending = epilogue(kernel, loop, accs) if accs else Epilogue([], "")
        wide = f32_problem(kernel, loop, accs, ending.outputs) if not reduction else ""
        checks = [
            Check("loop_has_dot", True),
            Check("reduction_loop", not reduction, reduction),
            Check("f32_output", not wide, wide),
            Check("linear_epilogue", not ending.problem, ending.problem),
        ]

        # how many programs the grid has at the profiled sizes, and how many iterations the K loop runs
        start, stop, step = form
        sized = profiled_sizes(doc, kernel)
        programs = iterations = None
        if sized is None:
            small = "the kernel declares no `sizes` to judge its grid by"
        else:
            set_name, sizes = sized
            dims = [value_at(d, facts, sizes) for d in grid.dims]
            stop_value = value_at(stop, facts, sizes)
            step_value = value_at(step, facts, sizes) if step is not None else 1
            small = ""
            if any(not isinstance(d, int) for d in dims):
                small = f"the grid `{unparse_grid(grid)}` has no value at the {set_name} sizes ({described(sizes)})"
            elif not isinstance(stop_value, int) or not isinstance(step_value, int) or step_value <= 0:
                small = f"the K loop's trip count has no value at the {set_name} sizes ({described(sizes)})"
            else:
                programs = 1
                for d in dims:
                    programs *= d
                iterations = cdiv(stop_value, step_value)
                at = f"at the {set_name} sizes ({described(sizes)})"
                if programs >= SMS:
                    small = f"{programs} programs {at} already fill the {SMS} SMs of an H200"
                elif iterations < 2 * MIN_ITERATIONS:
                    small = (
                        f"the K loop runs {iterations} iterations {at}: two splits would leave fewer than "
                        f"{MIN_ITERATIONS} each"
                    )
        splits = int(params.get("splits") or choose_splits(programs or 1, iterations or 0))
        if not small and iterations is not None and iterations // splits < MIN_ITERATIONS:
            small = f"{splits} splits of {iterations} iterations leave fewer than {MIN_ITERATIONS} each"
        checks.append(Check("small_output_grid", not small, small))
        taken = sorted(used_names(kernel) & {name, program})
        checks.append(Check("name_free", not taken, f"{', '.join(taken)} already used" if taken else ""))

        tune = str(params["tune"]) if "tune" in params else tune_list(splits, iterations)
        edits = [
            insert_after(after_node.span, f", {name} = {splits}" + (f" tune {tune}" if tune else "")),
            grid_insert(doc, grid, name),
            line_after(kernel.body[ids_at], f"{program} = program_id({len(grid.dims)})"),
            *range_edits(doc, loop, start, stop, step, name, program),
            *[Edit(call.func.span, "atomic_add") for call in ending.outputs if is_call(call, "store")],
        ]
        title = f"Split-K: {name} = {splits} programs share each output tile's K loop (atomic_add into f32)"
        params_out = {"splits": splits, "tune": tune, "name": name, "program": program, "after": after}
        return [self.app("forward", kernel, loop.span, title, params_out, edits, checks)]

    def inverse_sites(self, doc, kernel, facts) -> list[Application]:
        grid = grid_of(kernel)
        if grid is None or len(grid.dims) < 2 or not isinstance(grid.dims[-1], ast.Name):
            return []
        name = grid.dims[-1].id
        setting = setting_node(kernel, name, ast.TileDecl)
        if setting is None or not isinstance(setting.value, ast.Int):
            return []
        decl = next(s for s in kernel.body if isinstance(s, ast.TileDecl) and setting in s.settings)
        tiles = [s for s in kernel.body if isinstance(s, ast.TileDecl)]
        index = decl.settings.index(setting)
        if decl is not tiles[0] or index == 0:
            return []  # not where the forward puts it
        axis = len(grid.dims) - 1
        loops = dot_loops(kernel)
        if not loops:
            return []
        loop = loops[0]
        at = next(
            (
                i
                for i, s in enumerate(kernel.body)
                if isinstance(s, ast.Assign)
                and len(s.targets) == 1
                and unparse(s.value) == f"program_id({axis})"
                and doc.source(whole_lines(s.span)).strip() == f"{s.targets[0].id} = program_id({axis})"
            ),
            None,
        )
        if at is None or at == 0 or at > kernel.body.index(loop):
            return []
        program = kernel.body[at].targets[0].id
        reads_id = any(is_call(n, "program_id") for n in walk(kernel.body[at - 1]))
        if program_statement(kernel, loop) != at or not reads_id:
            return []  # not right after the statement that reads the other program ids, where the forward puts it
        form = loop_range(loop)
        if form is None or form[0] is None:
            return []
        start, _, step = form
        restored = restored_range(doc, start, step, name, program)
        if restored is None:
            return []
        uses = [n.id for n in walk(kernel.body) if isinstance(n, ast.Name)]
        if uses.count(name) != 2 or uses.count(program) != 2:
            return []  # the split count or program id is used elsewhere: not the form this inverse knows
        accs, _ = accumulator_updates(loop)
        ending = epilogue(kernel, loop, accs)
        previous = decl.settings[index - 1]
        edits = [
            Edit(Span(previous.span.end_line, previous.span.end_col, setting.span.end_line, setting.span.end_col), ""),
            Edit(grid_removal(doc, grid), ""),
            Edit(whole_lines(kernel.body[at].span), ""),
            *restored,
            *[Edit(call.func.span, "store") for call in ending.outputs if is_call(call, "atomic_add")],
        ]
        tune = doc.source(setting.tune.span) if setting.tune is not None else ""
        params = {
            "splits": setting.value.value,
            "tune": tune,
            "name": name,
            "program": program,
            "after": previous.name,
        }
        title = f"undo split-K: one program per output tile runs the whole K loop ({name} = {setting.value.value})"
        return [self.app("inverse", kernel, loop.span, title, params, edits)]


def unparse_grid(grid: ast.Grid) -> str:
    return "(" + ", ".join(unparse(d) for d in grid.dims) + ("," if len(grid.dims) == 1 else "") + ")"


def insert_after(span: Span, text: str) -> Edit:
    return Edit(Span(span.end_line, span.end_col, span.end_line, span.end_col), text)


def grid_insert(doc, grid: ast.Grid, name: str) -> Edit:
    """`, NAME` after the last grid dimension; ` NAME` after a one-axis grid's trailing comma."""
    last = grid.dims[-1].span
    rest = doc.source(Span(last.end_line, last.end_col, grid.span.end_line, grid.span.end_col))
    if rest.lstrip().startswith(","):
        comma = last.end_col + rest.index(",") + 1
        return Edit(Span(last.end_line, comma, last.end_line, comma), f" {name}")
    return insert_after(last, f", {name}")


def grid_removal(doc, grid: ast.Grid) -> Span:
    """What the inverse deletes: `, NAME`, or ` NAME` after the comma that a one-axis grid keeps."""
    previous, dim = grid.dims[-2].span, grid.dims[-1].span
    span = Span(previous.end_line, previous.end_col, dim.end_line, dim.end_col)
    if len(grid.dims) == 2:
        comma = doc.source(span).index(",") + 1
        return Span(previous.end_line, previous.end_col + comma, dim.end_line, dim.end_col)
    return span


def line_after(stmt, text: str) -> Edit:
    """A new line with `text` after the statement's last line, at its indentation."""
    at = stmt.span.end_line + 1
    return Edit(Span(at, 0, at, 0), " " * stmt.span.col + text + "\n")


def parenthesized(doc, expr) -> str:
    text = doc.source(expr.span)
    return f"({text})" if isinstance(expr, ast.BinOp | ast.UnaryOp) else text


def range_edits(doc, loop: ast.For, start, stop, step, name: str, program: str) -> list[Edit]:
    if start is None:  # range(K): written out in full
        return [Edit(loop.iter.span, f"range({program}, {doc.source(stop.span)}, {name})")]
    if step is None:
        return [Edit(start.span, program), insert_after(stop.span, f", {name}")]
    step_text = parenthesized(doc, step)
    return [Edit(start.span, f"{program} * {step_text}"), Edit(step.span, f"{name} * {step_text}")]


def restored_range(doc, start, step, name: str, program: str) -> list[Edit] | None:
    """The edits that take `range(pk * S, K, SPLIT_K * S)` back to `range(0, K, S)` and `range(pk, K, SPLIT_K)`
    back to `range(0, K)`; None for any other range."""
    match start, step:
        case ast.Name(id=p), ast.Name(id=n) if p == program and n == name:
            stop_end = Span(start.span.line, start.span.col, step.span.end_line, step.span.end_col)
            text = doc.source(stop_end)
            body = text[len(program) : text.rindex(",")]
            return [Edit(stop_end, "0" + body)]
        case ast.BinOp(op="*", left=ast.Name(id=p), right=s1), ast.BinOp(op="*", left=ast.Name(id=n), right=s2):
            if p == program and n == name and unparse(s1) == unparse(s2):
                inner = doc.source(s2.span)
                return [Edit(start.span, "0"), Edit(step.span, inner)]
    return None
