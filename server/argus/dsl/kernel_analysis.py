"""Analysis of one kernel: names, dtypes, shapes, declarations; lowers the body to the tile IR."""

from __future__ import annotations

import difflib

from argus.dsl import ast, ir
from argus.dsl.builtins import BUILTINS, CONSTANTS, DTYPES, METHODS
from argus.dsl.calls import TYPE_RULES
from argus.dsl.calls.math_functions import power
from argus.dsl.calls.memory import tensor_access
from argus.dsl.declarations import (
    check_policy,
    declare_layouts,
    declare_params,
    declare_settings,
    lower_grid,
    lower_requires,
)
from argus.dsl.diagnostics import Diagnostic, make
from argus.dsl.evaluate import COMPARE, binary, unary
from argus.dsl.scope import ERROR, Binding, Scope, SymbolUse, V
from argus.dsl.shapes import broadcast, result_dtype, true_division_dtype
from argus.dsl.spans import Span
from argus.dsl.types import (
    BOOL,
    F32,
    I32,
    I64,
    Dim,
    DTypeT,
    ErrorT,
    NoneT,
    ScalarT,
    StrT,
    TensorT,
    TileT,
    TupleT,
    is_weak,
    shape_of,
    shape_text,
)
from argus.dsl.types import (
    DTYPES as DTYPE_TABLE,
)

DECLARATIONS = (ast.TileDecl, ast.PolicyDecl, ast.LayoutDecl, ast.Requires, ast.Grid)
BITWISE = {"&", "|", "^", "<<", ">>"}


def python_literal(value) -> str:
    """A constant as Python source: `float("inf")` where repr would give a bare name."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return f'float("{value}")'
    return repr(value)


def constant_text(value) -> str:
    """A tile constant's value as Argus writes it: `128`, `"tf32x3"`."""
    return f'"{value}"' if isinstance(value, str) else str(value)


def runtime_type(type_):
    return ScalarT(type_.dtype) if isinstance(type_, ScalarT) else type_


class KernelAnalyzer:
    """The analysis of one kernel: its state (scope, the IR block being filled, diagnostics, symbols, constants,
    sizes) and the walk over its declarations, statements and expressions. A call of a built-in goes to the
    built-in's type rule, a function in argus.dsl.calls.TYPE_RULES that takes this analyzer."""

    def __init__(
        self,
        kernel: ast.Kernel,
        diagnostics: list[Diagnostic],
        symbols: list[SymbolUse],
        overrides: dict[str, int | float] | None = None,
    ):
        self.kernel = kernel
        self.overrides = overrides or {}  # tile constant -> a value from its tune list (the verifier checks each)
        self.diagnostics = diagnostics
        self.symbols = symbols
        self.next_id = 0
        self.block = ir.Block()
        self.scope = Scope()
        self.constants: dict[str, ir.Constant] = {}
        self.policy: dict[str, ir.Constant] = {}
        self.sizes: dict[str, ir.Value] = {}
        self.size_spans: dict[str, Span] = {}
        self.params: list[ir.ParamIR] = []
        self.layouts: dict[str, int] = {}  # tensor parameter -> its axis declared contiguous (`layout B: K`)
        self.grid_rank: int | None = None
        self.in_assertion = False
        self.in_requires = False  # data facts such as partition(T, n) are allowed only in `requires`
        self.written: set[str] = set()
        self.atomics: dict[str, tuple[str, Span]] = {}  # tensor -> the first atomic that writes it (AR220)

    # ---- reporting and IR emission -------------------------------------------------------------
    def error(self, code: str, span: Span, message: str, **data) -> V:
        self.diagnostics.append(make(code, span, message, **data))
        return ERROR

    def warn(self, code: str, span: Span, message: str, **data) -> None:
        self.diagnostics.append(make(code, span, message, **data))

    def new_value(self, type_, name: str | None = None) -> ir.Value:
        self.next_id += 1
        return ir.Value(self.next_id, type_, name)

    def emit(self, kind: str, operands: list[ir.Value], type_, span: Span, **attrs) -> ir.Value | None:
        results = [] if type_ is None else [self.new_value(type_)]
        op = ir.Op(kind, list(operands), results, span, attrs)
        for result in results:
            result.op = op
        self.block.ops.append(op)
        return results[0] if results else None

    def constant(self, value, type_: ScalarT, span: Span, expr: str | None = None) -> V:
        """A folded constant. `expr` is the tile-constant expression it came from (`BM`, `(2 * BN)`), kept so
        that generated code names the constant and a tuned value flows through; None for plain literals."""
        attrs = {"value": value} if expr is None else {"value": value, "expr": expr}
        return V(type_, self.emit("const", [], type_, span, **attrs), span=span)

    @staticmethod
    def constant_expr(v: V) -> str | None:
        op = v.value.op if v.value is not None else None
        return op.attrs.get("expr") if op is not None and op.kind == "const" else None

    def folded_expr(self, op: str, *parts: V) -> str | None:
        """The tile-constant expression of a folded operation, or None when no operand involves a constant."""
        texts = [self.constant_expr(part) for part in parts]
        if all(text is None for text in texts):
            return None
        texts = [python_literal(part.const) if text is None else text for text, part in zip(texts, parts, strict=True)]
        if len(texts) == 1:
            return f"({op} {texts[0]})" if op == "not" else f"({op}{texts[0]})"
        return f"({texts[0]} {op} {texts[1]})"

    # ---- the kernel ---------------------------------------------------------------------------------
    def run(self) -> ir.KernelIR:
        top = self.kernel.body
        for stmt in ast.walk_stmts(top):
            if isinstance(stmt, DECLARATIONS) and stmt not in top:
                kind = type(stmt).__name__.lower().replace("decl", "")
                self.error("AR407", stmt.span, f"`{kind}` belongs at the top level of the kernel body")
        for stmt in top:
            if isinstance(stmt, ast.TileDecl):
                declare_settings(self, stmt.settings, self.constants, "tile constant")
            elif isinstance(stmt, ast.PolicyDecl):
                declare_settings(self, stmt.settings, self.policy, "policy setting")
        check_policy(self)
        declare_params(self)
        declare_layouts(self, [s for s in top if isinstance(s, ast.LayoutDecl)])
        launch = self.block
        requires = lower_requires(self, [s for s in top if isinstance(s, ast.Requires)])
        grid = lower_grid(self, [s for s in top if isinstance(s, ast.Grid)])
        self.block = ir.Block()
        self.statements([s for s in top if not isinstance(s, DECLARATIONS)], loop_start=False)
        body = self.block
        for param in self.params:
            if isinstance(param.type, TensorT) and param.type.out and param.name not in self.written:
                if param.type.inout:
                    message = f"in/out `{param.name}` is never written by a store or atomic_add; if the kernel only "
                    self.warn("AR408", param.span, message + "reads it, drop `inout`")
                else:
                    self.warn("AR408", param.span, f"output `{param.name}` is never written by a store or atomic_add")
        return ir.KernelIR(
            self.kernel.name,
            self.params,
            self.sizes,
            self.constants,
            self.policy,
            launch,
            requires,
            grid,
            body,
            self.kernel.span,
            self.layouts,
        )

    # ---- statements -----------------------------------------------------------------------------
    def statements(self, stmts: list[ast.Stmt], loop_start: bool) -> None:
        for stmt in stmts:
            if isinstance(stmt, ast.Invariant):
                if not loop_start:
                    self.error("AR407", stmt.span, "`invariant` goes at the start of a loop body")
                    continue
                self.assertion("invariant", stmt.condition, stmt.span)
                continue
            if not isinstance(stmt, ast.Pass | ast.ErrorStmt):
                loop_start = False
            try:
                self.statement(stmt)
            except RecursionError:
                self.error("AR216", stmt.span, "expression nested too deeply")

    def statement(self, stmt: ast.Stmt) -> None:
        match stmt:
            case ast.Assign():
                self.assign(stmt)
            case ast.AugAssign():
                binding = self.scope.lookup(stmt.target.id)
                if binding is None:
                    self.undefined(stmt.target)
                    return
                current = self.name(stmt.target)
                value = self.binary(stmt.op, current, self.expr(stmt.value), stmt.span)
                self.bind(stmt.target, value)
            case ast.ExprStmt(expr=expr):
                self.expr(expr, statement=True)
            case ast.For():
                self.for_loop(stmt)
            case ast.If():
                self.if_statement(stmt)
            case ast.ErrorStmt():
                for name in [*stmt.names, *self.assigned_names(stmt.body)]:
                    self.define_unknown(name, stmt.span)
            case ast.Pass():
                pass

    def define_unknown(self, name: str, span: Span) -> None:
        """A name a broken statement seems to assign: defined, of unknown type. It also settles a name an `if`
        left defined on only some branches, since the broken statement may be the clause that defines it
        (`else if:` for `else:`)."""
        existing = self.scope.names.get(name)
        if existing is None or existing.kind == "unavailable":
            self.scope.names[name] = Binding("variable", ERROR, span)

    def assign(self, stmt: ast.Assign) -> None:
        if len(stmt.targets) == 1:
            v = self.expr(stmt.value)
            if isinstance(v.type, TupleT) and not is_mask_tuple(v):
                message = (
                    "a tuple cannot be stored in one name, unless it is a per-axis mask (booleans and None); "
                    "unpack it: `a, b = ...`"
                )
                self.error("AR216", stmt.value.span, message)
                v = ERROR
            self.bind(stmt.targets[0], self.as_value(v, stmt.value.span))
            return
        if isinstance(stmt.value, ast.Tuple):
            values = [self.expr(e) for e in stmt.value.elts]
        else:
            v = self.expr(stmt.value)
            values = v.elts if v.elts is not None else None
            if values is None:
                if not isinstance(v.type, ErrorT):
                    self.error("AR216", stmt.value.span, f"cannot unpack {v.type} into {len(stmt.targets)} names")
                values = [ERROR] * len(stmt.targets)
        if len(values) != len(stmt.targets):
            self.error("AR207", stmt.span, f"{len(stmt.targets)} names but {len(values)} values")
            values = (values + [ERROR] * len(stmt.targets))[: len(stmt.targets)]
        for target, value in zip(stmt.targets, values, strict=True):
            self.bind(target, self.as_value(value, stmt.value.span))

    def as_value(self, v: V, span: Span) -> V:
        """Only scalars and tiles can live in variables, and per-axis mask tuples (`mask = (rm < M, rn < N)`),
        which only `mask=` takes."""
        if isinstance(v.type, ScalarT | TileT | ErrorT) or is_mask_tuple(v):
            return v
        return self.error("AR216", span, f"a variable holds a scalar or a tile, not {self.describe(v)}")

    def bind(self, target: ast.Name, v: V) -> None:
        existing = self.scope.lookup(target.id)
        if existing is not None and existing.kind in ("param", "size", "constant"):
            self.error("AR109", target.span, f"cannot assign to {existing.kind} `{target.id}`")
            return
        if existing is not None and existing.kind == "loop":
            self.error("AR109", target.span, f"cannot assign to loop variable `{target.id}`")
            return
        if target.id in self.constants or target.id in DTYPES or target.id in BUILTINS or target.id in CONSTANTS:
            self.error("AR109", target.span, f"cannot assign to `{target.id}`: it names a builtin or constant")
            return
        if v.value is not None and v.value.name is None:
            v.value.name = target.id
        for axis, entry in enumerate(v.elts or []):  # a mask tuple's entries, in the generated code: mask_0, ...
            if entry.value is not None and entry.value.name is None:
                entry.value.name = f"{target.id}_{axis}"
        self.scope.names[target.id] = Binding("variable", v, target.span)
        self.symbols.append(SymbolUse(target.span, target.id, "variable", str(v.type), target.span))

    def assigned_names(self, stmts: list[ast.Stmt]) -> list[str]:
        names: list[str] = []
        for stmt in ast.walk_stmts(stmts):
            found: list[str] = []
            if isinstance(stmt, ast.Assign):
                found = [t.id for t in stmt.targets]
            elif isinstance(stmt, ast.AugAssign):
                found = [stmt.target.id]
            elif isinstance(stmt, ast.ErrorStmt):
                found = stmt.names
            elif isinstance(stmt, ast.ExprStmt) and self.is_tag_call(stmt.expr):
                found = [stmt.expr.args[0].id]
            for name in found:
                if name not in names:
                    names.append(name)
        return names

    @staticmethod
    def is_tag_call(expr: ast.Expr) -> bool:
        return (
            isinstance(expr, ast.Call)
            and isinstance(expr.func, ast.Name)
            and expr.func.id == "tag"
            and bool(expr.args)
            and isinstance(expr.args[0], ast.Name)
        )

    def for_loop(self, stmt: ast.For) -> None:
        bounds, static = self.loop_bounds(stmt.iter)
        outer = self.scope
        carried = [
            name
            for name in self.assigned_names(stmt.body)
            if (b := outer.lookup(name)) is not None and b.kind == "variable" and name != stmt.var.id
        ]
        masks = [name for name in carried if is_mask_tuple(outer.lookup(name).v)]
        carried = [name for name in carried if name not in masks]  # a mask tuple is no value a loop can carry
        inits = [outer.lookup(name).v for name in carried]
        body = ir.Block()
        induction = self.new_value(ScalarT(I32), stmt.var.id)
        body.args.append(induction)
        scope = outer.child()
        scope.names[stmt.var.id] = Binding("loop", V(ScalarT(I32), induction), stmt.var.span)
        self.symbols.append(SymbolUse(stmt.var.span, stmt.var.id, "loop", "i32 loop index", stmt.var.span))
        # A carried value changes from one iteration to the next: it is not the constant it started as.
        inits = [V(runtime_type(init.type), init.value, span=init.span) for init in inits]
        for name, init in zip(carried, inits, strict=True):
            arg = self.new_value(init.type, name)
            body.args.append(arg)
            scope.names[name] = Binding("variable", V(init.type, arg), outer.lookup(name).span)
        saved_block = self.block
        self.block, self.scope = body, scope
        self.statements(stmt.body, loop_start=True)
        for name in masks:
            self.error(
                "AR216",
                (scope.names.get(name) or outer.lookup(name)).span,
                f"`{name}` names a per-axis mask made before the loop; a mask tuple cannot change from one "
                "iteration to the next: give the loop's mask a name of its own",
            )
        yields, assigned = [], []
        for name, init in zip(carried, inits, strict=True):
            final = scope.names[name]
            if not self.same_type(final.v, init):
                self.error(
                    "AR209",
                    final.span,
                    f"`{name}` is {init.type} before the loop but {final.v.type} after an iteration; "
                    "a loop-carried value keeps its dtype and shape",
                )
            yields.append(final.v.value)
            assigned.append(final.span)  # where the body last binds it: what a message about its next value names
        body.yields = [y for y in yields if y is not None]
        body.yield_spans = [s for y, s in zip(yields, assigned, strict=True) if y is not None]
        self.block, self.scope = saved_block, outer
        results = [self.new_value(init.type, name) for name, init in zip(carried, inits, strict=True)]
        operands = [b for b in bounds if b is not None] + [i.value for i in inits if i.value is not None]
        op = ir.Op("for", operands, results, stmt.span, {"var": stmt.var.id, "static": static, "carried": carried})
        op.regions.append(body)
        for result in results:
            result.op = op
        self.block.ops.append(op)
        for name, result, init in zip(carried, results, inits, strict=True):
            outer.names[name] = Binding("variable", V(init.type, result), outer.lookup(name).span)
        for name, binding in scope.names.items():
            if name not in carried and name != stmt.var.id and outer.lookup(name) is None:
                note = f"`{name}` is defined only inside the loop at line {binding.span.line + 1}"
                outer.names[name] = Binding("unavailable", ERROR, binding.span, note)

    def loop_bounds(self, iterable: ast.Expr) -> tuple[list[ir.Value | None], bool]:
        if not (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name)) or iterable.func.id not in (
            "range",
            "static_range",
        ):
            self.error("AR216", iterable.span, "a loop runs over range(...) or static_range(...)")
            return [None, None, None], False
        static = iterable.func.id == "static_range"
        self.symbols.append(
            SymbolUse(iterable.func.span, iterable.func.id, "builtin", BUILTINS[iterable.func.id].signature, None)
        )
        if iterable.keywords or not 1 <= len(iterable.args) <= 3:
            self.error("AR207", iterable.span, f"{iterable.func.id} takes 1 to 3 positional arguments")
            return [None, None, None], static
        values = [self.expr(a) for a in iterable.args]
        for arg, v in zip(iterable.args, values, strict=True):
            if isinstance(v.type, ErrorT):
                continue
            if not isinstance(v.type, ScalarT) or not v.type.dtype.is_integer:
                self.error("AR204", arg.span, f"loop bounds are integer scalars, not {self.describe(v)}")
            elif static and v.type.const is None:
                self.error("AR206", arg.span, "static_range bounds must be compile-time constants")
            elif isinstance(v.type.const, int) and arg is iterable.args[-1] and len(values) == 3 and v.const == 0:
                self.error("AR218", arg.span, "a loop step cannot be zero")
        if len(values) == 1:
            values = [self.constant(0, ScalarT(I32, 0, True), iterable.span), values[0]]
        if len(values) == 2:
            values.append(self.constant(1, ScalarT(I32, 1, True), iterable.span))
        return [v.value for v in values], static

    def if_statement(self, stmt: ast.If) -> None:
        cond = self.expr(stmt.condition)
        if isinstance(cond.type, TileT):
            self.error("AR210", stmt.condition.span, f"`if` needs a scalar condition, not {cond.type}; use where()")
        elif not isinstance(cond.type, ScalarT | ErrorT):
            self.error("AR210", stmt.condition.span, f"`if` needs a scalar condition, not {self.describe(cond)}")
        outer = self.scope
        saved_block = self.block
        branches = []
        for body in (stmt.body, stmt.orelse):
            block, scope = ir.Block(), outer.child()
            self.block, self.scope = block, scope
            self.statements(body, loop_start=False)
            branches.append((block, scope))
        self.block, self.scope = saved_block, outer
        names = self.assigned_names(stmt.body + stmt.orelse)
        merged, results = [], []
        for name in names:
            before = outer.lookup(name)
            sides = [scope.names.get(name) or before for _, scope in branches]
            if all(side is None for side in sides):
                continue  # an assignment that failed (`x += 1` with no x): already reported
            if any(side is None or side.kind == "unavailable" for side in sides):
                span = next(side.span for side in sides if side is not None)
                note = f"`{name}` is defined on only one branch of the `if` at line {stmt.span.line + 1}"
                outer.names[name] = Binding("unavailable", ERROR, span, note)
                continue
            then_v, else_v = sides[0].v, sides[1].v
            if is_mask_tuple(then_v) or is_mask_tuple(else_v):
                span = next(scope.names[name].span for _, scope in branches if name in scope.names)
                note = (
                    f"`{name}` names a per-axis mask assigned on a branch of the `if` at line {stmt.span.line + 1}; "
                    "a mask tuple is not merged across branches: name it before the `if`, or use it on its branch"
                )
                outer.names[name] = Binding("unavailable", ERROR, span, note)
                continue
            if not self.same_type(then_v, else_v):
                assigned = [scope.names[name].span for _, scope in branches if name in scope.names]
                self.error(
                    "AR209",
                    assigned[-1],
                    f"`{name}` is {then_v.type} on one branch and {else_v.type} on the other",
                )
                outer.names[name] = Binding("variable", ERROR, sides[0].span)
                continue
            merged.append(name)
            results.append((then_v, else_v, sides[0].span))
        for (block, _), index in ((branches[0], 0), (branches[1], 1)):
            block.yields = [pair[index].value for pair in results if pair[index].value is not None]
        merged_types = [
            then_v.type if then_v.type == else_v.type else runtime_type(then_v.type) for then_v, else_v, _ in results
        ]
        values = [self.new_value(t, name) for name, t in zip(merged, merged_types, strict=True)]
        operands = [cond.value] if cond.value is not None else []
        op = ir.Op("if", operands, values, stmt.span, {"names": merged})
        op.regions = [branches[0][0], branches[1][0]]
        for value in values:
            value.op = op
        self.block.ops.append(op)
        for name, value, (_, _, span) in zip(merged, values, results, strict=True):
            outer.names[name] = Binding("variable", V(value.type, value), span)

    @staticmethod
    def same_type(a: V, b: V) -> bool:
        if isinstance(a.type, ErrorT) or isinstance(b.type, ErrorT):
            return True
        if isinstance(a.type, ScalarT) and isinstance(b.type, ScalarT):
            return a.type.dtype == b.type.dtype
        if isinstance(a.type, TileT) and isinstance(b.type, TileT):
            same_shape = tuple(d.value for d in a.type.shape) == tuple(d.value for d in b.type.shape)
            return a.type.dtype == b.type.dtype and same_shape
        return False

    def assertion(self, kind: str, condition: ast.Expr, span: Span) -> None:
        self.in_assertion = True
        try:
            v = self.expr(condition)
        finally:
            self.in_assertion = False
        if isinstance(v.type, ErrorT):
            return
        if not isinstance(v.type, ScalarT | TileT) or v.type.dtype != BOOL:
            self.error("AR204", condition.span, f"{kind} needs a condition, not {self.describe(v)}")
            return
        self.emit(kind, [v.value], None, span)

    # ---- expressions ----------------------------------------------------------------------------
    def expr(self, e: ast.Expr, statement: bool = False) -> V:
        match e:
            case ast.Name():
                return self.name(e)
            case ast.Int(value=value):
                dtype = I32 if -(2**31) <= value < 2**31 else I64
                return self.constant(value, ScalarT(dtype, value, True), e.span)
            case ast.Float(value=value):
                return self.constant(value, ScalarT(F32, value, True), e.span)
            case ast.Bool(value=value):
                return self.constant(value, ScalarT(BOOL, value, True), e.span)
            case ast.Str(value=value):
                return V(StrT(value), span=e.span)
            case ast.NoneLit():
                return V(NoneT(), span=e.span)
            case ast.BinOp(op=op, left=left, right=right):
                return self.binary(op, self.expr(left), self.expr(right), e.span)
            case ast.UnaryOp():
                return self.unary(e)
            case ast.Compare(op=op, left=left, right=right):
                return self.compare(op, self.expr(left), self.expr(right), e.span)
            case ast.BoolOp():
                return self.bool_op(e)
            case ast.Call():
                return self.call(e, statement)
            case ast.Attribute():
                return self.attribute(e)
            case ast.Subscript():
                return self.subscript(e)
            case ast.Tuple(elts=elts) | ast.List(elts=elts):
                values = [self.expr(x) for x in elts]
                return V(TupleT(tuple(v.type for v in values)), elts=values, span=e.span)
        return self.error("AR216", e.span, "this expression cannot be used here")

    def call(self, e: ast.Call, statement: bool = False) -> V:
        if isinstance(e.func, ast.Attribute):
            return self.method(e)
        if not isinstance(e.func, ast.Name):
            return self.error("AR103", e.func.span, "only builtins and methods can be called")
        name = e.func.id
        if name not in BUILTINS:
            binding = self.scope.lookup(name)
            if binding is not None:
                return self.error("AR103", e.func.span, f"`{name}` is a {binding.kind}, not a function")
            close = difflib.get_close_matches(name, sorted(BUILTINS), n=1)
            hint = f"; did you mean `{close[0]}`?" if close else ""
            return self.error("AR103", e.func.span, f"unknown function `{name}`{hint}", name=name)
        self.symbols.append(SymbolUse(e.func.span, name, "builtin", BUILTINS[name].signature, None))
        return TYPE_RULES[name](self, e, name)

    def method(self, e: ast.Call) -> V:
        func = e.func
        if func.attr not in METHODS:
            return self.error("AR103", func.attr_span, f"unknown method `.{func.attr}`; tiles have `.to(dtype)`")
        return TYPE_RULES[func.attr](self, e, func.attr)

    def name(self, e: ast.Name) -> V:
        binding = self.scope.lookup(e.id)
        if binding is not None:
            if binding.kind == "unavailable":
                return self.error("AR110", e.span, binding.note, name=e.id)
            self.symbols.append(SymbolUse(e.span, e.id, binding.kind, str(binding.v.type), binding.span))
            return V(binding.v.type, binding.v.value, elts=binding.v.elts, span=e.span)
        if e.id in self.constants:
            constant = self.constants[e.id]
            value = constant.value
            if isinstance(value, str):
                self.symbols.append(SymbolUse(e.span, e.id, "constant", f'str = "{value}"', constant.span))
                return V(StrT(value, e.id), span=e.span)
            dtype = I32 if isinstance(value, int) else F32
            self.symbols.append(SymbolUse(e.span, e.id, "constant", f"{dtype} = {value}", constant.span))
            return self.constant(value, ScalarT(dtype, value, True), e.span, expr=e.id)
        if e.id in DTYPE_TABLE:
            self.symbols.append(SymbolUse(e.span, e.id, "dtype", DTYPES[e.id], None))
            return V(DTypeT(DTYPE_TABLE[e.id]), span=e.span)
        if e.id in CONSTANTS:
            value = float(e.id)
            return self.constant(value, ScalarT(F32, value, True), e.span)
        if e.id in BUILTINS:
            return self.error("AR216", e.span, f"`{e.id}` is a function; call it: {BUILTINS[e.id].signature}")
        return self.undefined(e)

    def undefined(self, e: ast.Name) -> V:
        known = self.scope.all_names() | self.constants.keys() | DTYPES.keys() | BUILTINS.keys()
        close = difflib.get_close_matches(e.id, sorted(known), n=1)
        hint = f"; did you mean `{close[0]}`?" if close else ""
        return self.error("AR101", e.span, f"`{e.id}` is not defined{hint}", name=e.id)

    def describe(self, v: V) -> str:
        if isinstance(v.type, TensorT) and not v.type.shape:
            return f"the tensor itself ({v.type}); load its one element: load({v.value.name or 'T'})"
        if isinstance(v.type, TensorT):
            return f"the tensor itself ({v.type}); index it and load: load(T[i, j])"
        if isinstance(v.type, StrT) and v.type.constant:
            return f'the string tile constant `{v.type.constant}` (= "{v.type.value}", a dot input precision)'
        if isinstance(v.type, StrT):
            return f"the string {v.type}"
        if is_mask_tuple(v):
            return f"the per-axis mask {v.type}, which only mask= of load, store and atomic_add takes"
        return str(v.type)

    def require_value(self, v: V, span: Span) -> bool:
        """A scalar or tile; anything else gets one error here and poisons the result."""
        if isinstance(v.type, ScalarT | TileT):
            return True
        if isinstance(v.type, StrT):
            where = "only dot(..., input_precision=...) takes a string"
            self.error("AR204", span, f"expected a number or a tile, found {self.describe(v)}; {where}")
        elif not isinstance(v.type, ErrorT):
            self.error("AR216", span, f"expected a scalar or a tile, found {self.describe(v)}")
        return False

    def broadcast_or_error(self, a: V, b: V, span: Span, what: str):
        shape = broadcast(shape_of(a.type), shape_of(b.type))
        if shape is None:
            self.error(
                "AR201",
                span,
                f"{what}: shapes {shape_text(shape_of(a.type))} and {shape_text(shape_of(b.type))} do not broadcast",
                left=[d.value for d in shape_of(a.type)],
                right=[d.value for d in shape_of(b.type)],
            )
        return shape

    def make_type(self, dtype, shape, const=None, weak=False):
        if shape:
            return TileT(dtype, shape)
        return ScalarT(dtype, const, weak)

    def binary(self, op: str, a: V, b: V, span: Span) -> V:
        if not (self.require_value(a, a.span or span) & self.require_value(b, b.span or span)):
            return ERROR
        shape = self.broadcast_or_error(a, b, span, f"operands of `{op}`")
        if shape is None:
            return ERROR
        da, db = a.type.dtype, b.type.dtype
        weak_a, weak_b = is_weak(a.type), is_weak(b.type)
        if op in BITWISE and (da.is_float or db.is_float):
            return self.error("AR204", span, f"`{op}` works on integers and booleans, not {da} and {db}")
        dtype = result_dtype(da, weak_a, db, weak_b)
        if op == "/":
            dtype = true_division_dtype(dtype)
        const = None
        if a.const is not None and b.const is not None:
            const = binary(op, a.const, b.const)
            if op == "/" and const is not None:
                const = float(const)
        if op == "**" and const is None:
            return power(self, a, b, dtype, shape, span)  # on tiles and runtime scalars (math_functions)
        result_type = self.make_type(dtype, shape, const, weak_a and weak_b)
        if const is not None:
            return self.constant(const, result_type, span, self.folded_expr(op, a, b))
        return V(result_type, self.emit("binary", [a.value, b.value], result_type, span, op=op), span=span)

    def compare(self, op: str, a: V, b: V, span: Span) -> V:
        if not (self.require_value(a, a.span or span) & self.require_value(b, b.span or span)):
            return ERROR
        shape = self.broadcast_or_error(a, b, span, f"operands of `{op}`")
        if shape is None:
            return ERROR
        if a.const is not None and b.const is not None:
            value = COMPARE[op](a.const, b.const)
            return self.constant(value, ScalarT(BOOL, value), span, self.folded_expr(op, a, b))
        result_type = self.make_type(BOOL, shape)
        return V(result_type, self.emit("compare", [a.value, b.value], result_type, span, op=op), span=span)

    def unary(self, e: ast.UnaryOp) -> V:
        v = self.expr(e.operand)
        if not self.require_value(v, e.operand.span):
            return ERROR
        dtype = v.type.dtype
        if e.op == "~" and dtype.is_float:
            return self.error("AR204", e.span, f"`~` works on integers and booleans, not {dtype}")
        if e.op == "not":
            if isinstance(v.type, TileT):
                return self.error("AR210", e.span, "`not` takes a scalar; for a tile write `~mask`")
            dtype = BOOL
        if v.const is not None:
            value = unary(e.op, v.const)
            return self.constant(value, ScalarT(dtype, value, v.type.weak), e.span, self.folded_expr(e.op, v))
        result_type = self.make_type(dtype, shape_of(v.type))
        return V(result_type, self.emit("unary", [v.value], result_type, e.span, op=e.op), span=e.span)

    def bool_op(self, e: ast.BoolOp) -> V:
        a, b = self.expr(e.left), self.expr(e.right)
        for v, part in ((a, e.left), (b, e.right)):
            if isinstance(v.type, TileT):
                symbol = "&" if e.op == "and" else "|"
                return self.error("AR210", part.span, f"`{e.op}` takes scalars; for tiles write `{symbol}`")
        if not (self.require_value(a, e.left.span) & self.require_value(b, e.right.span)):
            return ERROR
        if a.const is not None and b.const is not None:
            value = bool(a.const and b.const) if e.op == "and" else bool(a.const or b.const)
            return self.constant(value, ScalarT(BOOL, value), e.span, self.folded_expr(e.op, a, b))
        result_type = ScalarT(BOOL)
        op = "&" if e.op == "and" else "|"
        left, right = self.to_bool(a, e.left.span), self.to_bool(b, e.right.span)
        return V(result_type, self.emit("binary", [left, right], result_type, e.span, op=op), span=e.span)

    def to_bool(self, v: V, span: Span) -> ir.Value:
        if v.type.dtype == BOOL:
            return v.value
        return self.emit("cast", [v.value], ScalarT(BOOL), span, dtype=BOOL)

    def attribute(self, e: ast.Attribute) -> V:
        v = self.expr(e.value)
        if isinstance(v.type, ErrorT):
            return ERROR
        if self.in_assertion and isinstance(v.type, ScalarT | TileT):
            result_type = ScalarT(I32)
            return V(result_type, self.emit("tag_read", [v.value], result_type, e.span, name=e.attr), span=e.span)
        if e.attr == "T":
            return self.error("AR216", e.span, "write trans(x) to transpose a tile")
        return self.error(
            "AR216", e.span, f"`.{e.attr}` reads a tag and is allowed only inside assert_tag(...) and invariant"
        )

    def subscript(self, e: ast.Subscript) -> V:
        v = self.expr(e.value)
        if isinstance(v.type, ErrorT):
            return ERROR
        if isinstance(v.type, TensorT):
            return tensor_access(self, e, v)
        if not isinstance(v.type, TileT | ScalarT):
            return self.error("AR208", e.span, f"{self.describe(v)} cannot be indexed")
        shape = list(shape_of(v.type))
        axes, position = [], 0
        for index in e.indices:
            if isinstance(index, ast.NoneLit):
                axes.append(position)
                position += 1
            elif isinstance(index, ast.FullSlice):
                position += 1
            else:
                return self.error(
                    "AR208",
                    index.span,
                    "tiles take only `:` and `None` in brackets (to add axes); load from a tensor to gather",
                )
        if position - len(axes) != len(shape):
            return self.error(
                "AR213", e.span, f"the tile has {len(shape)} axes but the brackets name {position - len(axes)}"
            )
        new_shape = list(shape)
        for axis in axes:
            new_shape.insert(axis, Dim(1))
        result_type = TileT(v.type.dtype, tuple(new_shape))
        if not axes:
            return v
        return V(result_type, self.emit("expand_dims", [v.value], result_type, e.span, axes=axes), span=e.span)


def is_mask_tuple(v: V) -> bool:
    """A tuple of booleans (scalars or tiles) and Nones: a per-axis mask, which a name may hold for `mask=`."""
    if not isinstance(v.type, TupleT) or v.elts is None or not v.elts:
        return False
    return all(
        isinstance(e.type, NoneT) or (isinstance(e.type, ScalarT | TileT) and e.type.dtype == BOOL) for e in v.elts
    )
