"""The input precision of an f32 dot: exact fp32 (`ieee`, CUDA cores), three tf32 tensor-core products
(`tf32x3`, about fp32 accuracy) or one (`tf32`, 10 mantissa bits). A step toward the tensor cores is taken only
where the accuracy rule (argus.dsl.accuracy) says the new precision keeps the tolerance of every output the
dot feeds, at the kernel's longest reduction over its size sets; otherwise the rule's reason is the refusal.

Two forms: a literal, `dot(a, b, acc, input_precision="ieee")` (or no keyword: ieee), whose string is
rewritten; and a string tile constant, `tile PREC = "tf32x3" tune ["ieee", "tf32x3", "tf32"]` passed as
`input_precision=PREC`, whose value moves to the next faster value of its tune list, or of ieee → tf32x3 → tf32
past the list's end (a value the list lacks is added to it, so the list keeps its default, AR409). The inverse
moves back to the most accurate precision the form allows: `"ieee"` for a literal, the most accurate value of
the tune list for a constant.

The accuracy is judged as the checker's AR219 judges it: at every output the dot's result reaches, in every
size set, with that output's reduction length (the sizes it sums over) and the reference's declared tolerance.
"""

from __future__ import annotations

from dataclasses import dataclass

from argus.dsl import ast
from argus.dsl.spans import Span
from argus.skills.provider import Edit
from argus.skills.transforms.base import Application, Check, Transform
from argus.skills.transforms.dots import argument, dot_calls, dot_op, operand_dtype
from argus.skills.transforms.settings import setting_node

# most accurate first; the forward's default steps are the three the CPU interpreter runs
ORDER = ("ieee", "bf16x6", "tf32x3", "bf16x3", "tf32")
LADDER = ("ieee", "tf32x3", "tf32")


def rank(precision: str) -> int:
    return ORDER.index(precision) if precision in ORDER else -1


def keeps_accuracy(doc, kernel: ast.Kernel, call: ast.Call, precision: str) -> Check:
    """The accuracy rule of argus.dsl.accuracy, as the checker's AR219 applies it: at every output the dot's
    result reaches, in every size set, with the output's reduction length and its declared tolerance."""
    from argus.dsl import accuracy

    facts = doc.facts[kernel.name]
    op = dot_op(facts, call)
    if facts.kernel_ir is None or op is None:
        return Check("keeps_accuracy", False, "the kernel does not check, so the dot's outputs are unknown")
    blocks = [i for i in doc.check.module.items if getattr(i, "kernel", None) == kernel.name]
    reference = next((b for b in blocks if isinstance(b, ast.PythonBlock) and b.kind == "reference"), None)
    sizes = next((b for b in blocks if isinstance(b, ast.Sizes)), None)
    declared = accuracy.declared_tolerances(reference, facts.kernel_ir)
    factors = accuracy.reduction_factors(facts.kernel_ir)
    sets = accuracy.size_sets(sizes, facts.kernel_ir) or {"": {}}
    for output in accuracy.dot_outputs(facts.kernel_ir, op):
        tensor = facts.kernel_ir.tensor(output)
        if tensor is None or not tensor.type.dtype.is_float:
            continue
        dtype = tensor.type.dtype.name
        for set_name, values in sets.items():
            length = accuracy.reduction_length(factors.get(output, []), values)
            try:
                keeps, why = accuracy.precision_keeps_accuracy(precision, dtype, length, declared.get(output))
            except ValueError as problem:
                return Check("keeps_accuracy", False, str(problem))
            if not keeps:
                where = f" in size set `{set_name}`" if set_name else ""
                return Check("keeps_accuracy", False, f"`{output}` ({dtype}){where}: {why}")
    return Check("keeps_accuracy", True)


def str_setting(kernel: ast.Kernel, name: str) -> ast.Setting | None:
    setting = setting_node(kernel, name, ast.TileDecl)
    return setting if setting is not None and isinstance(setting.value, ast.Str) else None


def str_tune(setting: ast.Setting) -> list[str]:
    if setting.tune is None:
        return []
    return [e.value for e in setting.tune.elts if isinstance(e, ast.Str)]


def quoted(value: str) -> str:
    return f'"{value}"'


@dataclass(frozen=True)
class Precision(Transform):
    name: str = "precision"
    title: str = "Tensor-core precision"
    intent: str = (
        "run an f32 dot on the tensor cores: three tf32 products (tf32x3, about fp32 accuracy) or one (tf32) "
        "instead of exact fp32 on the CUDA cores, where the output's tolerance allows it at the kernel's K"
    )
    anchor: str = (
        'a dot of f32 tiles with `input_precision="ieee"` (or none), or with `input_precision=PREC` for a string '
        "tile constant PREC"
    )
    preconditions: tuple[str, ...] = ("f32_operands", "keeps_accuracy", "still_checks")
    setting_is_skill: bool = False  # one card for `input_precision="ieee"`, none, and PREC of a tune list

    def restoring(self, inverse: Application) -> dict:
        params = {k: v for k, v in inverse.params.items() if k not in ("from", "to")}
        return {**params, "to": inverse.params["from"]}

    def sites(self, doc, kernel, facts, params) -> list[Application]:
        found = []
        constants_seen: set[str] = set()
        for index, call in enumerate(dot_calls(kernel)):
            if "dot" in params and params["dot"] != index:
                continue
            given = argument(call, 3, "input_precision")
            dtype = operand_dtype(facts, call)
            wide = Check(
                "f32_operands",
                dtype == "f32",
                ""
                if dtype == "f32"
                else f"the dot's operands are {dtype}: input_precision changes only an f32 dot (a 16-bit dot runs "
                "on the tensor cores as it is)",
            )
            if isinstance(given, ast.Name):
                setting = str_setting(kernel, given.id)
                if setting is None or given.id in constants_seen:
                    continue
                if "setting" in params and params["setting"] != given.id:
                    continue
                constants_seen.add(given.id)
                users = [c for c in dot_calls(kernel) if names_of(argument(c, 3, "input_precision")) == given.id]
                app = self.constant_site(doc, kernel, users, setting, params)
            elif given is None or isinstance(given, ast.Str):
                if "setting" in params:
                    continue
                app = self.literal_site(doc, kernel, call, index, given, params, wide)
            else:
                continue
            if app is not None:
                found.append(app)
        return found

    def literal_site(self, doc, kernel, call, index, given, params, wide) -> Application | None:
        old = given.value if isinstance(given, ast.Str) else "ieee"
        new = params.get("to") or next_step(old, list(LADDER))
        if new is None or new == old:
            return None
        checks = [wide, keeps_accuracy(doc, kernel, call, new)]
        if isinstance(given, ast.Str):
            edit = Edit(given.span, quoted(new))
        else:
            last = (call.keywords[-1] if call.keywords else call.args[-1]).span
            at = Span(last.end_line, last.end_col, last.end_line, last.end_col)
            edit = Edit(at, f", input_precision={quoted(new)}")
        title = f"{self.title}: dot input_precision {old} → {new}"
        return self.app("forward", kernel, call.span, title, {"dot": index, "from": old, "to": new}, [edit], checks)

    def constant_site(self, doc, kernel, users, setting, params) -> Application | None:
        """PREC's value, for every dot that takes it: each must be f32 and keep its outputs' tolerance."""
        old = setting.value.value
        tune = str_tune(setting)
        new = params.get("to") or next_step(old, tune) or next_step(old, list(LADDER))
        if new is None or new == old:
            return None
        facts = doc.facts[kernel.name]
        narrow = [d for d in (operand_dtype(facts, c) for c in users) if d != "f32"]
        wide = Check(
            "f32_operands",
            not narrow,
            f"a dot that takes {setting.name} has {narrow[0]} operands: input_precision changes only an f32 dot"
            if narrow
            else "",
        )
        accuracy = [keeps_accuracy(doc, kernel, c, new) for c in users]
        checks = [wide, next((c for c in accuracy if not c.holds), Check("keeps_accuracy", True))]
        edits = [Edit(setting.value.span, quoted(new))]
        if setting.tune is not None and new not in tune:
            # the tune list must keep the default (AR409): the new precision joins it, in accuracy order
            values = sorted({*tune, new}, key=rank)
            edits.append(Edit(setting.tune.span, "[" + ", ".join(quoted(v) for v in values) + "]"))
        title = f"{self.title}: {setting.name} {old} → {new}"
        params_out = {"setting": setting.name, "from": old, "to": new}
        return self.app("forward", kernel, setting.span, title, params_out, edits, checks)

    def inverse_sites(self, doc, kernel, facts) -> list[Application]:
        found = []
        constants_seen: set[str] = set()
        for index, call in enumerate(dot_calls(kernel)):
            given = argument(call, 3, "input_precision")
            if isinstance(given, ast.Str) and given.value != "ieee" and operand_dtype(facts, call) == "f32":
                title = f"undo tensor-core precision: dot input_precision {given.value} → ieee"
                params = {"dot": index, "from": given.value, "to": "ieee"}
                found.append(self.app("inverse", kernel, call.span, title, params, [Edit(given.span, '"ieee"')]))
            elif isinstance(given, ast.Name) and given.id not in constants_seen:
                setting = str_setting(kernel, given.id)
                if setting is None:
                    continue
                constants_seen.add(given.id)
                tune = [v for v in str_tune(setting) if v in ORDER]
                target = min(tune, key=rank) if tune else "ieee"
                if rank(target) >= rank(setting.value.value):
                    continue
                title = f"undo tensor-core precision: {setting.name} {setting.value.value} → {target}"
                params = {"setting": setting.name, "from": setting.value.value, "to": target}
                edit = Edit(setting.value.span, quoted(target))
                found.append(self.app("inverse", kernel, setting.span, title, params, [edit]))
        return found


def next_step(old: str, choices: list[str]) -> str | None:
    """The most accurate of the choices that is faster (less accurate) than old."""
    faster = [c for c in choices if rank(c) > rank(old)]
    return min(faster, key=rank) if faster else None


def names_of(expr) -> str | None:
    return expr.id if isinstance(expr, ast.Name) else None
