"""Facts about a kernel that skill preconditions are stated over, computed from the checker's result (AST and
IR) and, on request, the verifier. A precondition is a named predicate over these facts, never prose."""

from __future__ import annotations

from dataclasses import dataclass, field

from argus.dsl import ast, ir
from argus.dsl.check import CheckResult
from argus.dsl.resources import SHARED_MEMORY_LIMIT, num_stages, pipelined_bytes, shared_memory
from argus.dsl.unparse import unparse

RESOURCE_CODES = frozenset({"AR410"})  # a configuration over a resource limit; the kernel is well-formed


@dataclass(slots=True)
class KernelFacts:
    name: str
    source: ast.Kernel
    kernel_ir: ir.KernelIR | None
    constants: dict[str, int | float] = field(default_factory=dict)
    policy: dict[str, int | float] = field(default_factory=dict)
    tune: dict[str, list[int | float]] = field(default_factory=dict)
    divisible: set[tuple[str, str]] = field(default_factory=set)  # (S, B) with `requires S % B == 0`
    bounded: set[tuple[str, str]] = field(default_factory=set)  # (N, B) with `requires N <= B`
    stage_bytes: int | None = None  # shared memory of one pipeline stage of the dot operands
    stages: int = 3
    dot_in_loop: bool = False
    loaded: set[str] = field(default_factory=set)  # tensors some load reads
    stored: set[str] = field(default_factory=set)  # tensors some store or atomic_add writes
    check_errors: int = 0  # error diagnostics of the checker inside this kernel
    resource_errors: int = 0  # of those, the configuration's resource limits (AR410): the IR is whole all the same
    verify_errors: int | None = None  # the verifier's error diagnostics; None when it did not run

    @property
    def memory_carried(self) -> set[str]:
        """Tensors both read and written: a loop over them may carry a dependency through memory."""
        return self.loaded & self.stored

    def shared_memory(self, stages: int | None = None, overrides: dict | None = None) -> int | None:
        """The shared memory the kernel needs (argus.dsl.resources' estimate) at its declared configuration, or
        with `num_stages` and other settings changed; None without an IR."""
        if self.kernel_ir is None:
            return None
        changed = {**(overrides or {}), **({"num_stages": stages} if stages is not None else {})}
        return shared_memory(self.kernel_ir, changed, self.source)

    def fits_shared_memory(self, stages: int | None = None, overrides: dict | None = None) -> bool:
        needed = self.shared_memory(stages, overrides)
        return needed is None or needed <= SHARED_MEMORY_LIMIT


def requires_facts(kernel: ast.Kernel) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    divisible: set[tuple[str, str]] = set()
    bounded: set[tuple[str, str]] = set()
    for stmt in kernel.body:
        if not isinstance(stmt, ast.Requires):
            continue
        for cond in stmt.conditions:
            match cond:
                case ast.Compare(op="==", left=ast.BinOp(op="%", left=left, right=right), right=ast.Int(value=0)):
                    divisible.add((unparse(left), unparse(right)))
                case ast.Compare(op="<=", left=left, right=right):
                    bounded.add((unparse(left), unparse(right)))
    return divisible, bounded


def accessed_tensors(kernel: ast.Kernel) -> tuple[set[str], set[str]]:
    loaded: set[str] = set()
    stored: set[str] = set()
    for node in walk(kernel.body):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args:
            target = node.args[0]
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                if node.func.id == "load":
                    loaded.add(target.value.id)
                elif node.func.id in ("store", "atomic_add"):
                    stored.add(target.value.id)
    return loaded, stored


def walk(node):
    """Every AST node under `node` (statements, expressions, lists of them), depth first, in source order."""
    if isinstance(node, list):
        for item in node:
            yield from walk(item)
        return
    if node is None or not hasattr(node, "__dataclass_fields__"):
        return
    yield node
    for name in node.__dataclass_fields__:
        if name in ("span", "name_span", "attr_span", "kernel_span"):
            continue
        value = getattr(node, name)
        if isinstance(value, list) or hasattr(value, "__dataclass_fields__"):
            yield from walk(value)


def has_dot(node) -> bool:
    """A `dot` call somewhere under `node` (a statement, an expression or a list of them)."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "dot" for n in walk(node))


def dot_in_loop(kernel: ast.Kernel) -> bool:
    return any(isinstance(node, ast.For) and has_dot(node.body) for node in walk(kernel.body))


def kernel_facts(check: CheckResult, kernel: ast.Kernel) -> KernelFacts:
    kernel_ir = check.analysis.kernels.get(kernel.name)
    facts = KernelFacts(name=kernel.name, source=kernel, kernel_ir=kernel_ir)
    if kernel_ir is not None:
        facts.constants = {k: c.value for k, c in kernel_ir.constants.items()}
        facts.policy = {k: c.value for k, c in kernel_ir.policy.items()}
        facts.tune = {k: list(c.tune) for k, c in {**kernel_ir.constants, **kernel_ir.policy}.items() if c.tune}
        facts.stage_bytes = pipelined_bytes(kernel_ir)
        facts.stages = num_stages(kernel_ir)
    facts.divisible, facts.bounded = requires_facts(kernel)
    facts.dot_in_loop = dot_in_loop(kernel)
    facts.loaded, facts.stored = accessed_tensors(kernel)
    first, last = kernel.span.line, kernel.span.end_line
    errors = [d for d in check.diagnostics if d.severity.value == "error" and first <= d.range.start.line <= last]
    facts.check_errors = len(errors)
    facts.resource_errors = sum(d.code in RESOURCE_CODES for d in errors)
    return facts


def verify_errors(check: CheckResult, kernel: ast.Kernel, timeout_ms: int = 1000) -> int:
    """Error diagnostics the verifier reports inside the kernel (bounds, races, contraction, ...)."""
    from argus.verify import verify_check  # the verifier loads z3: only when a precondition asks for it

    result = verify_check(check, timeout_ms=timeout_ms)
    first, last = kernel.span.line, kernel.span.end_line
    return sum(d.severity.value == "error" and first <= d.range.start.line <= last for d in result.diagnostics)
