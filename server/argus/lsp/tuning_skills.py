"""Two built-in skill providers behind the skill interface, so the light bulb has real skills before the
skills library lands: deeper software pipelining (`policy num_stages`) and retuning a `tune`-listed tile
constant. Both are guarded by the shared memory the pipelined `dot` operands need on an H200.

The shared-memory figure is what Triton's pipeliner allocates for a loop: every tile the loop loads and feeds
to a `dot`, kept in `num_stages` buffers. The gate's sm_90 compile of examples/buggy/matmul_next_k.argus (fixed)
measured exactly these figures: 144 KiB at 3 stages and BK = 64, 192 KiB at 4 stages, and 288 KiB at BK = 128,
which it refused (sm_90 allows 232,448 bytes per program). Buffers outside loops (an epilogue's) are not
counted, so an enabled action can still be refused by the compile gate, which stays the judge.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from argus.dsl import ast, ir
from argus.dsl.check import CheckResult, check_source
from argus.dsl.spans import Span
from argus.dsl.types import TileT
from argus.skills.provider import Edit, SkillAction, SkillRequest

# sm_90: at most 227 KiB of shared memory per program (232,448 bytes), the H200's and H100's limit.
SHARED_MEMORY_LIMIT = 227 * 1024
DEFAULT_NUM_STAGES = 3  # Triton's default when `policy` does not say
PASS_THROUGH = {"cast", "trans", "expand_dims", "reshape", "broadcast_to", "tag", "hint"}


def kernel_at(check: CheckResult, line: int) -> tuple[ast.Kernel, ir.KernelIR] | None:
    for kernel in check.module.kernels:
        if kernel.span.line <= line <= kernel.span.end_line and kernel.name in check.analysis.kernels:
            return kernel, check.analysis.kernels[kernel.name]
    return None


def pipelined_bytes(kernel: ir.KernelIR) -> int | None:
    """Shared memory one pipeline stage needs: the bytes of every tile a loop loads and feeds to a `dot`
    (None when no loop has such a dot, so there is nothing to pipeline)."""
    found = False
    total = 0
    for op in ir.walk_ops(kernel.body):
        if op.kind != "for":
            continue
        inside = {id(o) for region in op.regions for o in ir.walk_ops(region)}
        for dot in (o for region in op.regions for o in ir.walk_ops(region) if o.kind == "dot"):
            for operand in dot.operands[:2]:
                if loaded_in(operand, inside) and isinstance(operand.type, TileT):
                    found = True
                    total += math.prod(d.value for d in operand.type.shape) * max(operand.type.dtype.bits, 8) // 8
    return total if found else None


def loaded_in(value: ir.Value, ops: set[int]) -> bool:
    while value.op is not None and value.op.kind in PASS_THROUGH and value.op.operands:
        value = value.op.operands[0]
    return value.op is not None and value.op.kind == "load" and id(value.op) in ops


def num_stages(kernel: ir.KernelIR) -> int:
    setting = kernel.policy.get("num_stages")
    return int(setting.value) if setting is not None else DEFAULT_NUM_STAGES


def kib(n: int) -> str:
    return f"{n / 1024:.0f} KiB"


def setting_node(kernel: ast.Kernel, name: str, decl_type: type) -> ast.Setting | None:
    for stmt in kernel.body:
        if isinstance(stmt, decl_type):
            for setting in stmt.settings:
                if setting.name == name:
                    return setting
    return None


def apply_edits(text: str, edits: tuple[Edit, ...]) -> str:
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(line: int, col: int) -> int:
        return starts[min(line, len(lines))] + col

    for edit in sorted(edits, key=lambda e: (e.span.line, e.span.col), reverse=True):
        begin, end = offset(edit.span.line, edit.span.col), offset(edit.span.end_line, edit.span.end_col)
        text = text[:begin] + edit.new_text + text[end:]
    return text


@dataclass(frozen=True)
class PipeliningProvider:
    """`policy num_stages` one deeper, where a loop feeds loaded tiles to a dot and the buffers still fit."""

    name: str = "pipelining"

    def actions(self, request: SkillRequest) -> list[SkillAction]:
        found = kernel_at(request.check, request.span.line)
        if found is None:
            return []
        kernel, kernel_ir = found
        current = num_stages(kernel_ir)
        title = f"Software pipelining: num_stages {current} → {current + 1}"
        skill = "pipelining.num_stages"
        per_stage = pipelined_bytes(kernel_ir)
        if per_stage is None:
            reason = f"needs a `for` loop whose `dot` reads tiles loaded in the loop; `{kernel.name}` has none"
            return [SkillAction(skill, title, failed_precondition=reason)]
        needed = per_stage * (current + 1)
        if needed > SHARED_MEMORY_LIMIT:
            reason = (
                f"{current + 1} stages need {kib(needed)} of shared memory for the dot operands "
                f"({kib(per_stage)} a stage); an H200 program has at most {kib(SHARED_MEMORY_LIMIT)}"
            )
            return [SkillAction(skill, title, failed_precondition=reason)]
        setting = setting_node(kernel, "num_stages", ast.PolicyDecl)
        if setting is not None and setting.tune is not None:
            reason = "num_stages has a `tune` list; the tuner chooses its value"
            return [SkillAction(skill, title, failed_precondition=reason)]
        edit = self.edit(kernel, setting, current + 1)
        detail = f"shared memory for the dot operands {kib(per_stage * current)} → {kib(needed)}"
        return [SkillAction(skill, title, edits=(edit,), detail=detail)]

    @staticmethod
    def edit(kernel: ast.Kernel, setting: ast.Setting | None, value: int) -> Edit:
        if setting is not None:
            return Edit(setting.value.span, str(value))
        policy = next((s for s in kernel.body if isinstance(s, ast.PolicyDecl)), None)
        if policy is not None:
            end = policy.settings[-1].span
            return Edit(Span(end.end_line, end.end_col, end.end_line, end.end_col), f", num_stages = {value}")
        first = kernel.body[0].span
        indent = " " * first.col
        return Edit(Span(first.line, 0, first.line, 0), f"{indent}policy num_stages = {value}\n")


@dataclass(frozen=True)
class RetuneProvider:
    """Another value from a tile constant's `tune` list, for the constants used on the cursor's line (or
    declared there), where the edited kernel still checks and its pipelined buffers still fit."""

    name: str = "retune"

    def actions(self, request: SkillRequest) -> list[SkillAction]:
        found = kernel_at(request.check, request.span.line)
        if found is None:
            return []
        kernel, kernel_ir = found
        lines = range(request.span.line, request.span.end_line + 1)
        names = {
            s.name
            for s in request.check.analysis.symbols
            if s.kind == "constant" and s.span.line in lines and kernel.span.line <= s.span.line <= kernel.span.end_line
        }
        actions = []
        for name in sorted(names, key=list(kernel_ir.constants).index):
            constant = kernel_ir.constants.get(name)
            setting = setting_node(kernel, name, ast.TileDecl)
            if constant is None or setting is None or not constant.tune:
                continue
            for value in constant.tune:
                if value != constant.value:
                    actions.append(self.action(request, kernel, setting, constant.value, value))
        return actions

    @staticmethod
    def action(request: SkillRequest, kernel: ast.Kernel, setting: ast.Setting, old, new) -> SkillAction:
        title = f"Retune {setting.name} = {old} → {new}"
        skill = f"retune.{setting.name}"
        edit = Edit(setting.value.span, str(new))
        edited = check_source(apply_edits(request.text, (edit,)))
        errors_before = sum(d.severity.value == "error" for d in request.check.diagnostics)
        new_errors = [d for d in edited.diagnostics if d.severity.value == "error"]
        if len(new_errors) > errors_before:
            first = new_errors[0]
            return SkillAction(skill, title, failed_precondition=f"the kernel would not check: {first.message}")
        retuned = edited.analysis.kernels.get(kernel.name)
        per_stage = pipelined_bytes(retuned) if retuned is not None else None
        if per_stage is not None:
            stages = num_stages(retuned)
            if per_stage * stages > SHARED_MEMORY_LIMIT:
                reason = (
                    f"{setting.name} = {new} with {stages} stages needs {kib(per_stage * stages)} of shared memory "
                    f"for the dot operands; an H200 program has at most {kib(SHARED_MEMORY_LIMIT)}"
                )
                return SkillAction(skill, title, failed_precondition=reason)
            return SkillAction(skill, title, edits=(edit,), detail=f"{kib(per_stage * stages)} of shared memory")
        return SkillAction(skill, title, edits=(edit,))


def builtin_providers() -> list:
    return [PipeliningProvider(), RetuneProvider()]
