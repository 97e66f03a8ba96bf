"""GPU cross-check: run buggy corpus kernels at their counterexample's sizes and show the failure is real.

    .venv/bin/python bench/gpu_crosscheck.py prepare DIR     # here: verify, generate Triton, write DIR/
    python3 bench/gpu_crosscheck.py run DIR [--sanitize]     # on the GPU machine: torch and triton only
    .venv/bin/python bench/gpu_crosscheck.py run DIR --device cpu   # a dry run in Triton's interpreter

`prepare` (needs argus) takes each case below: it verifies the buggy kernel, keeps the refuted diagnostic's
counterexample sizes (and the loaded integer data it names, completed by the kernel's data facts), and
generates the Triton modules of the buggy kernel and of its fixed twin (`argus.codegen.generate`). It writes
`DIR/cases.json` and `DIR/NAME.buggy.py`, `DIR/NAME.fixed.py`.

`run` imports nothing of argus. For each case it makes random inputs at the counterexample's sizes, each
tensor a view in the middle of a larger buffer whose guard zones hold NaN (an out-of-bounds read that feeds
the result shows as NaN) and outputs poisoned with NaN (an element nobody writes stays NaN); it launches
both modules on the same inputs and prints, per case: the largest difference between the buggy and the
fixed output, the NaN elements of each, and whether a guard zone was written (an out-of-bounds store).
A failure is real when the buggy output differs from the fixed one, or a guard zone changed. `--sanitize`
also runs each out-of-bounds (AR301) buggy kernel once under `compute-sanitizer --tool memcheck` (where the
machine supports it), with tensors allocated exactly (no guard zones, no caching allocator), so that an access
past a tensor is past its allocation.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "verify" / "corpus"
GUARD = 4096  # elements of NaN before and after every tensor

# (corpus kernel, what the bug should do to the output[, input scale, 0.5 by default])
CASES = [
    ("contraction_b_next_k", "B loaded at the next K block: wrong products"),
    ("contraction_forgot_k_offset", "B rows without the K offset: wrong products"),
    ("tag_pipeline_stage_off_by_one", "the prefetched B stage multiplies the current A: wrong products"),
    ("invariant_prefetch_skips_block", "the prefetch skips every other K block: wrong products"),
    ("bounds_moe_wrong_expert", "W[e + 1] reads past the last expert: NaN from the guard zone"),
    # softmax is shift-invariant, so a wrong row max is harmless until exp overflows: inputs scaled by 6
    ("alignment_attention_column_max", "a column max shifts each row of scores: exp overflows, NaN", 6.0),
    ("alignment_layernorm_wrong_axis", "row means applied along columns: wrong output"),
    ("coverage_floor_grid", "grid N // BLOCK: the tail stays unwritten"),
    ("race_missing_column_block", "every program stores the first column block: the rest stays unwritten"),
    ("race_flattened_grid", "(z, h) decoded with // Z: some heads are written twice, others never"),
]


# ---- prepare (here, with argus) -------------------------------------------------------------------------
def prepare(out: Path) -> int:
    from argus.codegen import generate
    from argus.dsl.check import check_source
    from argus.dsl.ir import walk_ops
    from argus.verify import verify_check

    out.mkdir(parents=True, exist_ok=True)
    cases = []
    for name, expected, *scale in CASES:
        buggy_text = (CORPUS / f"{name}.argus").read_text()
        fixed_text = (CORPUS / f"{name}.fixed.argus").read_text()
        check = check_source(buggy_text)
        refuted = [d for d in verify_check(check).diagnostics if d.data.get("verdict") == "refuted"]
        if not refuted:
            print(f"{name}: not refuted, skipped", file=sys.stderr)
            continue
        diagnostic = refuted[0]
        witness = diagnostic.data["counterexample"]
        kernel = next(iter(check.analysis.kernels.values()))
        partitions = {}
        for op in walk_ops(kernel.launch):
            if op.kind == "partition":
                total = next(s for s, v in kernel.sizes.items() if v.id == op.operands[1].id)
                partitions[op.operands[0].name] = total
        params = []
        for p in kernel.params:
            shape = getattr(p.type, "shape", None)
            dims = [[d.symbol, d.offset] for d in shape] if shape is not None else None
            params.append({"name": p.name, "dtype": p.type.dtype.name, "dims": dims, "out": p.is_out})
        (out / f"{name}.buggy.py").write_text(generate(check, f"{name}.argus").source)
        (out / f"{name}.fixed.py").write_text(generate(check_source(fixed_text), f"{name}.fixed.argus").source)
        cases.append(
            {
                "name": name,
                "kernel": kernel.name,
                "expected": expected,
                "scale": scale[0] if scale else 0.5,
                "code": diagnostic.code,
                "line": diagnostic.line + 1,
                "message": diagnostic.message,
                "sizes": witness["sizes"],
                "data": witness["data"],
                "partitions": partitions,
                "params": params,
            }
        )
        print(f"{name}: {diagnostic.code} line {diagnostic.line + 1}, sizes {witness['sizes']}")
    (out / "cases.json").write_text(json.dumps(cases, indent=1))
    return 0


# ---- run (on the GPU: torch and triton only) -------------------------------------------------------------
def load_module(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem.replace(".", "_"), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def integer_data(case: dict, param: dict, dims: list[int]):
    import torch

    values = [None] * dims[0]
    for key, value in case["data"].items():
        name, index = key.split("[", 1)
        if name == param["name"] and len(dims) == 1:
            values[int(index.rstrip("]"))] = value
    if param["name"] in case["partitions"]:
        values[0], values[-1] = 0, case["sizes"][case["partitions"][param["name"]]]
        last = 0
        for i, v in enumerate(values):  # complete the cut points so they stay sorted
            last = max(last, v if v is not None else last)
            values[i] = last
    return torch.tensor([v or 0 for v in values], dtype=torch.int32)


def guarded(shape: list[int], fill, dtype, device, guard: int = GUARD):
    """A tensor of `shape` in the middle of a buffer whose `guard` elements on each side hold NaN."""
    import torch

    count = math.prod(shape)
    buffer = torch.full((count + 2 * guard,), float("nan"), dtype=dtype, device=device)
    view = buffer[guard : guard + count].view(shape)
    view.copy_(fill)
    return buffer, view


def make_inputs(case: dict, seed: int, device: str, guard: int = GUARD):
    import torch

    torch.manual_seed(seed)
    dtypes = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32, "i32": torch.int32}
    args, buffers, outputs = [], {}, []
    for param in case["params"]:
        if param["dims"] is None:
            continue  # scalars keep their defaults
        dims = [offset if symbol is None else case["sizes"][symbol] + offset for symbol, offset in param["dims"]]
        dtype = dtypes[param["dtype"]]
        if dtype == torch.int32:
            tensor = integer_data(case, param, dims).to(device)
            args.append(tensor)
            continue
        fill = torch.full(dims, float("nan")) if param["out"] else torch.randn(dims) * case["scale"]
        buffer, view = guarded(dims, fill.to(dtype), dtype, device, guard)
        args.append(view)
        buffers[param["name"]] = (buffer, math.prod(dims))
        if param["out"]:
            outputs.append(param["name"])
    return args, buffers, outputs


def guard_written(buffer, count: int) -> int:
    import torch

    zones = torch.cat([buffer[:GUARD], buffer[GUARD + count :]])
    return int((~torch.isnan(zones.float())).sum())


def synchronize(device: str) -> None:
    import torch

    if device == "cuda":
        torch.cuda.synchronize()


def run_case(case: dict, folder: Path, device: str) -> dict:
    import torch

    results = {}
    for variant in ("buggy", "fixed"):
        module = load_module(folder / f"{case['name']}.{variant}.py")
        args, buffers, outputs = make_inputs(case, seed=0, device=device)
        getattr(module, case["kernel"])(*args)
        synchronize(device)
        out_name = outputs[0]
        buffer, count = buffers[out_name]
        out = buffer[GUARD : GUARD + count].float().cpu()
        results[variant] = {
            "out": out,
            "nan": int(torch.isnan(out).sum()),
            "guard": sum(guard_written(*buffers[name]) for name in outputs),
        }
    buggy, fixed = results["buggy"], results["fixed"]
    both = ~torch.isnan(buggy["out"]) & ~torch.isnan(fixed["out"])
    diff = float((buggy["out"][both] - fixed["out"][both]).abs().max()) if both.any() else 0.0
    scale = float(fixed["out"][~torch.isnan(fixed["out"])].abs().max()) if fixed["nan"] < fixed["out"].numel() else 0
    real = buggy["nan"] != fixed["nan"] or diff > 1e-2 * max(scale, 1.0) or buggy["guard"] > 0
    return {
        "case": case["name"],
        "code": case["code"],
        "sizes": case["sizes"],
        "max_diff": diff,
        "nan_buggy": buggy["nan"],
        "nan_fixed": fixed["nan"],
        "elements": fixed["out"].numel(),
        "guard_written": buggy["guard"],
        "real": real,
    }


def sanitize(case: dict, folder: Path) -> str:
    """One buggy launch under compute-sanitizer memcheck; its summary line."""
    here, data = str(Path(__file__).parent), json.dumps(case)
    script = (
        f"import sys, json; sys.path.insert(0, {here!r}); import gpu_crosscheck as g; from pathlib import Path; "
        f"case = json.loads({data!r}); m = g.load_module(Path({str(folder)!r}) / (case['name'] + '.buggy.py')); "
        "args, _, _ = g.make_inputs(case, 0, 'cuda', guard=0); getattr(m, case['kernel'])(*args); "
        "import torch; torch.cuda.synchronize()"
    )
    # exact allocations: no guard zones, and no caching allocator rounding blocks up (memcheck sees cudaMalloc)
    env = dict(os.environ, PYTORCH_NO_CUDA_MEMORY_CACHING="1")
    try:
        done = subprocess.run(
            ["compute-sanitizer", "--tool", "memcheck", sys.executable, "-c", script],
            capture_output=True,
            text=True,
            timeout=240,
            env=env,
        )
    except (OSError, subprocess.TimeoutExpired) as problem:
        return f"compute-sanitizer did not run: {problem}"
    lines = (done.stdout + done.stderr).splitlines()
    summary = [line for line in lines if "ERROR SUMMARY" in line or "Invalid" in line or "not supported" in line]
    return "; ".join(dict.fromkeys(s.strip("= ") for s in summary[:4])) or f"exit {done.returncode}"


def run(folder: Path, sanitize_too: bool, device: str) -> int:
    if device == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported: the CPU interpreter (a dry run)
    import torch
    import triton

    cases = json.loads((folder / "cases.json").read_text())
    where = torch.cuda.get_device_name(0) if device == "cuda" else "CPU, Triton interpreter"
    print(f"# {where}, torch {torch.__version__}, triton {triton.__version__}")
    rows = []
    for case in cases:
        try:
            row = run_case(case, folder, device)
        except Exception as error:  # a launch that fails is a result too
            row = {"case": case["name"], "code": case["code"], "sizes": case["sizes"], "error": repr(error)[:200]}
        if sanitize_too and case["code"] == "AR301":  # memcheck speaks to out-of-bounds accesses only
            row["sanitizer"] = sanitize(case, folder)
        rows.append(row)
        print(json.dumps(row), flush=True)
    print("\n| case | code | sizes | max abs diff vs fixed | NaN buggy / fixed / elements | guard written | real |")
    print("| --- | --- | --- | ---: | --- | ---: | --- |")
    for row in rows:
        sizes = ", ".join(f"{k}={v}" for k, v in row["sizes"].items())
        if "error" in row:
            print(f"| `{row['case']}` | {row['code']} | {sizes} | launch failed: {row['error']} | | | n/a |")
            continue
        nan = f"{row['nan_buggy']} / {row['nan_fixed']} / {row['elements']}"
        real = "yes" if row["real"] else "no"
        print(
            f"| `{row['case']}` | {row['code']} | {sizes} | {row['max_diff']:.3g} | {nan} | {row['guard_written']} "
            f"| {real} |"
        )
    if sanitize_too:
        print()
        for row in rows:
            if "sanitizer" in row:
                print(f"compute-sanitizer memcheck, {row['case']}: {row['sanitizer']}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("prepare").add_argument("folder", type=Path)
    runner = sub.add_parser("run")
    runner.add_argument("folder", type=Path)
    runner.add_argument("--sanitize", action="store_true")
    runner.add_argument("--device", choices=("cuda", "cpu"), default="cuda", help="cpu: a dry run in the interpreter")
    args = parser.parse_args()
    if args.command == "prepare":
        if "argus" not in sys.modules:
            sys.path.insert(0, str(ROOT / "server"))
        return prepare(args.folder)
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    return run(args.folder, args.sanitize, args.device)


if __name__ == "__main__":
    raise SystemExit(main())
