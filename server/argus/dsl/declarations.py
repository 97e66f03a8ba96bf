"""The declarations of a kernel, analyzed before its body: tile constants and policy settings (with their tune
lists), parameters and the size names their shapes introduce, layouts, `requires` and the grid. Functions over
the kernel's analyzer (argus.dsl.kernel_analysis.KernelAnalyzer), whose tables they fill."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from argus.dsl import ast, ir
from argus.dsl.builtins import BUILTINS, DTYPES, INPUT_PRECISIONS, LOOP_FLAGS, POLICY_SETTINGS
from argus.dsl.evaluate import evaluate
from argus.dsl.scope import ERROR, Binding, SymbolUse, V
from argus.dsl.shapes import is_power_of_two
from argus.dsl.spans import Span
from argus.dsl.types import BOOL, I32, ErrorT, ScalarT, SizeExpr, TensorT
from argus.dsl.types import DTYPES as DTYPE_TABLE
from argus.dsl.unparse import unparse

if TYPE_CHECKING:
    from argus.dsl.kernel_analysis import KernelAnalyzer


def precision_choices() -> str:
    return ", ".join(f'"{p}"' for p in INPUT_PRECISIONS)


def constant_values(an: KernelAnalyzer) -> dict[str, int | float]:
    return {name: c.value for name, c in an.constants.items()}


def declare_settings(an: KernelAnalyzer, settings: list[ast.Setting], table: dict[str, ir.Constant], what: str) -> None:
    for setting in settings:
        env = constant_values(an)
        value = evaluate(setting.value, env)
        if setting.name in table or (table is an.constants and setting.name in DTYPES | BUILTINS):
            an.error("AR102", setting.name_span, f"{what} `{setting.name}` is already defined")
            continue
        if table is an.constants and isinstance(setting.value, ast.Str):
            declare_string_constant(an, setting)
            continue
        if value is None or isinstance(value, bool):
            string = string_constant_in(an, setting.value)
            if string is not None:
                message = f"{what} `{setting.name}` needs a number, and {string_constant_words(an, string.id)}"
                an.error("AR204", string.span, message)
            else:
                an.error("AR206", setting.value.span, f"{what} `{setting.name}` needs a compile-time number")
            continue
        tune = tune_list(an, setting, env, value)
        if table is an.constants and setting.name in an.overrides:
            value = an.overrides[setting.name]
        table[setting.name] = ir.Constant(setting.name, value, tune, setting.span)
        kind = "constant" if table is an.constants else "policy"
        an.symbols.append(SymbolUse(setting.name_span, setting.name, kind, f"= {value}", setting.name_span))


def declare_string_constant(an: KernelAnalyzer, setting: ast.Setting) -> None:
    """`tile PREC = "tf32x3" tune ["ieee", "tf32x3", "tf32"]`: a string constant names a dot input precision.
    A bad value is still declared (its diagnostic is here), so that its uses raise nothing more."""
    value = setting.value.value
    check_precision_value(an, value, setting.value.span)
    tune: list = []
    if setting.tune is not None:
        for element in setting.tune.elts:
            if not isinstance(element, ast.Str):
                message = f"`{setting.name}` is a string, so its tune values are strings too: quote each one"
                an.error("AR409", element.span, message)
                tune = []
                break
            check_precision_value(an, element.value, element.span)
            tune.append(element.value)
        else:
            if not tune:
                an.error("AR409", setting.tune.span, "a tune list needs at least one value")
            elif value not in tune:
                an.error("AR409", setting.tune.span, f'the tune list must contain the default value "{value}"')
    if setting.name in an.overrides:
        value = an.overrides[setting.name]
    an.constants[setting.name] = ir.Constant(setting.name, value, tune, setting.span)
    an.symbols.append(SymbolUse(setting.name_span, setting.name, "constant", f'= "{value}"', setting.name_span))


def check_precision_value(an: KernelAnalyzer, value: str, span: Span) -> None:
    if value not in INPUT_PRECISIONS:
        message = f'a string tile constant names a dot input precision: one of {precision_choices()}, not "{value}"'
        an.error("AR218", span, message)


def string_constant_in(an: KernelAnalyzer, expr: ast.Expr) -> ast.Name | None:
    """The first name in an expression that is a string tile constant."""
    match expr:
        case ast.Name(id=name):
            return expr if isinstance(getattr(an.constants.get(name), "value", None), str) else None
        case ast.UnaryOp(operand=operand):
            return string_constant_in(an, operand)
        case ast.BinOp(left=left, right=right) | ast.Compare(left=left, right=right):
            return string_constant_in(an, left) or string_constant_in(an, right)
        case ast.BoolOp(left=left, right=right):
            return string_constant_in(an, left) or string_constant_in(an, right)
        case ast.Call(args=args):
            return next((found for a in args if (found := string_constant_in(an, a)) is not None), None)
    return None


def string_constant_words(an: KernelAnalyzer, name: str) -> str:
    value = an.constants[name].value
    return f'`{name}` is a string tile constant (= "{value}", a dot input precision), not a number'


def tune_list(
    an: KernelAnalyzer, setting: ast.Setting, env: dict[str, int | float], default: int | float
) -> list[int | float]:
    if setting.tune is None:
        return []
    values = []
    for element in setting.tune.elts:
        if isinstance(element, ast.Str):
            message = f"`{setting.name}` is a number, so its tune values are numbers too, not strings"
            an.error("AR409", element.span, message)
            return []
        value = evaluate(element, env)
        if value is None or isinstance(value, bool):
            an.error("AR409", element.span, "tune values must be compile-time numbers")
            return []
        values.append(value)
    if not values:
        an.error("AR409", setting.tune.span, "a tune list needs at least one value")
    elif default not in values:
        an.error("AR409", setting.tune.span, f"the tune list must contain the default value {default}")
    return values


def check_policy(an: KernelAnalyzer) -> None:
    for name, setting in an.policy.items():
        if name not in POLICY_SETTINGS:
            known = ", ".join(POLICY_SETTINGS)
            an.error("AR403", setting.span, f"unknown policy setting `{name}`; known: {known}")
            continue
        for value in [setting.value, *setting.tune]:
            if name in LOOP_FLAGS or name == "tma":
                if value not in (0, 1) or isinstance(value, bool):
                    an.error("AR403", setting.span, f"{name} must be 0 or 1, not {value}")
            elif name == "epilogue_warps":
                # 4 beside 8 MMA warps leaves ptxas 168 registers a thread, enough for a 128 x 256 accumulator
                if value not in (0, 4) or isinstance(value, bool):
                    an.error("AR403", setting.span, f"epilogue_warps must be 0 or 4, not {value}")
            elif not isinstance(value, int) or value < 1:
                an.error("AR403", setting.span, f"`{name}` must be a positive integer, not {value}")
            elif name == "num_warps" and (not is_power_of_two(value) or value > 32):
                an.error("AR403", setting.span, f"num_warps must be 1, 2, 4, 8, 16 or 32, not {value}")
            elif name == "num_ctas" and value not in (1, 2, 4):
                an.error("AR403", setting.span, f"num_ctas must be 1, 2 or 4, not {value}")


def declare_params(an: KernelAnalyzer) -> None:
    for name in an.kernel.broken_params:
        an.scope.names.setdefault(name, Binding("param", ERROR, an.kernel.name_span))
    for param in an.kernel.params:
        if an.scope.lookup(param.name) or param.name in an.constants:
            an.error("AR102", param.name_span, f"parameter `{param.name}` is already defined")
            continue
        dtype = DTYPE_TABLE.get(param.dtype.id)
        if dtype is None:
            an.error("AR104", param.dtype.span, unknown_dtype_message(param.dtype.id))
            an.scope.names[param.name] = Binding("param", ERROR, param.name_span)
            continue
        an.symbols.append(SymbolUse(param.dtype.span, param.dtype.id, "dtype", DTYPES[dtype.name], None))
        if param.shape is None:
            type_ = ScalarT(dtype)
            if param.is_out:
                word = param.mode
                an.error("AR216", param.span, f"only tensors can be `{word}`; give `{word}` parameters a shape")
            if param.view is not None and param.view_span is not None:
                an.error("AR221", param.view_span, f"`{param.name}` is a scalar: only a tensor parameter has a view")
            default = None
            if param.default is not None:
                default = evaluate(param.default, constant_values(an))
                if default is None:
                    an.error("AR206", param.default.span, "a parameter default must be a constant")
        else:
            dims = tuple(dimension(an, d) for d in param.shape)
            stored = tuple(d for d in dims if d is not None)
            type_ = TensorT(dtype, stored, param.is_out, param.is_inout)
            if None in dims:
                type_ = ErrorT()
            elif param.view is not None:
                view = view_shape(an, param, stored)
                type_ = ErrorT() if view is None else TensorT(dtype, view, param.is_out, param.is_inout, stored)
            default = None
            if param.default is not None:
                an.error("AR216", param.default.span, "tensor parameters cannot have a default")
        value = an.new_value(type_, param.name)
        an.params.append(ir.ParamIR(param.name, type_, value, param.span, default, param.is_out, param.is_inout))
        an.scope.names[param.name] = Binding("param", V(type_, value), param.name_span)
        an.symbols.append(SymbolUse(param.name_span, param.name, "param", str(type_), param.name_span))


def declare_layouts(an: KernelAnalyzer, decls: list[ast.LayoutDecl]) -> None:
    """`layout B: K`: B's axis named K has stride 1. Only the generated code and its launcher read it (the
    verifier reasons on logical indices, which a layout does not change)."""
    params = {p.name: p for p in an.params}
    for decl in decls:
        name, axis = decl.tensor.id, decl.axis.id
        param = params.get(name)
        if param is None or not isinstance(param.type, TensorT):
            tensors = [p.name for p in an.params if isinstance(p.type, TensorT) and not p.is_out]
            what = "a scalar parameter" if param is not None else "not a parameter"
            close = difflib.get_close_matches(name, tensors, n=1)
            hint = f"; did you mean `{close[0]}`?" if close else ""
            message = f"`layout` names a tensor parameter; `{name}` is {what}{hint}"
            an.error("AR411", decl.tensor.span, message)
            continue
        an.symbols.append(SymbolUse(decl.tensor.span, name, "param", str(param.type), param.span))
        if param.is_out:
            what = "an in/out tensor" if param.is_inout else "an output"
            message = f"`{name}` is {what}: the launcher would copy it and the kernel's writes would be lost"
            an.error("AR411", decl.tensor.span, message)
            continue
        if name in an.layouts:
            an.error("AR411", decl.span, f"`{name}` already has a layout")
            continue
        axes = [a for a, dim in enumerate(param.type.shape) if axis in (dim.symbol, dim.label)]
        dims = ", ".join(str(d) for d in param.type.shape)
        if len(axes) != 1:
            why = "is not an axis of" if not axes else "names more than one axis of"
            an.error("AR411", decl.axis.span, f"`{axis}` {why} `{name}` ({param.type.dtype}[{dims}])")
            continue
        an.layouts[name] = axes[0]
        if axis in an.sizes:
            an.symbols.append(SymbolUse(decl.axis.span, axis, "size", "i32 problem size", an.size_spans[axis]))
        elif axis in an.constants:
            an.symbols.append(SymbolUse(decl.axis.span, axis, "constant", "", an.constants[axis].span))


def unknown_dtype_message(name: str) -> str:
    close = difflib.get_close_matches(name, sorted(DTYPES), n=1, cutoff=0.4)
    hint = f"; did you mean `{close[0]}`?" if close else ""
    return f"unknown dtype `{name}`{hint} (dtypes: {', '.join(DTYPES)})"


def dimension(an: KernelAnalyzer, expr: ast.Expr) -> SizeExpr | None:
    match expr:
        case ast.Int(value=value) if value > 0:
            return SizeExpr(None, value)
        case ast.Name(id=name):
            if name in an.constants:
                if isinstance(an.constants[name].value, str):
                    message = f"a tensor dimension is a number; {string_constant_words(an, name)}"
                    an.error("AR204", expr.span, message)
                    return None
                an.symbols.append(SymbolUse(expr.span, name, "constant", "", an.constants[name].span))
                return SizeExpr(None, int(an.constants[name].value), label=name)
            return SizeExpr(size_symbol(an, name, expr.span))
        case ast.BinOp(op=("+" | "-") as op, left=ast.Name() as name, right=ast.Int(value=offset)):
            if name.id in an.constants:
                if isinstance(an.constants[name.id].value, str):
                    message = f"a tensor dimension is a number; {string_constant_words(an, name.id)}"
                    an.error("AR204", name.span, message)
                    return None
                value = evaluate(expr, constant_values(an))
                return SizeExpr(None, int(value), label=name.id)
            return SizeExpr(size_symbol(an, name.id, name.span), offset if op == "+" else -offset)
    an.error("AR217", expr.span, "a tensor dimension is a size name, a number, or a size name ± a number")
    return None


# ---- views: `x: f16[B, C, H, W] as [B, C * H * W]` -------------------------------------------------------
def view_shape(an: KernelAnalyzer, param: ast.Param, stored: tuple[SizeExpr, ...]) -> tuple[SizeExpr, ...] | None:
    """The view a parameter declares, as the kernel indexes it: each axis one stored axis or the product of
    neighbouring ones, in order (what `x.view(...)` of a tensor with mergeable strides gives; the launcher checks
    the strides). None after AR221 for anything else: a split, a reordering, a dimension the stored shape lacks."""
    assert param.view is not None and param.view_span is not None
    stored_text = "[" + ", ".join(str(d) for d in stored) + "]"
    axes: list[SizeExpr] = []
    position = 0
    for expr in param.view:
        terms = []
        for term in product_terms(expr):
            dim = view_term(an, term)
            if dim is None:
                message = (
                    f"`{unparse(term)}` is not a dimension of `{param.name}` ({stored_text}): a view's axis is one of "
                    "its axes or a product of neighbouring ones, written as in the stored shape"
                )
                an.error("AR221", term.span, message)
                return None
            terms.append(dim)
        wanted = stored[position : position + len(terms)]
        if tuple(terms) != wanted:
            if not wanted:
                why = "every stored axis is already in the view before it"
            else:
                expected = " * ".join(f"({d})" if d.symbol is not None and d.offset else str(d) for d in wanted)
                why = f"the stored axes here are {expected}"
            message = (
                f"a view merges neighbouring axes of `{param.name}` ({stored_text}) in order; `{unparse(expr)}`: {why}"
            )
            an.error("AR221", expr.span, message)
            return None
        position += len(terms)
        axes.append(terms[0] if len(terms) == 1 else SizeExpr(None, 0, "", tuple(terms)))
    if position != len(stored):
        left = stored[position:]
        rest = f"ax{'is' if len(left) == 1 else 'es'} " + ", ".join(str(d) for d in left)
        message = f"the view of `{param.name}` ({stored_text}) leaves out its {rest}: merge them into an axis"
        an.error("AR221", param.view_span, message)
        return None
    return tuple(axes)


def product_terms(expr: ast.Expr) -> list[ast.Expr]:
    """`C * H * W` as [C, H, W]; anything else as itself."""
    if isinstance(expr, ast.BinOp) and expr.op == "*":
        return product_terms(expr.left) + product_terms(expr.right)
    return [expr]


def view_term(an: KernelAnalyzer, expr: ast.Expr) -> SizeExpr | None:
    """A factor of a view's axis: a dimension the stored shape already declared (no new size symbol here)."""
    match expr:
        case ast.Int(value=value) if value > 0:
            return SizeExpr(None, value)
        case ast.Name(id=name) if name in an.constants and not isinstance(an.constants[name].value, str):
            an.symbols.append(SymbolUse(expr.span, name, "constant", "", an.constants[name].span))
            return SizeExpr(None, int(an.constants[name].value), label=name)
        case ast.Name(id=name) if name in an.sizes:
            an.symbols.append(SymbolUse(expr.span, name, "size", "i32 problem size", an.size_spans[name]))
            return SizeExpr(name)
        case ast.BinOp(op=("+" | "-") as op, left=ast.Name(id=name) as left, right=ast.Int(value=offset)):
            if name in an.sizes:
                an.symbols.append(SymbolUse(left.span, name, "size", "i32 problem size", an.size_spans[name]))
                return SizeExpr(name, offset if op == "+" else -offset)
    return None


def size_symbol(an: KernelAnalyzer, name: str, span: Span) -> str:
    if name not in an.sizes:
        if name in DTYPE_TABLE or name in BUILTINS:
            an.error("AR102", span, f"`{name}` is a builtin and cannot name a size")
        value = an.new_value(ScalarT(I32), name)
        an.sizes[name] = value
        an.size_spans[name] = span
        an.scope.names[name] = Binding("size", V(ScalarT(I32), value), span)
    an.symbols.append(SymbolUse(span, name, "size", "i32 problem size", an.size_spans[name]))
    return name


def lower_requires(an: KernelAnalyzer, decls: list[ast.Requires]) -> list[tuple[ir.Value, Span]]:
    conditions = []
    for decl in decls:
        for condition in decl.conditions:
            an.in_requires = True
            try:
                v = an.expr(condition)
            finally:
                an.in_requires = False
            if isinstance(v.type, ErrorT):
                continue
            if not isinstance(v.type, ScalarT) or v.value is None or not is_launch_value(v.value):
                an.error("AR404", condition.span, "`requires` takes conditions on sizes and tile constants")
                continue
            if v.type.dtype != BOOL:
                an.error("AR404", condition.span, f"`requires` takes a condition, not a value of type {v.type}")
                continue
            if v.type.const is False:
                an.error("AR404", condition.span, "this requirement is false for every problem size")
            conditions.append((v.value, condition.span))
    return conditions


def is_launch_value(value: ir.Value) -> bool:
    """Computed only from sizes, scalar parameters and constants (no program ids, no loads)."""
    if value.op is None:
        return True
    if value.op.kind in ("program_id", "num_programs", "load", "arange"):
        return False
    return all(is_launch_value(o) for o in value.op.operands)


def lower_grid(an: KernelAnalyzer, decls: list[ast.Grid]) -> list[ir.Value]:
    if not decls:
        an.error("AR401", an.kernel.name_span, f"kernel `{an.kernel.name}` has no `grid` declaration")
        return []
    for extra in decls[1:]:
        an.error("AR401", extra.span, "the grid is declared more than once")
    decl = decls[0]
    if not 1 <= len(decl.dims) <= 3:
        an.error("AR401", decl.span, f"a grid has 1 to 3 axes, not {len(decl.dims)}")
    grid = []
    for dim in decl.dims[:3]:
        v = an.expr(dim)
        if isinstance(v.type, ErrorT):
            continue
        if not isinstance(v.type, ScalarT) or not v.type.dtype.is_integer or v.value is None:
            an.error("AR204", dim.span, f"a grid axis is an integer, not {v.type}")
        elif not is_launch_value(v.value):
            an.error("AR404", dim.span, "a grid axis depends only on sizes and tile constants")
        else:
            grid.append(v.value)
    an.grid_rank = len(decl.dims)
    return grid
