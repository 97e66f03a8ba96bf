"""Type rules of what a kernel states rather than computes: compiler hints (multiple_of, max_contiguous), which the
verifier proves, and the data facts of `requires` (partition, in_range, permutation), which the launcher checks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from argus.dsl import ast
from argus.dsl.calls.arguments import bind_args, constant_arg, value_arg
from argus.dsl.calls.table import type_rule
from argus.dsl.scope import ERROR, V
from argus.dsl.types import BOOL, ErrorT, ScalarT, TensorT

if TYPE_CHECKING:
    from argus.dsl.kernel_analysis import KernelAnalyzer


@type_rule("multiple_of", "max_contiguous")
def call_multiple_of(an: KernelAnalyzer, e: ast.Call, name: str) -> V:
    args = bind_args(an, e, ["x", "n"], 2)
    if args is None:
        return ERROR
    x = value_arg(an, args["x"])
    n = constant_arg(an, args["n"], f"{name}'s n")
    if isinstance(x.type, ErrorT) or n is None:
        return ERROR
    if not x.type.dtype.is_integer:
        return an.error("AR204", args["x"].span, f"{name} takes integers, not {x.type.dtype}")
    result_type = x.type
    return V(result_type, an.emit("hint", [x.value], result_type, e.span, fn=name, n=n), span=e.span)


@type_rule("partition")
def call_partition(an: KernelAnalyzer, e: ast.Call, name: str) -> V:
    """A data fact: `requires partition(offsets, M)` (offsets[0] == 0 <= ... <= offsets[last] == M)."""
    return tensor_count_fact(an, e, "partition")


@type_rule("in_range")
def call_in_range(an: KernelAnalyzer, e: ast.Call, name: str) -> V:
    """A data fact: `requires in_range(target, 0, V)` (every element of target lies in 0 <= target < V), or with
    `ignore=-100` every element lies there or equals -100 (PyTorch's ignore_index of class targets)."""
    if not an.in_requires:
        return an.error("AR216", e.span, "in_range(T, lo, hi) states a data fact and belongs in `requires`")
    args = bind_args(an, e, ["T", "lo", "hi", "ignore"], 3)
    if args is None:
        return ERROR
    tensor = an.expr(args["T"])
    bounds = {name: value_arg(an, args[name]) for name in ("lo", "hi", "ignore") if name in args}
    if any(isinstance(v.type, ErrorT) for v in (tensor, *bounds.values())):
        return ERROR
    if not isinstance(tensor.type, TensorT) or not tensor.type.dtype.is_integer:
        return an.error("AR204", args["T"].span, f"in_range takes an integer tensor, not {tensor.type}")
    if tensor.type.out:
        return written_fact(an, args["T"], tensor, "in_range")
    for name, bound in bounds.items():
        if not isinstance(bound.type, ScalarT) or not bound.type.dtype.is_integer:
            return an.error("AR204", args[name].span, f"in_range's {name} is an integer scalar, not {bound.type}")
    result_type = ScalarT(BOOL)
    operands = [tensor.value, *(bound.value for bound in bounds.values())]
    return V(result_type, an.emit("in_range", operands, result_type, e.span), span=e.span)


@type_rule("permutation")
def call_permutation(an: KernelAnalyzer, e: ast.Call, name: str) -> V:
    """A data fact: `requires permutation(sorted_ids, R)` (each of 0..R-1 once, the other elements >= R)."""
    return tensor_count_fact(an, e, "permutation")


def tensor_count_fact(an: KernelAnalyzer, e: ast.Call, fact: str) -> V:
    """A data fact `fact(T, n)` about a 1-D integer tensor T and an integer scalar n (partition, permutation)."""
    if not an.in_requires:
        return an.error("AR216", e.span, f"{fact}(T, n) states a data fact and belongs in `requires`")
    args = bind_args(an, e, ["T", "n"], 2)
    if args is None:
        return ERROR
    tensor = an.expr(args["T"])
    n = value_arg(an, args["n"])
    if isinstance(tensor.type, ErrorT) or isinstance(n.type, ErrorT):
        return ERROR
    if not isinstance(tensor.type, TensorT) or len(tensor.type.shape) != 1 or not tensor.type.dtype.is_integer:
        return an.error("AR204", args["T"].span, f"{fact} takes a 1-D integer tensor, not {tensor.type}")
    if not isinstance(n.type, ScalarT) or not n.type.dtype.is_integer:
        return an.error("AR204", args["n"].span, f"{fact}'s n is an integer scalar, not {n.type}")
    if tensor.type.out:
        return written_fact(an, args["T"], tensor, fact)
    result_type = ScalarT(BOOL)
    return V(result_type, an.emit(fact, [tensor.value, n.value], result_type, e.span), span=e.span)


def written_fact(an: KernelAnalyzer, expr: ast.Expr, tensor: V, fact: str) -> V:
    """A data fact holds of an input's contents for the whole launch; a tensor the kernel writes (`out`, `inout`)
    may stop holding it after the first store, and the verifier would still assume it."""
    name = tensor.value.name or "T"
    message = f"{fact} states a fact about an input's contents; `{name}` is written by the kernel ({tensor.type})"
    return an.error("AR216", expr.span, message)
