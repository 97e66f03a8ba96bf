"""What a transform may know of a kernel's problem: its declared size sets, evaluated with the tile constants'
defaults, so a precondition can be stated at the sizes the kernel will run at (the `large` set is what the gate
profiles)."""

from __future__ import annotations

from argus.dsl import ast
from argus.dsl.evaluate import Number, evaluate
from argus.skills.document import Document
from argus.skills.facts import KernelFacts


def size_sets(doc: Document, kernel: ast.Kernel) -> dict[str, dict[str, Number]]:
    """Every size set of the kernel's `sizes` block, name -> {size: value}; sets that do not evaluate are left
    out (the checker reports them)."""
    block = next((i for i in doc.check.module.items if isinstance(i, ast.Sizes) and i.kernel == kernel.name), None)
    if block is None:
        return {}
    constants = dict(doc.facts[kernel.name].constants) if kernel.name in doc.facts else {}
    found = {}
    for size_set in block.sets:
        env: dict[str, Number] = dict(constants)
        bound: dict[str, Number] = {}
        for binding in size_set.bindings:
            value = evaluate(binding.value, env)
            if value is None:
                break
            env[binding.name] = bound[binding.name] = value
        else:
            found[size_set.name] = bound
    return found


def profiled_sizes(doc: Document, kernel: ast.Kernel) -> tuple[str, dict[str, Number]] | None:
    """The set the gate profiles (`large`), else the set with the largest product of sizes."""
    sets = size_sets(doc, kernel)
    if not sets:
        return None
    if "large" in sets:
        return "large", sets["large"]
    name = max(sets, key=lambda n: product(sets[n].values()))
    return name, sets[name]


def product(values) -> float:
    total = 1.0
    for value in values:
        total *= abs(value) if isinstance(value, int | float) else 1
    return total


def value_at(expr: ast.Expr, facts: KernelFacts, sizes: dict[str, Number]) -> Number | None:
    """An expression of sizes and tile constants (a grid dimension, a loop bound) at these sizes."""
    return evaluate(expr, {**facts.constants, **sizes})


def described(sizes: dict[str, Number]) -> str:
    return ", ".join(f"{k} = {v}" for k, v in sizes.items())
