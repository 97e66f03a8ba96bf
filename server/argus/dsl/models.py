"""Analysis of a `model` item: its parameters, temporaries and kernel launches, and what must agree between them.

    model long_softmax(x: f32[R, C], y: out f32[R, C]):
        stats = empty((R, 2), f32)        # a temporary (zeros(...) for one that must start at zero)
        row_stats(x, stats)               # a launch of a kernel of the file
        normalize(x, stats, y)

Each launch binds the launched kernel's size symbols from its tensor arguments' extents (a kernel's `M` is the
model's `R`, or `R + 1`, or 2), so a symbol two arguments give different extents, a rank, a dtype or an
argument's kind that does not match is an error here, before anything runs (AR412-AR418), as are data-flow
slips: writing a model input, reading a temporary no launch wrote yet. The kernels themselves are analyzed
(and verified) as they always are; a model adds no code of its own to check.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from argus.dsl import ast, ir
from argus.dsl.builtins import BUILTINS, DTYPES
from argus.dsl.diagnostics import Diagnostic, make
from argus.dsl.evaluate import evaluate
from argus.dsl.model_ir import Launch, LaunchArg, ModelIR, Temporary
from argus.dsl.scope import SymbolUse
from argus.dsl.spans import Span
from argus.dsl.types import DTYPES as DTYPE_TABLE
from argus.dsl.types import I32, DType, ScalarT, SizeExpr, TensorT
from argus.dsl.unparse import unparse

ALLOCATORS = ("empty", "zeros")
WHAT_A_MODEL_HOLDS = "a model holds temporaries (`t = empty((R, 2), f32)`, `zeros(...)`) and kernel launches"
STATEMENT_WORDS = {
    ast.TileDecl: "`tile`",
    ast.PolicyDecl: "`policy`",
    ast.LayoutDecl: "`layout`",
    ast.Requires: "`requires`",
    ast.Grid: "`grid`",
    ast.Invariant: "`invariant`",
    ast.AugAssign: "an augmented assignment",
    ast.For: "a loop",
    ast.If: "an `if`",
}


@dataclass(slots=True)
class Tensor:
    """A tensor a launch can name: a parameter of the model or a temporary."""

    name: str
    type: TensorT
    span: Span  # where it is declared
    kind: str  # "input" | "output" | "inout" | "temporary"
    zeroed: bool = False


def unparse_param(param: ast.Param) -> str:
    """A parameter's type as written: `f32[M, N]`, `f32`."""
    if param.shape is None:
        return param.dtype.id
    return f"{param.dtype.id}[{', '.join(unparse(d) for d in param.shape)}]"


def size_text(dim: SizeExpr) -> str:
    return str(SizeExpr(dim.symbol, dim.offset))


def shape_text(shape: tuple[SizeExpr, ...]) -> str:
    return "[" + ", ".join(size_text(d) for d in shape) + "]"


def type_text(t: TensorT) -> str:
    return f"{t.dtype}{shape_text(t.shape)}"


def kernel_shape_text(t: TensorT) -> str:
    """A kernel parameter's tensor type as the caller passes it (a view it declares is the kernel's own)."""
    return f"{t.dtype}[{', '.join(str(d) for d in t.stored_shape)}]"


class ModelAnalyzer:
    def __init__(
        self,
        model: ast.Model,
        kernels: dict[str, ast.Kernel],
        kernel_irs: dict[str, ir.KernelIR],
        models: set[str],
        diagnostics: list[Diagnostic],
        symbols: list[SymbolUse],
    ) -> None:
        self.model = model
        self.kernels, self.kernel_irs, self.models = kernels, kernel_irs, models
        self.diagnostics, self.symbols = diagnostics, symbols
        self.next_id = 0
        self.params: list[ir.ParamIR] = []
        self.sizes: dict[str, ir.Value] = {}
        self.size_spans: dict[str, Span] = {}
        self.scalars: dict[str, ir.ParamIR] = {}
        self.tensors: dict[str, Tensor] = {}
        self.unknown: set[str] = set(model.broken_params)  # names a broken line declared: used without complaint
        self.temporaries: list[Temporary] = []
        self.launches: list[Launch] = []
        # data flow, in launch order
        self.written: set[str] = set()
        self.read: set[str] = set()

    def error(self, code: str, span: Span, message: str, related: list[tuple[Span, str]] = ()) -> None:
        self.diagnostics.append(make(code, span, message, related=list(related)))

    def value(self, type_, name: str) -> ir.Value:
        self.next_id += 1
        return ir.Value(self.next_id, type_, name)

    # ---- the model ------------------------------------------------------------------------------------
    def run(self) -> ModelIR:
        self.declare_params()
        for stmt in self.model.body:
            self.statement(stmt)
        self.finish()
        return ModelIR(self.model.name, self.params, self.sizes, self.temporaries, self.launches, self.model.span)

    def declare_params(self) -> None:
        for param in self.model.params:
            if param.name in self.tensors or param.name in self.scalars:
                self.error("AR102", param.name_span, f"parameter `{param.name}` is already defined")
                continue
            dtype = DTYPE_TABLE.get(param.dtype.id)
            if dtype is None:
                close = difflib.get_close_matches(param.dtype.id, sorted(DTYPES), n=1, cutoff=0.4)
                hint = f"; did you mean `{close[0]}`?" if close else ""
                self.error("AR104", param.dtype.span, f"unknown dtype `{param.dtype.id}`{hint}")
                self.unknown.add(param.name)
                continue
            self.symbols.append(SymbolUse(param.dtype.span, param.dtype.id, "dtype", DTYPES[dtype.name], None))
            if param.shape is None:
                self.scalar_param(param, dtype)
            else:
                self.tensor_param(param, dtype)

    def scalar_param(self, param: ast.Param, dtype: DType) -> None:
        if param.is_out:
            word = param.mode
            self.error("AR216", param.span, f"only tensors can be `{word}`; give `{word}` parameters a shape")
        default = None
        if param.default is not None:
            default = evaluate(param.default, {})
            if default is None:
                self.error("AR206", param.default.span, "a parameter default must be a constant")
        type_ = ScalarT(dtype)
        ir_param = ir.ParamIR(param.name, type_, self.value(type_, param.name), param.span, default, False)
        self.params.append(ir_param)
        self.scalars[param.name] = ir_param
        self.symbols.append(SymbolUse(param.name_span, param.name, "param", str(type_), param.name_span))

    def tensor_param(self, param: ast.Param, dtype: DType) -> None:
        dims = [self.param_dimension(d) for d in param.shape or []]
        if param.default is not None:
            self.error("AR216", param.default.span, "tensor parameters cannot have a default")
        if param.view is not None and param.view_span is not None:
            message = (
                f"a model passes tensors as its caller holds them: the view of `{param.name}` belongs in the header "
                "of the kernel that indexes it"
            )
            self.error("AR221", param.view_span, message)
        if None in dims:
            self.unknown.add(param.name)
            return
        type_ = TensorT(dtype, tuple(d for d in dims if d is not None), param.is_out, param.is_inout)
        value = self.value(type_, param.name)
        self.params.append(ir.ParamIR(param.name, type_, value, param.span, None, param.is_out, param.is_inout))
        kind = "inout" if param.is_inout else "output" if param.is_out else "input"
        self.tensors[param.name] = Tensor(param.name, type_, param.name_span, kind)
        if not param.is_out or param.is_inout:
            self.written.add(param.name)  # an input (or in/out) holds its caller's data from the start
        self.symbols.append(SymbolUse(param.name_span, param.name, "param", str(type_), param.name_span))

    def param_dimension(self, expr: ast.Expr) -> SizeExpr | None:
        """A model's tensor dimension: a size symbol (declared by its first use), one ± a number, or a number."""
        match expr:
            case ast.Int(value=value) if value > 0:
                return SizeExpr(None, value)
            case ast.Name(id=name):
                return SizeExpr(self.size_symbol(name, expr.span))
            case ast.BinOp(op=("+" | "-") as op, left=ast.Name() as name, right=ast.Int(value=offset)):
                return SizeExpr(self.size_symbol(name.id, name.span), offset if op == "+" else -offset)
        self.error("AR217", expr.span, "a tensor dimension is a size name, a number, or a size name ± a number")
        return None

    def size_symbol(self, name: str, span: Span) -> str:
        if name not in self.sizes:
            if name in DTYPES or name in BUILTINS:
                self.error("AR102", span, f"`{name}` is a builtin and cannot name a size")
            self.sizes[name] = self.value(ScalarT(I32), name)
            self.size_spans[name] = span
        self.symbols.append(SymbolUse(span, name, "size", "i32 problem size", self.size_spans[name]))
        return name

    # ---- statements -------------------------------------------------------------------------------------
    def statement(self, stmt: ast.Stmt) -> None:
        match stmt:
            case ast.Assign(targets=targets, value=ast.Call(func=ast.Name(id=callee)) as call) if callee in ALLOCATORS:
                if len(targets) != 1:
                    self.error("AR412", stmt.span, f"`{callee}` makes one temporary: `t = {callee}((R, 2), f32)`")
                    return
                self.temporary(targets[0], callee, call, stmt.span)
            case ast.ExprStmt(expr=ast.Call(func=ast.Name()) as call):
                self.launch(call, stmt.span)
            case ast.ErrorStmt(names=names):
                self.unknown.update(names)  # its diagnostic is out already; what it seems to define stays usable
            case ast.Pass():
                pass
            case ast.Assign(targets=targets):
                self.unknown.update(t.id for t in targets)
                message = f"a model computes nothing itself: {WHAT_A_MODEL_HOLDS}; a value is a kernel's to compute"
                self.error("AR412", stmt.value.span, message)
            case _:
                what = STATEMENT_WORDS.get(type(stmt), "this statement")
                self.error("AR412", stmt.span, f"{what} belongs in a kernel: {WHAT_A_MODEL_HOLDS}")

    def temporary(self, target: ast.Name, callee: str, call: ast.Call, span: Span) -> None:
        name = target.id
        if name in self.tensors or name in self.scalars:
            self.error("AR102", target.span, f"`{name}` is already defined in model `{self.model.name}`")
            return
        usage = f"`{callee}` takes a shape and a dtype: `{name} = {callee}((R, 2), f32)`"
        if len(call.args) != 2 or call.keywords:
            self.error("AR412", call.span, usage)
            self.unknown.add(name)
            return
        shape_expr, dtype_expr = call.args
        elements = shape_expr.elts if isinstance(shape_expr, ast.Tuple) else None
        if elements is None:
            self.error("AR412", shape_expr.span, f"{usage}; write a one-axis shape `(R,)`")
            self.unknown.add(name)
            return
        dims = [self.temporary_dimension(e) for e in elements]
        dtype = DTYPE_TABLE.get(dtype_expr.id) if isinstance(dtype_expr, ast.Name) else None
        if dtype is None:
            shown = dtype_expr.id if isinstance(dtype_expr, ast.Name) else unparse(dtype_expr)
            self.error("AR104", dtype_expr.span, f"unknown dtype `{shown}` (dtypes: {', '.join(DTYPES)})")
        if dtype is None or None in dims:
            self.unknown.add(name)
            return
        shape = tuple(d for d in dims if d is not None)
        temporary = Temporary(name, dtype, shape, callee == "zeros", span)
        self.temporaries.append(temporary)
        self.tensors[name] = Tensor(name, temporary.type, target.span, "temporary", temporary.zeroed)
        if temporary.zeroed:
            self.written.add(name)
        type_text_ = f"{dtype}{shape_text(shape)} temporary"
        self.symbols.append(SymbolUse(target.span, name, "variable", type_text_, target.span))
        self.symbols.append(SymbolUse(dtype_expr.span, dtype.name, "dtype", DTYPES[dtype.name], None))

    def temporary_dimension(self, expr: ast.Expr) -> SizeExpr | None:
        """A temporary's dimension: a size of the model (from its parameters), one ± a number, or a number."""
        symbol, offset = None, 0
        match expr:
            case ast.Int(value=value) if value > 0:
                return SizeExpr(None, value)
            case ast.Name(id=name):
                symbol = expr
            case ast.BinOp(op=("+" | "-") as op, left=ast.Name() as name, right=ast.Int(value=value)):
                symbol, offset = name, value if op == "+" else -value
        known = ", ".join(self.sizes) or "none"
        if symbol is None:
            message = f"a temporary's dimension is a size of the model ({known}), one ± a number, or a number"
            self.error("AR412", expr.span, message)
            return None
        if symbol.id not in self.sizes:
            message = f"`{symbol.id}` is not a size of model `{self.model.name}` (its sizes: {known})"
            self.error("AR412", symbol.span, message)
            return None
        self.symbols.append(SymbolUse(symbol.span, symbol.id, "size", "i32 problem size", self.size_spans[symbol.id]))
        return SizeExpr(symbol.id, offset)

    # ---- launches ---------------------------------------------------------------------------------------
    def launch(self, call: ast.Call, span: Span) -> None:
        assert isinstance(call.func, ast.Name)
        name, name_span = call.func.id, call.func.span
        kernel_ast = self.kernels.get(name)
        if kernel_ast is None:
            self.not_a_kernel(call)
            return
        signature = ", ".join(
            f"{p.name}: {p.mode + ' ' if p.mode else ''}{unparse_param(p)}" for p in kernel_ast.params
        )
        self.symbols.append(SymbolUse(name_span, name, "kernel", f"({signature})", kernel_ast.name_span))
        kernel = self.kernel_irs.get(name)
        if kernel is None or kernel_ast.broken_params:
            self.touch_arguments(call)  # the kernel's own errors come first; no echo of them here
            return
        bound = self.bind_arguments(call, kernel, kernel_ast)
        if bound is None:
            self.touch_arguments(call)
            return
        args, bindings, ok = self.check_arguments(bound, kernel, kernel_ast)
        self.flow(args, kernel, kernel_ast)
        if ok:
            self.launches.append(Launch(name, args, bindings, span))

    def not_a_kernel(self, call: ast.Call) -> None:
        assert isinstance(call.func, ast.Name)
        name = call.func.id
        self.touch_arguments(call)
        if name in self.models:
            message = f"`{name}` is a model: a model launches kernels; launch the kernels of `{name}` here instead"
        elif name in ALLOCATORS:
            message = f"`{name}(...)` makes a temporary: assign it, as in `t = {name}((R, 2), f32)`"
        else:
            close = difflib.get_close_matches(name, list(self.kernels), n=1)
            hint = f"; did you mean `{close[0]}`?" if close else ""
            known = ", ".join(self.kernels) or "none"
            message = f"`{name}` is not a kernel of this file{hint} (kernels: {known})"
        self.error("AR413", call.func.span, message)

    def touch_arguments(self, call: ast.Call) -> None:
        """A launch that cannot be checked still uses the names it passes: no warning that they go unused."""
        for expr in [*call.args, *(k.value for k in call.keywords)]:
            if isinstance(expr, ast.Name):
                self.read.add(expr.id)
                self.written.add(expr.id)

    def bind_arguments(
        self, call: ast.Call, kernel: ir.KernelIR, kernel_ast: ast.Kernel
    ) -> dict[str, tuple[ast.Expr, ir.ParamIR]] | None:
        """Each given argument by the kernel parameter it is for: positional ones in the kernel's order, then
        keywords by name. None (after reporting AR414) when the call's shape is wrong."""
        params = kernel.params
        signature = f"{kernel.name}({', '.join(p.name for p in params)})"
        related = [(kernel_ast.name_span, f"`{kernel.name}` is defined here")]
        if len(call.args) > len(params):
            extra = call.args[len(params)]
            message = f"`{kernel.name}` takes {len(params)} arguments, {signature}; this launch passes {len(call.args)}"
            self.error("AR414", extra.span.cover(call.args[-1].span), message, related)
            return None
        bound = {p.name: (arg, p) for arg, p in zip(call.args, params, strict=False)}
        by_name = {p.name: p for p in params}
        for keyword in call.keywords:
            param = by_name.get(keyword.name)
            if param is None:
                where = "a tile constant of" if keyword.name in kernel.constants else "not a parameter of"
                message = f"`{keyword.name}` is {where} `{kernel.name}`; a launch passes its parameters, {signature}"
                self.error("AR414", keyword.name_span, message, related)
                return None
            if keyword.name in bound:
                message = f"`{keyword.name}` is given twice: by position and by name"
                self.error("AR414", keyword.name_span, message, related)
                return None
            bound[keyword.name] = (keyword.value, param)
        missing = [
            p.name
            for p in params
            if p.name not in bound and not (isinstance(p.type, ScalarT) and p.default is not None)
        ]
        if missing:
            given = len(call.args) + len(call.keywords)
            message = f"`{kernel.name}` needs `{missing[0]}`: it takes {signature}, and this launch passes {given}"
            self.error("AR414", call.span, message, related)
            return None
        return {p.name: bound[p.name] for p in params if p.name in bound}

    def check_arguments(
        self, bound: dict[str, tuple[ast.Expr, ir.ParamIR]], kernel: ir.KernelIR, kernel_ast: ast.Kernel
    ) -> tuple[list[LaunchArg], dict[str, SizeExpr], bool]:
        args: list[LaunchArg] = []
        bindings: dict[str, SizeExpr] = {}
        origins: dict[str, tuple[str, int, ast.Expr]] = {}  # kernel symbol -> (argument, axis, its expression)
        ok = True
        sources = {p.name: p.span for p in kernel_ast.params}
        for param_name, (expr, param) in bound.items():
            where = [(sources.get(param_name, kernel_ast.name_span), f"`{param_name}` of `{kernel.name}`")]
            if isinstance(param.type, TensorT):
                arg = self.tensor_argument(expr, param, kernel, where)
                if arg is None:
                    if isinstance(expr, ast.Name):  # reported once: no echo that it goes unread or unwritten
                        self.read.add(expr.id)
                        self.written.add(expr.id)
                    ok = False
                    continue
                tensor = self.tensors[str(arg.value)]
                ok &= self.bind_shape(tensor, expr, param, kernel, bindings, origins, where)
            elif isinstance(param.type, ScalarT):
                arg = self.scalar_argument(expr, param, kernel, where)
                if arg is None:
                    ok = False
                    continue
            else:
                ok = False  # a parameter the kernel's own analysis could not type
                continue
            args.append(arg)
        ok &= self.check_aliasing(args, kernel)
        return args, bindings, ok

    def tensor_argument(
        self, expr: ast.Expr, param: ir.ParamIR, kernel: ir.KernelIR, where: list[tuple[Span, str]]
    ) -> LaunchArg | None:
        assert isinstance(param.type, TensorT)
        wanted = f"`{param.name}` of `{kernel.name}` is a tensor ({kernel_shape_text(param.type)})"
        if not isinstance(expr, ast.Name):
            message = f"{wanted}: pass a tensor parameter of the model or a temporary"
            self.error("AR414", expr.span, message, where)
            return None
        name = expr.id
        if name in self.unknown:
            return None
        tensor = self.tensors.get(name)
        if tensor is None:
            if name in self.scalars or name in self.sizes:
                what = "a scalar parameter" if name in self.scalars else "a size"
                self.error("AR414", expr.span, f"{wanted}, and `{name}` is {what} of the model", where)
            else:
                self.undefined(expr)
            return None
        self.symbols.append(SymbolUse(expr.span, name, "param" if tensor.kind != "temporary" else "variable",
                                      type_text(tensor.type), tensor.span))  # fmt: skip
        if tensor.type.dtype != param.type.dtype:
            message = (
                f"`{name}` is {tensor.type.dtype} ({type_text(tensor.type)}); `{param.name}` of `{kernel.name}` takes "
                f"{param.type.dtype} ({kernel_shape_text(param.type)})"
            )
            self.error("AR415", expr.span, message, where)
            return None
        if param.is_out and tensor.kind == "input":
            what = "an in/out parameter" if param.is_inout else "an output"
            message = (
                f"`{param.name}` is {what} of `{kernel.name}`, and `{name}` is an input of the model: a launch must "
                f"not overwrite its caller's input; write into a temporary or an `out` parameter of the model, or "
                f"declare `{name}: inout ...` to update it in place"
            )
            self.error("AR417", expr.span, message, where)
            return None
        return LaunchArg(param.name, "tensor", name, expr.span)

    def undefined(self, expr: ast.Name) -> None:
        names = [*self.tensors, *self.scalars, *self.sizes]
        close = difflib.get_close_matches(expr.id, names, n=1)
        hint = f"; did you mean `{close[0]}`?" if close else ""
        self.error("AR101", expr.span, f"undefined name `{expr.id}`{hint}")

    def scalar_argument(
        self, expr: ast.Expr, param: ir.ParamIR, kernel: ir.KernelIR, where: list[tuple[Span, str]]
    ) -> LaunchArg | None:
        assert isinstance(param.type, ScalarT)
        dtype = param.type.dtype
        wanted = f"`{param.name}` of `{kernel.name}` is a scalar of dtype {dtype}"
        kind, value, given = self.scalar_source(expr)
        if kind is None:
            if isinstance(expr, ast.Name) and expr.id in self.unknown:
                return None
            if isinstance(expr, ast.Name) and expr.id in self.tensors:
                self.error("AR414", expr.span, f"{wanted}, and `{expr.id}` is a tensor", where)
            elif isinstance(expr, ast.Name):
                self.undefined(expr)
            else:
                message = f"{wanted}: pass a number, a scalar parameter of the model or one of its sizes"
                self.error("AR414", expr.span, message, where)
            return None
        assert given is not None and value is not None
        if dtype.kind == "bool":  # what the launcher's scalar check accepts (argus.codegen.runtime)
            fits = given.kind == "bool"
        elif dtype.is_integer:
            fits = given.is_integer and given.kind != "bool"
        else:
            fits = given.kind != "bool"
        if not fits:
            self.error("AR415", expr.span, f"{wanted}; `{unparse(expr)}` is {given}", where)
            return None
        return LaunchArg(param.name, kind, value, expr.span)

    def scalar_source(self, expr: ast.Expr) -> tuple[str | None, str | int | float | None, DType | None]:
        """(kind, value, dtype) of a scalar argument: a literal number, a scalar parameter, a size symbol."""
        if isinstance(expr, ast.Name):
            if expr.id in self.scalars:
                param = self.scalars[expr.id]
                self.symbols.append(SymbolUse(expr.span, expr.id, "param", str(param.type), None))
                assert isinstance(param.type, ScalarT)
                return "scalar", expr.id, param.type.dtype
            if expr.id in self.sizes:
                self.symbols.append(SymbolUse(expr.span, expr.id, "size", "i32 problem size", self.size_spans[expr.id]))
                return "size", expr.id, I32
            return None, None, None
        if isinstance(expr, ast.Int | ast.Float | ast.Bool | ast.UnaryOp):
            value = evaluate(expr, {})
            if isinstance(value, bool):
                return "number", value, DTYPE_TABLE["bool"]
            if isinstance(value, int):
                return "number", value, I32
            if isinstance(value, float):
                return "number", value, DTYPE_TABLE["f32"]
        return None, None, None

    def bind_shape(
        self,
        tensor: Tensor,
        expr: ast.Expr,
        param: ir.ParamIR,
        kernel: ir.KernelIR,
        bindings: dict[str, SizeExpr],
        origins: dict[str, tuple[str, int, ast.Expr]],
        where: list[tuple[Span, str]],
    ) -> bool:
        """Bind the kernel's size symbols from one tensor argument's extents (AR416 where they disagree)."""
        assert isinstance(param.type, TensorT)
        kernel_dims, extents = param.type.stored_shape, tensor.type.shape  # a view is the kernel's own
        takes = f"`{param.name}` of `{kernel.name}` is {kernel_shape_text(param.type)}"
        if len(kernel_dims) != len(extents):
            message = (
                f"{takes}, rank {len(kernel_dims)}; `{tensor.name}` is {type_text(tensor.type)}, rank {len(extents)}"
            )
            self.error("AR416", expr.span, message, where)
            return False
        for axis, (dim, extent) in enumerate(zip(kernel_dims, extents, strict=True)):
            if dim.symbol is None:
                # a number (or tile constant) there: another number must equal it; a size is checked per size set
                if extent.symbol is None and extent.offset != dim.offset:
                    message = (
                        f"{takes}: axis {axis} has length {dim.offset}, and `{tensor.name}` is {type_text(tensor.type)}"
                    )
                    self.error("AR416", expr.span, message, where)
                    return False
                continue
            value = SizeExpr(extent.symbol, extent.offset - dim.offset)
            if value.symbol is None and value.offset < 1:
                message = (
                    f"{takes}: `{dim.symbol}` would be {value.offset} from `{tensor.name}` ({type_text(tensor.type)})"
                )
                self.error("AR416", expr.span, message, where)
                return False
            known = bindings.get(dim.symbol)
            if known is None:
                bindings[dim.symbol] = value
                origins[dim.symbol] = (tensor.name, axis, expr)
                continue
            if known != value:
                first, first_axis, first_expr = origins[dim.symbol]
                message = (
                    f"`{dim.symbol}` of `{kernel.name}` is {size_text(known)} from `{first}` (axis {first_axis}) and "
                    f"{size_text(value)} from `{tensor.name}` (axis {axis}): pass tensors whose extents agree"
                )
                related = [*where, (first_expr.span, f"`{dim.symbol}` = {size_text(known)} from here")]
                self.error("AR416", expr.span, message, related)
                return False
        return True

    def check_aliasing(self, args: list[LaunchArg], kernel: ir.KernelIR) -> bool:
        """A kernel's output passed as another of its arguments too: the kernel would read what it overwrites."""
        outputs = {p.name for p in kernel.params if p.is_out}
        seen: dict[str, str] = {}
        for arg in args:
            if arg.kind != "tensor":
                continue
            name = str(arg.value)
            other = seen.get(name)
            if other is not None and (arg.param in outputs or other in outputs):
                message = (
                    f"`{name}` is passed to both `{other}` and `{arg.param}` of `{kernel.name}`, and one of them is an "
                    f"output: the kernel would read or write what it overwrites; give the output a tensor of its own"
                )
                self.error("AR414", arg.span, message)
                return False
            seen.setdefault(name, arg.param)
        return True

    def flow(self, args: list[LaunchArg], kernel: ir.KernelIR, kernel_ast: ast.Kernel) -> None:
        """Reads before writes: an input argument (an in/out one too) must hold data by the time its launch runs."""
        outputs = {p.name for p in kernel.params if p.is_out}
        pure_outputs = {p.name for p in kernel.params if p.is_out and not p.is_inout}
        for arg in args:
            if arg.kind != "tensor" or arg.param in pure_outputs:
                continue
            name = str(arg.value)
            self.read.add(name)
            if name in self.written:
                continue
            tensor = self.tensors[name]
            what = "a temporary" if tensor.kind == "temporary" else "an output of the model"
            message = (
                f"`{kernel.name}` reads `{name}` (its `{arg.param}`) before any launch writes it: `{name}` is "
                f"{what} that holds nothing yet; launch the kernel that writes it first"
                + (", or make it with `zeros(...)`" if tensor.kind == "temporary" else "")
            )
            self.error("AR418", arg.span, message, [(tensor.span, f"`{name}` is declared here")])
            self.written.add(name)  # reported once
        for arg in args:
            if arg.kind == "tensor" and arg.param in outputs:
                self.written.add(str(arg.value))

    def finish(self) -> None:
        for tensor in self.tensors.values():
            if tensor.kind == "output" and tensor.name not in self.written:
                message = f"output `{tensor.name}` of model `{self.model.name}` is never written by a launch"
                self.error("AR419", tensor.span, message)
            elif tensor.kind == "temporary" and tensor.name not in self.read:
                message = (
                    f"temporary `{tensor.name}` is never read by a launch: drop it, or pass it to the kernel that "
                    "needs it"
                )
                self.error("AR420", tensor.span, message)


def launched_kernels(model: ast.Model) -> list[str]:
    """The names a model's body launches, as written (whether or not each is a kernel that checks)."""
    return [
        stmt.expr.func.id
        for stmt in model.body
        if isinstance(stmt, ast.ExprStmt) and isinstance(stmt.expr, ast.Call) and isinstance(stmt.expr.func, ast.Name)
    ]
