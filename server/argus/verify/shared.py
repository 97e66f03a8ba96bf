"""What every program of one launch shares: sizes, scalar parameters, tensor data, havoc variables, data facts."""

from __future__ import annotations

import itertools

import z3

from argus.dsl import ir
from argus.dsl.types import SizeExpr, TensorT
from argus.verify.facts import DataFacts
from argus.verify.model import Sym
from argus.verify.origins import TagOrigins
from argus.verify.values import is_bool, is_int

# each value's users (by id), and the values a loop body's yield flows to (by the yielded value's id)
Uses = tuple[dict[int, list[ir.Op]], dict[int, list[ir.Value]]]


class Shared:
    """Names every program of a launch shares: sizes, scalar parameters, tensor data, havoc counters."""

    def __init__(self, kernel: ir.KernelIR):
        self.kernel = kernel
        self.sizes = {name: z3.Int(name) for name in kernel.sizes}
        self.scalars: dict[int, z3.ExprRef | None] = {}
        self.tensors: dict[int, ir.ParamIR] = {}
        for param in kernel.params:
            if isinstance(param.type, TensorT):
                self.tensors[param.value.id] = param
            elif is_int(param.type):
                self.scalars[param.value.id] = z3.Int(param.name)
            elif is_bool(param.type):
                self.scalars[param.value.id] = z3.Bool(param.name)
            else:
                self.scalars[param.value.id] = None
        self.counter = itertools.count()
        self.gaps: set[str] = set()  # havoc variables standing for values the evaluator does not model
        self.carried: dict[str, bool] = {}  # havoc variable of a carried value -> its loop has an invariant
        self.functions: dict[str, z3.FuncDeclRef] = {}
        self.launch_values: dict[int, Sym] = {}
        self.facts = DataFacts()
        self._origins: TagOrigins | None = None
        self._summed_dots: set[int] | None = None
        self._uses: Uses | None = None

    @property
    def summed_dots(self) -> set[int]:
        """The ids of the `dot` ops whose sums an `atomic_add` adds up (AR315) or a `store` writes (AR316): only
        they record what they contract (dot.contraction), so a kernel without such a dot pays nothing for it."""
        if self._summed_dots is None:
            from argus.verify.contraction_coverage import stored_dots  # they import the evaluator
            from argus.verify.contributions import summed_dots

            self._summed_dots = summed_dots(self.kernel) | stored_dots(self.kernel)
        return self._summed_dots

    @property
    def uses(self) -> Uses:
        """Each value's users and where a loop carries what its body yields (infinite_rows.uses), built once."""
        if self._uses is None:
            from argus.verify.infinite_rows import uses

            self._uses = uses(self.kernel)
        return self._uses

    @property
    def origins(self) -> TagOrigins:
        """Where tags are set, for related information (built on first use)."""
        if self._origins is None:
            self._origins = TagOrigins(self.kernel)
        return self._origins

    def fresh(self, hint: str, sort: str = "int", gap: bool = True) -> z3.ExprRef:
        name = f"?{hint}#{next(self.counter)}"
        if gap:
            self.gaps.add(name)
        return z3.Bool(name) if sort == "bool" else z3.Int(name)

    def data(self, tensor: str, rank: int) -> z3.FuncDeclRef:
        if tensor not in self.functions:
            self.functions[tensor] = z3.Function(tensor, *([z3.IntSort()] * rank), z3.IntSort())
        return self.functions[tensor]

    def dims(self, param: ir.ParamIR) -> list[z3.ArithRef]:
        """The extents of the tensor as the kernel indexes it: a view's axis is the product of the stored axes it
        merges (`C * H * W`, a nonlinear term, the same one the body's `C * H * W` evaluates to)."""
        return [self.dim(d) for d in param.type.shape]

    def dim(self, d: SizeExpr) -> z3.ArithRef:
        if d.factors:
            product = self.dim(d.factors[0])
            for factor in d.factors[1:]:
                product = product * self.dim(factor)
            return product
        return z3.IntVal(d.offset) if d.symbol is None else self.sizes[d.symbol] + d.offset
