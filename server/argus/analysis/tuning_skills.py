"""Two built-in skill providers behind the skill interface: deeper software pipelining (`policy num_stages`) and
retuning a `tune`-listed tile constant. Both are guarded by the shared memory the kernel needs on an H200, the
estimate `argus check` also checks every tune configuration with (argus.dsl.resources, calibrated against
sm_90 compiles: docs/codegen.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from argus.analysis import lookup
from argus.dsl import ast, ir
from argus.dsl.check import CheckResult, check_source
from argus.dsl.kernel_analysis import constant_text
from argus.dsl.resources import SHARED_MEMORY_LIMIT, kib, num_stages, pipelined_bytes, shared_memory
from argus.dsl.spans import Span
from argus.skills.provider import Edit, SkillAction, SkillProvider, SkillRequest
from argus.skills.text import apply_edits  # re-exported: tests use it
from argus.skills.transforms.settings import setting_node


def kernel_at(check: CheckResult, line: int) -> tuple[ast.Kernel, ir.KernelIR] | None:
    """The kernel around `line`, when it was analyzed (the tuning steps need its IR)."""
    found = lookup.kernel_at(check, line)
    return None if found is None or found[1] is None else (found[0], found[1])


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
        needed = shared_memory(kernel_ir, {"num_stages": current + 1}, kernel)
        if needed > SHARED_MEMORY_LIMIT:
            reason = (
                f"{current + 1} stages need {kib(needed)} of shared memory ({kib(per_stage)} of dot operands a "
                f"stage); an H200 program has at most {kib(SHARED_MEMORY_LIMIT)}"
            )
            return [SkillAction(skill, title, failed_precondition=reason)]
        setting = setting_node(kernel, "num_stages", ast.PolicyDecl)
        if setting is not None and setting.tune is not None:
            reason = "num_stages has a `tune` list; the tuner chooses its value"
            return [SkillAction(skill, title, failed_precondition=reason)]
        edit = self.edit(kernel, setting, current + 1)
        detail = f"shared memory {kib(shared_memory(kernel_ir, None, kernel))} → {kib(needed)}"
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
    def action(
        request: SkillRequest, kernel: ast.Kernel, setting: ast.Setting, old: int | float | str, new: int | float | str
    ) -> SkillAction:
        title = f"Retune {setting.name} = {old} → {new}"
        skill = f"retune.{setting.name}"
        edit = Edit(setting.value.span, constant_text(new))
        edited = check_source(apply_edits(request.text, (edit,)))
        errors_before = sum(d.severity.value == "error" for d in request.check.diagnostics)
        new_errors = [d for d in edited.diagnostics if d.severity.value == "error"]
        if len(new_errors) > errors_before:
            first = new_errors[0]
            return SkillAction(skill, title, failed_precondition=f"the kernel would not check: {first.message}")
        retuned = edited.analysis.kernels.get(kernel.name)
        if retuned is not None and pipelined_bytes(retuned) is not None:
            stages, needed = num_stages(retuned), shared_memory(retuned)
            if needed > SHARED_MEMORY_LIMIT:
                reason = (
                    f"{setting.name} = {new} with {stages} stages needs {kib(needed)} of shared memory; an H200 "
                    f"program has at most {kib(SHARED_MEMORY_LIMIT)}"
                )
                return SkillAction(skill, title, failed_precondition=reason)
            return SkillAction(skill, title, edits=(edit,), detail=f"{kib(needed)} of shared memory")
        return SkillAction(skill, title, edits=(edit,))


def builtin_providers() -> list[SkillProvider]:
    return [PipeliningProvider(), RetuneProvider()]
