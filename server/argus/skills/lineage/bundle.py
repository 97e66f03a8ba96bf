"""A CPU lineage sent to a GPU: gate bundles for every text the H200 must profile, and the way back.

`write` lays out, in one folder, a bundle for the expert (`base/`) and for every candidate that passed the CPU
gate (`<candidate id>/`), plus `run.sh`, which runs them all with profile on the GPU (the ceilings measured
once and shared) and writes `<name>.result.json` next to each. `read_back` reads those results, puts each into
its candidate, computes every slowdown against the text the candidate was derived from (the step's
`text_before`: the expert for step 1, the accepted candidate of the step before otherwise), and writes the
record as a GPU record. The steps stay the CPU walk's (the GPU's own rule, least slowdown first, needs
`argus lineage --device cuda`, that is argus on the GPU machine).
"""

from __future__ import annotations

import json
from pathlib import Path

from argus.gate import read_result, write_bundle
from argus.skills.context import with_compile
from argus.skills.lineage.record import Lineage

MANIFEST = "lineage.json"


def load(path: Path) -> Lineage:
    return Lineage.model_validate_json(Path(path).read_text(encoding="utf-8"))


def write(record_path: Path, out: Path) -> Path:
    record = load(record_path)
    out.mkdir(parents=True, exist_ok=True)
    texts = {"base": record.steps[0].text_before if record.steps else record.final_text}
    for step in record.steps:
        for candidate in step.candidates:
            if candidate.verdict == "accepted":
                texts[candidate.id] = step.text_after
            elif candidate.verdict == "passed":
                texts[candidate.id] = rebuild(step.text_before, record.kernel, candidate.transform, candidate.title)
    names = []
    for name, text in texts.items():
        if text is not None:
            write_bundle(text, out / name, path=record.expert, kernel=record.kernel)
            names.append(name)
    (out / MANIFEST).write_text(json.dumps({"record": str(record_path)}), encoding="utf-8")
    script = out / "run.sh"
    script.write_text(run_script(names, record.kernel), encoding="utf-8")
    return script


def run_script(names: list[str], kernel: str) -> str:
    """The expert first (it measures the ceilings, and its reference under torch.compile too), then every
    candidate, JOBS at a time: imports and compiles overlap while the GPU stages take turns (--gpu-lock)."""
    gate = (
        f"python3 NAME/run.py --device cuda --kernel {kernel} --stage compile --stage correct --stage profile "
        "--ceilings-file ceilings.json --gpu-lock $PWD/gpu.lock --out NAME.result.json"
    )
    candidates = " ".join(n for n in names if n != "base")
    return "\n".join(
        [
            "#!/bin/sh",
            "# Profile a CPU lineage's texts on a GPU; needs python3 with torch and triton. JOBS=N runs N at once.",
            "set -u",
            'cd "$(dirname "$0")"',
            gate.replace("NAME", "base") + " --references all || echo 'gate failed: base'",
            f"printf '%s\\n' {candidates} | xargs -r -P \"${{JOBS:-1}}\" -I NAME \\",
            f"  sh -c '{gate} --references eager || echo \"gate failed: NAME\"'",
            "",
        ]
    )


def rebuild(text: str, kernel: str, transform: str, title: str) -> str | None:
    from argus.skills.lineage.walker import candidates

    for app in candidates(text, kernel):
        if app.transform == transform and app.title == title:
            return app.result(text)
    return None


def read_back(folder: Path, out: Path | None = None) -> Path:
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    record_path = Path(manifest["record"])
    record = load(record_path)
    base = read_result(folder / "base.result.json")
    # a result without profile facts (a bundle run with --device cpu) measures nothing: the record stays unprofiled
    record.baseline, record.profiled, record.device = base, base.profile.facts is not None, base.device
    record.rule = (
        "steps from the CPU walk; every text the CPU passed profiled on the GPU, slowdowns against the step's "
        "text before"
    )
    before = base.profile.facts.kernel.ms_median if base.profile.facts else None
    before_gate = base
    for step in record.steps:
        accepted_time = None
        step.context = with_compile(step.context, before_gate)
        before_gate = None  # the gate of this step's accepted candidate, once read
        for candidate in step.candidates:
            result_file = folder / f"{candidate.id}.result.json"
            if not result_file.is_file():
                continue
            candidate.gate = read_result(result_file)
            candidate.context = with_compile(candidate.context, candidate.gate)
            if candidate.verdict == "accepted":
                before_gate = candidate.gate
            facts = candidate.gate.profile.facts
            if facts is not None and before:
                candidate.slowdown = round(facts.kernel.ms_median / before, 4)
            if candidate.verdict == "accepted" and facts is not None:
                accepted_time = facts.kernel.ms_median
        before = accepted_time
    target = out or record_path.with_name(record_path.name.replace(".cpu.json", ".json"))
    target.write_text(record.model_dump_json(indent=1) + "\n", encoding="utf-8")
    return target
