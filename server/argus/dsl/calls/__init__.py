"""Typing of builtin calls and tensor accesses; a mixin of the kernel analyzer."""

from __future__ import annotations

import difflib
import math

from argus.dsl import ast, ir
from argus.dsl.builtins import INPUT_PRECISIONS
from argus.dsl.calls.arguments import (
    axis_arg,
    bind_args,
    constant_arg,
    constant_arg_source,
    dtype_arg,
    shape_arg_sources,
    signature,
    value_arg,
)
from argus.dsl.calls.table import TYPE_RULES, type_rule
from argus.dsl.evaluate import cdiv
from argus.dsl.ops import BUILTINS, FLOAT_MATH, METHODS, REDUCTIONS
from argus.dsl.scope import ERROR, Ref, V
from argus.dsl.shapes import broadcast, fits, is_power_of_two, result_dtype
from argus.dsl.spans import Span
from argus.dsl.types import (
    BOOL,
    F32,
    I32,
    Dim,
    ErrorT,
    NoneT,
    RefT,
    ScalarT,
    Shape,
    StrT,
    TensorT,
    TileT,
    is_weak,
    shape_of,
    shape_text,
)


def narrows(source, target) -> bool:
    """Whether converting source to target can lose information."""
    if source.kind == "bool" or source == target:
        return False
    if source.is_float and not target.is_float:
        return True
    if source.is_float == target.is_float:
        return target.bits < source.bits
    return target.bits <= source.bits  # an integer into a float with no more bits than it has


class CallsMixin:
    # ---- dispatch -------------------------------------------------------------------------------
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
        self.symbols.append(self.builtin_symbol(e.func))
        return TYPE_RULES[name](self, e, name)

    def builtin_symbol(self, name: ast.Name):
        from argus.dsl.kernel_analysis import SymbolUse

        return SymbolUse(name.span, name.id, "builtin", BUILTINS[name.id].signature, None)

    def method(self, e: ast.Call) -> V:
        func = e.func
        if func.attr not in METHODS:
            return self.error("AR103", func.attr_span, f"unknown method `.{func.attr}`; tiles have `.to(dtype)`")
        return TYPE_RULES[func.attr](self, e, func.attr)

    @type_rule("to")
    def call_to(self, e: ast.Call, name: str) -> V:
        func = e.func
        x = value_arg(self, func.value)
        args = bind_args(self, e, ["dtype"], 1)
        if args is None or isinstance(x.type, ErrorT):
            return ERROR
        dtype = dtype_arg(self, args["dtype"])
        return ERROR if dtype is None else self.cast(x, dtype, e.span)

    def cast(self, x: V, dtype, span: Span) -> V:
        result_type = TileT(dtype, x.type.shape) if isinstance(x.type, TileT) else ScalarT(dtype)
        if x.type.dtype == dtype:
            return V(result_type if isinstance(x.type, TileT) else ScalarT(dtype, x.const), x.value, span=span)
        return V(result_type, self.emit("cast", [x.value], result_type, span, dtype=dtype), span=span)

    @type_rule("range", "static_range")
    def call_loop_iterable(self, e: ast.Call, name: str) -> V:
        """Typed by the `for` statement (KernelAnalyzer.for_loop); anywhere else it is an error."""
        return self.error("AR216", e.span, f"{name}(...) is only allowed as the iterable of a `for` loop")

    # ---- programs and creation ------------------------------------------------------------------
    def program_axis(self, e: ast.Call) -> int | None:
        args = bind_args(self, e, ["axis"], 1)
        if args is None:
            return None
        axis = constant_arg(self, args["axis"], "the grid axis")
        if axis is None:
            return None
        if axis not in (0, 1, 2):
            self.error("AR218", args["axis"].span, f"grid axes are 0, 1 and 2, not {axis}")
            return None
        if self.grid_rank is not None and axis >= self.grid_rank:
            axes = "1 axis" if self.grid_rank == 1 else f"{self.grid_rank} axes"
            self.error("AR402", e.span, f"axis {axis} is outside the grid, which has {axes}")
            return None
        return axis

    @type_rule("program_id")
    def call_program_id(self, e: ast.Call, name: str) -> V:
        axis = self.program_axis(e)
        if axis is None:
            return ERROR
        return V(ScalarT(I32), self.emit("program_id", [], ScalarT(I32), e.span, axis=axis), span=e.span)

    @type_rule("num_programs")
    def call_num_programs(self, e: ast.Call, name: str) -> V:
        axis = self.program_axis(e)
        if axis is None:
            return ERROR
        return V(ScalarT(I32), self.emit("num_programs", [], ScalarT(I32), e.span, axis=axis), span=e.span)

    @type_rule("arange")
    def call_arange(self, e: ast.Call, name: str) -> V:
        args = bind_args(self, e, ["n"], 1)
        if args is None:
            return ERROR
        n, source = constant_arg_source(self, args["n"], "arange's length")
        if n is None:
            return ERROR
        if not is_power_of_two(n):
            return self.error("AR205", args["n"].span, f"arange's length must be a power of two, not {n}")
        label = args["n"].id if isinstance(args["n"], ast.Name) else ""
        result_type = TileT(I32, (Dim(n, label),))
        return V(result_type, self.emit("arange", [], result_type, e.span, n=n, n_expr=source), span=e.span)

    @type_rule("zeros")
    def call_zeros(self, e: ast.Call, name: str) -> V:
        args = bind_args(self, e, ["shape", "dtype"], 1)
        if args is None:
            return ERROR
        shape, sources = shape_arg_sources(self, args["shape"])
        dtype = dtype_arg(self, args["dtype"]) if "dtype" in args else F32
        if shape is None or dtype is None:
            return ERROR
        result_type = TileT(dtype, shape)
        attrs = {"shape": shape, "dtype": dtype, "shape_exprs": sources}
        return V(result_type, self.emit("zeros", [], result_type, e.span, **attrs), span=e.span)

    @type_rule("full")
    def call_full(self, e: ast.Call, name: str) -> V:
        args = bind_args(self, e, ["shape", "value", "dtype"], 3)
        if args is None:
            return ERROR
        shape, sources = shape_arg_sources(self, args["shape"])
        value = value_arg(self, args["value"])
        dtype = dtype_arg(self, args["dtype"])
        if shape is None or dtype is None or isinstance(value.type, ErrorT):
            return ERROR
        if isinstance(value.type, TileT):
            return self.error("AR216", args["value"].span, "full() takes a scalar fill value")
        result_type = TileT(dtype, shape)
        op_value = self.emit("full", [value.value], result_type, e.span, shape=shape, dtype=dtype, shape_exprs=sources)
        return V(result_type, op_value, span=e.span)

    # ---- memory ---------------------------------------------------------------------------------
    def tensor_access(self, e: ast.Subscript, tensor: V) -> V:
        tensor_type: TensorT = tensor.type
        name = tensor.value.name or "tensor"
        rank = len(tensor_type.shape)
        for index in e.indices:
            if isinstance(index, ast.FullSlice | ast.NoneLit):
                return self.error(
                    "AR208", index.span, "tensor indices are index values or vectors (arange), not `:` or None"
                )
        if len(e.indices) != rank:
            return self.error("AR208", e.span, f"`{name}` has {rank} axes but {len(e.indices)} indices are given")
        values = [self.expr(i) for i in e.indices]
        for index, v in zip(e.indices, values, strict=True):
            if isinstance(v.type, ErrorT):
                return ERROR
            if not isinstance(v.type, ScalarT | TileT) or not v.type.dtype.is_integer or v.type.dtype == BOOL:
                return self.error("AR204", index.span, f"a tensor index is an integer, not {self.describe(v)}")
        ranks = [len(shape_of(v.type)) for v in values]
        if all(r <= 1 for r in ranks):
            shape = tuple(v.type.shape[0] for v in values if isinstance(v.type, TileT))
            indices, position = [], 0
            for v in values:
                if isinstance(v.type, TileT):
                    indices.append(self.place_on_axis(v, position, len(shape), e.span))
                    position += 1
                else:
                    indices.append(v.value)
        else:
            shape: Shape = ()
            for index, v in zip(e.indices, values, strict=True):
                combined = broadcast(shape, shape_of(v.type))
                if combined is None:
                    return self.error(
                        "AR201",
                        index.span,
                        f"index shapes {shape_text(shape)} and {shape_text(v.type.shape)} do not broadcast",
                    )
                shape = combined
            indices = [v.value for v in values]
        ref = Ref(tensor.value, name, indices, shape)
        return V(RefT(name, tensor_type.dtype, shape), ref=ref, span=e.span)

    def place_on_axis(self, v: V, axis: int, rank: int, span: Span) -> ir.Value:
        """A vector as axis `axis` of a rank-`rank` tile: size-1 axes everywhere else."""
        if rank == 1:
            return v.value
        shape = [Dim(1)] * rank
        shape[axis] = v.type.shape[0]
        result_type = TileT(v.type.dtype, tuple(shape))
        axes = [i for i in range(rank) if i != axis]
        return self.emit("expand_dims", [v.value], result_type, span, axes=axes)

    def access_arg(self, expr: ast.Expr, what: str) -> V:
        v = self.expr(expr)
        if v.ref is None:
            if not isinstance(v.type, ErrorT):
                self.error("AR208", expr.span, f"{what} takes a tensor access such as A[rows, cols], not {v.type}")
            return ERROR
        return v

    def mask_arg(self, expr: ast.Expr, shape: Shape) -> ir.Value | V | None:
        if isinstance(expr, ast.NoneLit):
            return None
        if isinstance(expr, ast.Tuple):
            if len(expr.elts) != len(shape):
                return self.error(
                    "AR203",
                    expr.span,
                    f"the access is {shape_text(shape)}: a mask tuple has one entry per axis, "
                    f"{len(shape)} here, not {len(expr.elts)}",
                )
            parts = []
            for axis, element in enumerate(expr.elts):
                if isinstance(element, ast.NoneLit):
                    continue
                v = self.expr(element)
                if isinstance(v.type, ErrorT):
                    return ERROR
                if not isinstance(v.type, ScalarT | TileT) or v.type.dtype != BOOL:
                    return self.error("AR203", element.span, f"a mask is boolean, not {self.describe(v)}")
                if isinstance(v.type, TileT):
                    if len(v.type.shape) != 1 or v.type.shape[0].value != shape[axis].value:
                        return self.error(
                            "AR203",
                            element.span,
                            f"mask entry {axis} is {shape_text(v.type.shape)} but axis {axis} of the access "
                            f"has {shape[axis]} elements",
                        )
                    parts.append(self.place_on_axis(v, axis, len(shape), element.span))
                else:
                    parts.append(v.value)
            if not parts:
                return None
            combined = parts[0]
            for value in parts[1:]:
                combined_shape = broadcast(shape_of(combined.type), shape_of(value.type))
                result_type = TileT(BOOL, combined_shape) if combined_shape else ScalarT(BOOL)
                combined = self.emit("binary", [combined, value], result_type, expr.span, op="&")
            return combined
        v = self.expr(expr)
        if isinstance(v.type, ErrorT):
            return ERROR
        if not isinstance(v.type, ScalarT | TileT) or v.type.dtype != BOOL:
            return self.error("AR203", expr.span, f"a mask is boolean, not {self.describe(v)}")
        if not fits(shape_of(v.type), shape):
            return self.error(
                "AR203",
                expr.span,
                f"mask of shape {shape_text(shape_of(v.type))} does not fit the access {shape_text(shape)}",
                mask=[d.value for d in shape_of(v.type)],
                access=[d.value for d in shape],
            )
        return v.value

    @type_rule("load")
    def call_load(self, e: ast.Call, name: str) -> V:
        args = bind_args(self, e, ["ref", "mask", "other"], 1)
        if args is None:
            return ERROR
        access = self.access_arg(args["ref"], "load")
        if access is ERROR:
            return ERROR
        ref: Ref = access.ref
        operands = [ref.tensor, *ref.indices]
        attrs = {"tensor": ref.name, "rank": len(ref.indices), "mask": False, "other": False}
        if "mask" in args:
            mask = self.mask_arg(args["mask"], ref.shape)
            if mask is ERROR:
                return ERROR
            if mask is not None:
                operands.append(mask)
                attrs["mask"] = True
        if "other" in args and not isinstance(args["other"], ast.NoneLit):
            other = value_arg(self, args["other"])
            if isinstance(other.type, ErrorT):
                return ERROR
            if not fits(shape_of(other.type), ref.shape):
                return self.error(
                    "AR201", args["other"].span, f"`other` does not fit the access {shape_text(ref.shape)}"
                )
            operands.append(other.value)
            attrs["other"] = True
        dtype = access.type.dtype
        result_type = TileT(dtype, ref.shape) if ref.shape else ScalarT(dtype)
        return V(result_type, self.emit("load", operands, result_type, e.span, **attrs), span=e.span)

    @type_rule("store", "atomic_add")
    def call_store(self, e: ast.Call, kind: str) -> V:
        args = bind_args(self, e, ["ref", "value", "mask"], 2)
        if args is None:
            return ERROR
        target = args["ref"]
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            self.written.add(target.value.id)  # even when the store has an error: the intent is clear
        access = self.access_arg(args["ref"], kind)
        value = value_arg(self, args["value"])
        if access is ERROR or isinstance(value.type, ErrorT):
            return ERROR
        ref: Ref = access.ref
        tensor_type: TensorT = ref.tensor.type
        if not tensor_type.out:
            return self.error(
                "AR211", args["ref"].span, f"`{ref.name}` is an input; declare it `{ref.name}: out ...` to write it"
            )
        if not fits(shape_of(value.type), ref.shape):
            return self.error(
                "AR201",
                args["value"].span,
                f"a value of shape {shape_text(shape_of(value.type))} does not fit the access {shape_text(ref.shape)}",
                value=[d.value for d in shape_of(value.type)],
                access=[d.value for d in ref.shape],
            )
        target = tensor_type.dtype
        if narrows(value.type.dtype, target) and not is_weak(value.type):
            self.warn(
                "AR212",
                args["value"].span,
                f"{kind} converts {value.type.dtype} to {target} implicitly; write `.to({target})` if intended",
            )
        operands = [ref.tensor, *ref.indices, value.value]
        attrs = {"tensor": ref.name, "rank": len(ref.indices), "mask": False}
        if "mask" in args:
            mask = self.mask_arg(args["mask"], ref.shape)
            if mask is ERROR:
                return ERROR
            if mask is not None:
                operands.append(mask)
                attrs["mask"] = True
        self.emit(kind, operands, None, e.span, **attrs)
        return V(NoneT(), span=e.span)

    # ---- math -----------------------------------------------------------------------------------
    @type_rule("dot")
    def call_dot(self, e: ast.Call, name: str) -> V:
        args = bind_args(self, e, ["a", "b", "acc", "input_precision", "out_dtype"], 2)
        if args is None:
            return ERROR
        a, b = value_arg(self, args["a"]), value_arg(self, args["b"])
        if isinstance(a.type, ErrorT) or isinstance(b.type, ErrorT):
            return ERROR
        for v, part in ((a, args["a"]), (b, args["b"])):
            if not isinstance(v.type, TileT) or len(v.type.shape) not in (2, 3):
                return self.error("AR202", part.span, f"dot takes 2-D (or batched 3-D) tiles, not {v.type}")
        sa, sb = a.type.shape, b.type.shape
        if len(sa) != len(sb):
            return self.error("AR202", e.span, f"dot of {shape_text(sa)} and {shape_text(sb)}: ranks differ")
        if sa[-1].value != sb[-2].value:
            return self.error(
                "AR202",
                e.span,
                f"dot of {shape_text(sa)} and {shape_text(sb)}: a has {sa[-1]} columns but b has {sb[-2]} rows",
                a=[d.value for d in sa],
                b=[d.value for d in sb],
            )
        if len(sa) == 3 and sa[0].value != sb[0].value:
            return self.error("AR202", e.span, f"dot of {shape_text(sa)} and {shape_text(sb)}: batch sizes differ")
        for dim, what in ((sa[-2], "M"), (sb[-1], "N"), (sa[-1], "K")):
            if dim.value < 16:
                shown = f"{dim.label} = {dim.value}" if dim.label else str(dim.value)
                return self.error("AR215", e.span, f"dot needs {what} of at least 16, not {shown}")
        if a.type.dtype != b.type.dtype:
            return self.error(
                "AR204", e.span, f"dot operands are {a.type.dtype} and {b.type.dtype}; cast one so they match"
            )
        if a.type.dtype == BOOL or a.type.dtype.kind == "uint" or (a.type.dtype.is_integer and a.type.dtype.bits != 8):
            return self.error("AR204", e.span, f"dot takes floating-point or i8 tiles, not {a.type.dtype}")
        shape = (*sa[:-1], sb[-1])
        out_dtype = I32 if a.type.dtype.is_integer else F32
        if "out_dtype" in args:
            out_dtype = dtype_arg(self, args["out_dtype"])
            if out_dtype is None:
                return ERROR
        operands = [a.value, b.value]
        if "acc" in args and not isinstance(args["acc"], ast.NoneLit):
            acc = value_arg(self, args["acc"])
            if isinstance(acc.type, ErrorT):
                return ERROR
            if not isinstance(acc.type, TileT) or tuple(d.value for d in acc.type.shape) != tuple(
                d.value for d in shape
            ):
                return self.error(
                    "AR202",
                    args["acc"].span,
                    f"the accumulator must be {shape_text(shape)}, not {acc.type}",
                )
            out_dtype = acc.type.dtype
            operands.append(acc.value)
        precision, constant = "ieee", None
        if "input_precision" in args:
            v = self.expr(args["input_precision"])
            if isinstance(v.type, ErrorT):
                return ERROR
            if isinstance(v.type, StrT) and v.type.constant and v.type.value not in INPUT_PRECISIONS:
                return ERROR  # a string tile constant with a bad value: reported at its declaration
            if not isinstance(v.type, StrT) or v.type.value not in INPUT_PRECISIONS:
                choices = ", ".join(f'"{p}"' for p in INPUT_PRECISIONS)
                message = f"input_precision is one of {choices}, or a string tile constant naming one"
                return self.error("AR218", args["input_precision"].span, message)
            precision, constant = v.type.value, v.type.constant
        result_type = TileT(out_dtype, shape)
        # precision_constant: the string tile constant that chose it (codegen passes the constexpr; a tune list
        # varies it), or None for a literal
        attrs = {"input_precision": precision, "precision_constant": constant, "out_dtype": out_dtype}
        return V(result_type, self.emit("dot", operands, result_type, e.span, **attrs), span=e.span)

    @type_rule(*FLOAT_MATH, "abs")
    def call_math(self, e: ast.Call, name: str) -> V:
        args = bind_args(self, e, ["x"], 1)
        if args is None:
            return ERROR
        x = value_arg(self, args["x"])
        if isinstance(x.type, ErrorT):
            return ERROR
        if name in FLOAT_MATH and not x.type.dtype.is_float:
            if is_weak(x.type):
                x = self.cast(x, F32, e.span)
            else:
                return self.error(
                    "AR204", e.span, f"{name} needs floating point, not {x.type.dtype}; convert with .to(f32)"
                )
        result_type = TileT(x.type.dtype, x.type.shape) if isinstance(x.type, TileT) else ScalarT(x.type.dtype)
        return V(result_type, self.emit("math", [x.value], result_type, e.span, fn=name), span=e.span)

    @type_rule("maximum", "minimum")
    def call_maximum(self, e: ast.Call, name: str) -> V:
        args = bind_args(self, e, ["a", "b"], 2)
        if args is None:
            return ERROR
        a, b = value_arg(self, args["a"]), value_arg(self, args["b"])
        if isinstance(a.type, ErrorT) or isinstance(b.type, ErrorT):
            return ERROR
        shape = self.broadcast_or_error(a, b, e.span, f"arguments of {name}")
        if shape is None:
            return ERROR
        dtype = result_dtype(a.type.dtype, is_weak(a.type), b.type.dtype, is_weak(b.type))
        result_type = self.make_type(dtype, shape)
        return V(result_type, self.emit("math", [a.value, b.value], result_type, e.span, fn=name), span=e.span)

    @type_rule("where")
    def call_where(self, e: ast.Call, name: str) -> V:
        args = bind_args(self, e, ["cond", "a", "b"], 3)
        if args is None:
            return ERROR
        c, a, b = (value_arg(self, args[k]) for k in ("cond", "a", "b"))
        if any(isinstance(v.type, ErrorT) for v in (c, a, b)):
            return ERROR
        if c.type.dtype != BOOL:
            return self.error("AR204", args["cond"].span, f"where's condition is boolean, not {c.type.dtype}")
        shape = self.broadcast_or_error(a, b, e.span, "the choices of where")
        if shape is None:
            return ERROR
        shape = self.broadcast_or_error(c, V(self.make_type(BOOL, shape)), e.span, "where's condition and choices")
        if shape is None:
            return ERROR
        dtype = result_dtype(a.type.dtype, is_weak(a.type), b.type.dtype, is_weak(b.type))
        result_type = self.make_type(dtype, shape)
        return V(result_type, self.emit("where", [c.value, a.value, b.value], result_type, e.span), span=e.span)

    @type_rule("cdiv")
    def call_cdiv(self, e: ast.Call, name: str) -> V:
        args = bind_args(self, e, ["a", "b"], 2)
        if args is None:
            return ERROR
        a, b = value_arg(self, args["a"]), value_arg(self, args["b"])
        if isinstance(a.type, ErrorT) or isinstance(b.type, ErrorT):
            return ERROR
        for v, part in ((a, args["a"]), (b, args["b"])):
            if not isinstance(v.type, ScalarT) or not v.type.dtype.is_integer:
                return self.error("AR204", part.span, f"cdiv takes integer scalars, not {v.type}")
        if isinstance(a.const, int) and isinstance(b.const, int) and b.const:
            value = cdiv(a.const, b.const)
            source = None
            if self.constant_expr(a) or self.constant_expr(b):
                source = f"cdiv({self.constant_expr(a) or a.const}, {self.constant_expr(b) or b.const})"
            return self.constant(value, ScalarT(I32, value, True), e.span, source)
        result_type = ScalarT(result_dtype(a.type.dtype, a.type.weak, b.type.dtype, b.type.weak))
        return V(result_type, self.emit("cdiv", [a.value, b.value], result_type, e.span), span=e.span)

    @type_rule(*REDUCTIONS)
    def call_reduce(self, e: ast.Call, name: str) -> V:
        args = bind_args(self, e, ["x", "axis", "keep_dims"], 2)
        if args is None:
            return ERROR
        x = value_arg(self, args["x"])
        if isinstance(x.type, ErrorT):
            return ERROR
        if not isinstance(x.type, TileT):
            hint = f"; for two values use {'maximum' if name == 'max' else 'minimum'}" if name in ("max", "min") else ""
            return self.error("AR216", args["x"].span, f"{name} reduces a tile, not {x.type}{hint}")
        axis = axis_arg(self, args["axis"], len(x.type.shape))
        if axis is None:
            return ERROR
        keep = False
        if "keep_dims" in args:
            keep = constant_arg(self, args["keep_dims"], "keep_dims", (bool, int))
            if keep is None:
                return ERROR
            keep = bool(keep)
        shape = list(x.type.shape)
        if keep:
            shape[axis] = Dim(1)
        else:
            shape.pop(axis)
        dtype = I32 if name.startswith("arg") else x.type.dtype
        if name == "sum" and dtype.is_integer and dtype.bits < 32:
            dtype = I32  # as Triton's tl.sum widens narrow integers
        result_type = TileT(dtype, tuple(shape)) if shape else ScalarT(dtype)
        attrs = {"fn": name, "axis": axis, "keep_dims": keep}
        return V(result_type, self.emit("reduce", [x.value], result_type, e.span, **attrs), span=e.span)

    # ---- shapes and dtypes ----------------------------------------------------------------------
    @type_rule("cast")
    def call_cast(self, e: ast.Call, name: str) -> V:
        args = bind_args(self, e, ["x", "dtype"], 2)
        if args is None:
            return ERROR
        x = value_arg(self, args["x"])
        dtype = dtype_arg(self, args["dtype"])
        if isinstance(x.type, ErrorT) or dtype is None:
            return ERROR
        return self.cast(x, dtype, e.span)

    @type_rule("reshape")
    def call_reshape(self, e: ast.Call, name: str) -> V:
        args = bind_args(self, e, ["x", "shape"], 2)
        if args is None:
            return ERROR
        x = value_arg(self, args["x"])
        shape, sources = shape_arg_sources(self, args["shape"])
        if isinstance(x.type, ErrorT) or shape is None:
            return ERROR
        before = math.prod(d.value for d in shape_of(x.type))
        after = math.prod(d.value for d in shape)
        if before != after:
            return self.error(
                "AR214",
                e.span,
                f"reshape from {shape_text(shape_of(x.type))} ({before} elements) to "
                f"{shape_text(shape)} ({after} elements)",
            )
        result_type = TileT(x.type.dtype, shape)
        op_value = self.emit("reshape", [x.value], result_type, e.span, shape=shape, shape_exprs=sources)
        return V(result_type, op_value, span=e.span)

    @type_rule("broadcast_to")
    def call_broadcast_to(self, e: ast.Call, name: str) -> V:
        args = bind_args(self, e, ["x", "shape"], 2)
        if args is None:
            return ERROR
        x = value_arg(self, args["x"])
        shape, sources = shape_arg_sources(self, args["shape"])
        if isinstance(x.type, ErrorT) or shape is None:
            return ERROR
        if not fits(shape_of(x.type), shape):
            return self.error(
                "AR201", e.span, f"{shape_text(shape_of(x.type))} does not broadcast to {shape_text(shape)}"
            )
        result_type = TileT(x.type.dtype, shape)
        op_value = self.emit("broadcast_to", [x.value], result_type, e.span, shape=shape, shape_exprs=sources)
        return V(result_type, op_value, span=e.span)

    @type_rule("trans")
    def call_trans(self, e: ast.Call, name: str) -> V:
        args = bind_args(self, e, ["x"], 1)
        if args is None:
            return ERROR
        x = value_arg(self, args["x"])
        if isinstance(x.type, ErrorT):
            return ERROR
        if not isinstance(x.type, TileT) or len(x.type.shape) != 2:
            return self.error("AR213", e.span, f"trans takes a 2-D tile, not {x.type}")
        result_type = TileT(x.type.dtype, (x.type.shape[1], x.type.shape[0]))
        return V(result_type, self.emit("trans", [x.value], result_type, e.span), span=e.span)

    @type_rule("multiple_of", "max_contiguous")
    def call_multiple_of(self, e: ast.Call, name: str) -> V:
        args = bind_args(self, e, ["x", "n"], 2)
        if args is None:
            return ERROR
        x = value_arg(self, args["x"])
        n = constant_arg(self, args["n"], f"{name}'s n")
        if isinstance(x.type, ErrorT) or n is None:
            return ERROR
        if not x.type.dtype.is_integer:
            return self.error("AR204", args["x"].span, f"{name} takes integers, not {x.type.dtype}")
        result_type = x.type
        return V(result_type, self.emit("hint", [x.value], result_type, e.span, fn=name, n=n), span=e.span)

    # ---- tags -----------------------------------------------------------------------------------
    def tag_values(self, e: ast.Call) -> tuple[V, list[str], list[ir.Value]] | None:
        if len(e.args) != 1 or not e.keywords:
            self.error("AR207", e.span, f"{signature(e.func.id)}")
            return None
        x = value_arg(self, e.args[0])
        names, values = [], []
        for keyword in e.keywords:
            v = value_arg(self, keyword.value)
            if isinstance(v.type, ErrorT):
                return None
            if not isinstance(v.type, ScalarT) or not v.type.dtype.is_integer:
                self.error("AR204", keyword.value.span, f"a tag value is an integer scalar, not {v.type}")
                return None
            names.append(keyword.name)
            values.append(v.value)
        if isinstance(x.type, ErrorT):
            return None
        return x, names, values

    @type_rule("tag")
    def call_tag(self, e: ast.Call, name: str) -> V:
        parts = self.tag_values(e)
        if parts is None:
            return ERROR
        x, names, values = parts
        result = self.emit("tag", [x.value, *values], x.type, e.span, names=names)
        tagged = V(x.type, result, span=e.span)
        if isinstance(e.args[0], ast.Name):
            binding = self.scope.lookup(e.args[0].id)
            if binding is not None and binding.kind == "variable":
                self.bind(e.args[0], tagged)
        return tagged

    @type_rule("partition")
    def call_partition(self, e: ast.Call, name: str) -> V:
        """A data fact: `requires partition(offsets, M)` (offsets[0] == 0 <= ... <= offsets[last] == M)."""
        return self.tensor_count_fact(e, "partition")

    @type_rule("in_range")
    def call_in_range(self, e: ast.Call, name: str) -> V:
        """A data fact: `requires in_range(target, 0, V)` (every element of target lies in 0 <= target < V)."""
        if not self.in_requires:
            return self.error("AR216", e.span, "in_range(T, lo, hi) states a data fact and belongs in `requires`")
        args = bind_args(self, e, ["T", "lo", "hi"], 3)
        if args is None:
            return ERROR
        tensor = self.expr(args["T"])
        lo, hi = value_arg(self, args["lo"]), value_arg(self, args["hi"])
        if any(isinstance(v.type, ErrorT) for v in (tensor, lo, hi)):
            return ERROR
        if not isinstance(tensor.type, TensorT) or not tensor.type.dtype.is_integer:
            return self.error("AR204", args["T"].span, f"in_range takes an integer tensor, not {tensor.type}")
        for name, bound in (("lo", lo), ("hi", hi)):
            if not isinstance(bound.type, ScalarT) or not bound.type.dtype.is_integer:
                return self.error("AR204", args[name].span, f"in_range's {name} is an integer scalar, not {bound.type}")
        result_type = ScalarT(BOOL)
        return V(
            result_type, self.emit("in_range", [tensor.value, lo.value, hi.value], result_type, e.span), span=e.span
        )

    @type_rule("permutation")
    def call_permutation(self, e: ast.Call, name: str) -> V:
        """A data fact: `requires permutation(sorted_ids, R)` (each of 0..R-1 once, the other elements >= R)."""
        return self.tensor_count_fact(e, "permutation")

    def tensor_count_fact(self, e: ast.Call, fact: str) -> V:
        """A data fact `fact(T, n)` about a 1-D integer tensor T and an integer scalar n (partition, permutation)."""
        if not self.in_requires:
            return self.error("AR216", e.span, f"{fact}(T, n) states a data fact and belongs in `requires`")
        args = bind_args(self, e, ["T", "n"], 2)
        if args is None:
            return ERROR
        tensor = self.expr(args["T"])
        n = value_arg(self, args["n"])
        if isinstance(tensor.type, ErrorT) or isinstance(n.type, ErrorT):
            return ERROR
        if not isinstance(tensor.type, TensorT) or len(tensor.type.shape) != 1 or not tensor.type.dtype.is_integer:
            return self.error("AR204", args["T"].span, f"{fact} takes a 1-D integer tensor, not {tensor.type}")
        if not isinstance(n.type, ScalarT) or not n.type.dtype.is_integer:
            return self.error("AR204", args["n"].span, f"{fact}'s n is an integer scalar, not {n.type}")
        result_type = ScalarT(BOOL)
        return V(result_type, self.emit(fact, [tensor.value, n.value], result_type, e.span), span=e.span)

    @type_rule("assert_tag")
    def call_assert_tag(self, e: ast.Call, name: str) -> V:
        if not e.keywords and len(e.args) == 1:
            self.assertion("assert", e.args[0], e.span)
            return V(NoneT(), span=e.span)
        self.in_assertion = True
        try:
            parts = self.tag_values(e)
        finally:
            self.in_assertion = False
        if parts is None:
            return ERROR
        x, names, values = parts
        self.emit("assert_tag", [x.value, *values], None, e.span, names=names)
        return V(NoneT(), span=e.span)
