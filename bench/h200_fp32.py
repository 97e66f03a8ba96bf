"""fp32 kernels against eager PyTorch and torch.compile on one GPU, in one process (issue 16).

    python bench/h200_fp32.py bundle [--out build/h200_fp32]     here: one gate bundle per examples/fp32_* file
    python3 bench/h200_fp32.py run BUNDLES --out DIR [--trials N] on the GPU (torch and triton only): writes
                                                                  DIR/h200_fp32.json and prints the table
    python bench/h200_fp32.py table FILE                          the table of a result file

For every fp32 example the run (1) gates it (the gate's own compile and correct stages, `small` then `large`,
at the gate's fp32 tolerance); (2) times it at its `large` sizes under each configuration of a sweep (input
precision x tiles), through the full launcher (its argument checks and any layout copy included), and checks
each configuration's output against the fp32 eager result at the gate's tolerance for that reduction length;
(3) runs the autotuned launcher (`NAME.autotuned`), checks the configuration it picked the same way and times
it; (4) times the peers in the same process with the same timer: the eager PyTorch expression in fp32 (tf32
off, PyTorch's default) and `torch.compile` of it. `fp32_gemm` runs twice, with B stored `[K, N]` (row-major,
the launcher makes the K-major copy `layout B: K` asks for) and with B stored `[N, K]` (a transposed view, no
copy).

Like bench/h200.py, the `run` half imports nothing of Argus.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from h200 import log  # noqa: E402
from h200 import write_bundles as bundle_files  # noqa: E402

EXAMPLES = ROOT / "examples"
VARIANTS = ROOT / "bench" / "variants"  # variants measured beside the examples, to decide what they should be

PRECISIONS = ["tf32x3", "bf16x3", "bf16x6", "tf32"]  # "ieee" is timed at the first tile configuration only
GEMM_TILES = [  # fp32 operands take 4 bytes: BK = 64 with 3 stages is 192 KiB at 128 x 256, so 2 stages there
    {"BM": 128, "BN": 128, "BK": 64, "num_warps": 8, "num_stages": 3},
    {"BM": 128, "BN": 128, "BK": 32, "num_warps": 8, "num_stages": 4},
    {"BM": 256, "BN": 128, "BK": 32, "num_warps": 8, "num_stages": 3},
    {"BM": 128, "BN": 128, "BK": 64, "num_warps": 4, "num_stages": 3},
    {"BM": 128, "BN": 256, "BK": 64, "num_warps": 8, "num_stages": 2},
    {"BM": 256, "BN": 128, "BK": 64, "num_warps": 8, "num_stages": 2},
    {"BM": 128, "BN": 256, "BK": 32, "num_warps": 8, "num_stages": 3},
]
# kernel -> its target against eager fp32, the layouts of B it runs with, and the sweep beside tiles x precision
KERNELS = {
    "fp32_gemm": {"targets": {"eager": 1.8}, "layouts": ["[K, N]", "[N, K]"], "tiles": 6, "extra": [{}]},
    "fp32_gemm_grouped": {
        "targets": {"eager": 1.8},
        "layouts": ["[K, N]", "[N, K]"],
        "tiles": 3,
        "precisions": ["tf32x3", "bf16x3"],
        "extra": [{"GROUP_M": g, "tma": t} for g in (1, 8) for t in (0, 1)],
    },
    "fp32_linear_gelu": {"targets": {"eager": 1.5}, "layouts": ["given"], "tiles": 4, "extra": [{}]},
    "fp32_batched_gemm": {"targets": {}, "layouts": ["given"], "tiles": 6, "extra": [{}]},
}


def flops(kernel: str, s: dict) -> float:
    if kernel == "fp32_batched_gemm":
        return 2 * s["Bt"] * s["M"] * s["N"] * s["K"]
    return 2 * s["M"] * s["N"] * s["K"]


def eager(kernel: str):
    import torch
    import torch.nn.functional as F

    if kernel.startswith("fp32_gemm"):
        return lambda A, B: A @ B
    if kernel == "fp32_linear_gelu":
        return lambda x, W, b: F.gelu(x @ W.T + b)
    return lambda A, B: torch.bmm(A, B)


# ---- here: bundles ------------------------------------------------------------------------------------------


def write_bundles(out: Path) -> int:
    return bundle_files(out, [*sorted(EXAMPLES.glob("fp32_*.argus")), *sorted(VARIANTS.glob("fp32_*.argus"))])


# ---- there: the run ---------------------------------------------------------------------------------------------


class Fp32Bench:
    def __init__(self, bundles: Path, trials: int) -> None:
        import torch

        first = next(p for p in sorted(bundles.iterdir()) if (p / "run.py").exists())
        sys.path.insert(0, str(first))  # the gate runner's modules (identical in every bundle)
        import gate_profile

        torch.backends.cuda.matmul.allow_tf32 = False  # PyTorch's default, stated: the eager peer is exact fp32
        torch.backends.cudnn.allow_tf32 = False
        self.torch, self.trials, self.timer = torch, trials, gate_profile.Timer()
        self.rows: list[dict] = []
        self.gates: list[dict] = []

    def time(self, fn) -> dict:
        return self.timer.time(fn, self.trials, budget_s=20.0)

    def gate(self, folder: Path, kernel: str) -> None:
        import gate_compile
        import gate_correct
        from gate_common import Bundle

        bundle = Bundle(folder)
        record = {"kernel": kernel, "compile": gate_compile.run_compile(bundle, kernel, "cuda")}
        record["correct"] = gate_correct.run_correct(bundle, kernel, "cuda", trials=2, seed=4321)
        for stage in ("compile", "correct"):
            log(f"gate {kernel} {stage}: {record[stage].get('status')} {record[stage].get('message', '')}")
        self.gates.append(record)

    def kernel(self, folder: Path, kernel: str) -> None:
        from gate_common import Bundle

        torch = self.torch
        bundle = Bundle(folder)
        module = bundle.load_kernel_module()
        problem = bundle.load_problem_module(kernel)
        entry = module.KERNELS[kernel]
        sizes = problem.SIZES["large"]
        base = problem.make_inputs(sizes, 7, "cuda")
        inputs_given = [n for n in base if n not in problem.OUTPUTS]
        for layout in KERNELS[kernel]["layouts"]:
            inputs = dict(base)
            if layout == "[N, K]":
                inputs["B"] = base["B"].t().contiguous().t()  # same values, stored [N, K]: K is contiguous
            args = {n: inputs[n] for n in inputs_given}
            expected = eager(kernel)(**args)
            reduction = reduction_length(kernel, sizes)
            peers = self.peers(kernel, layout, sizes, args)
            if layout == "[K, N]":  # what the launcher's K-major copy of B costs on its own
                copy = getattr(module, "_innermost_copy", lambda b, axis: b.t().contiguous())  # the launcher's copy
                peers["B K-major copy"] = self.time(lambda b=inputs["B"], copy=copy: copy(b, 0))
                log(f"peer {kernel} {layout} B K-major copy: {peers['B K-major copy']['ms_median']:.3f} ms")
            for overrides in sweep(kernel, entry):
                row = {"kernel": kernel, "layout": layout, "sizes": sizes, "config": overrides, "peers": peers}
                try:
                    row.update(self.measure(entry, problem, inputs, expected, reduction, overrides, autotuned=False))
                except Exception as exc:  # a config that does not compile or fit: recorded, the sweep goes on
                    row["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
                self.log_row(row)
                self.rows.append(row)
            row = {"kernel": kernel, "layout": layout, "sizes": sizes, "config": "autotuned", "peers": peers}
            try:
                row.update(self.measure(entry, problem, inputs, expected, reduction, {}, autotuned=True))
                row["picked"] = picked_config(entry)
            except Exception as exc:
                row["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
            self.log_row(row)
            self.rows.append(row)
            del inputs, args, expected
            torch.cuda.empty_cache()

    def peers(self, kernel: str, layout: str, sizes: dict, args: dict) -> dict:
        torch = self.torch
        fn = eager(kernel)
        peers = {"eager": self.time(lambda: fn(**args))}
        try:
            compiled = torch.compile(fn)
            compiled(**args)
            peers["torch.compile"] = self.time(lambda: compiled(**args))
        except Exception as exc:  # torch.compile needs a C compiler for its host code; say so if it is missing
            peers["torch.compile"] = {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"}
        for name, t in peers.items():
            if "ms_median" in t:
                t["tflops"] = flops(kernel, sizes) / (t["ms_median"] * 1e-3) / 1e12
                log(f"peer {kernel} {layout} {name}: {t['ms_median']:.3f} ms, {t['tflops']:.1f} TFLOP/s")
        return peers

    def measure(self, entry, problem, inputs, expected, reduction, overrides, autotuned: bool) -> dict:
        import gate_correct

        torch = self.torch
        out = problem.OUTPUTS[0]
        inputs[out] = torch.full_like(inputs[out], float("nan"))
        params = [p["name"] for p in entry["params"]]
        call_args = {p: inputs[p] for p in params if p in inputs}
        launcher = entry["launcher"].autotuned if autotuned else entry["launcher"]

        def call():
            launcher(**call_args, **overrides)

        call()
        torch.cuda.synchronize()
        got = inputs[out]
        tol, atol = gate_correct.tolerance("float32", reduction)  # the gate's own rule, not a copy of it
        record = gate_correct.compare(out, got, expected, tol, atol)
        exact = expected.double()
        rel_l2 = float(torch.linalg.vector_norm(got.double() - exact) / torch.linalg.vector_norm(exact))
        timing = self.time(call)
        return {
            **timing,
            "tolerance": [tol, atol],
            "passes": record["mismatch"] is None,
            "mismatch": record["mismatch"],
            "max_rel_error": record["max_rel_error"],
            "rel_l2_vs_eager": rel_l2,
        }

    def log_row(self, row: dict) -> None:
        what = f"{row['kernel']} {row['layout']} {row['config']}"
        if "error" in row:
            log(f"{what}: {row['error']}")
            return
        row["tflops"] = flops(row["kernel"], row["sizes"]) / (row["ms_median"] * 1e-3) / 1e12
        log(
            f"{what}: {row['ms_median']:.3f} ms, {row['tflops']:.1f} TFLOP/s, max rel err {row['max_rel_error']:.1e} "
            f"(tol {row['tolerance'][0]:.0e}, atol {row['tolerance'][1]:.1e}) "
            f"{'ok' if row['passes'] else 'FAILS'} {row.get('picked', '')}"
        )


def reduction_length(kernel: str, sizes: dict) -> int:
    return sizes["K"]


def sweep(kernel: str, entry: dict) -> list[dict]:
    """Tile configurations x input precisions (x the kernel's extra settings); "ieee" at the first tiles only.
    Settings the kernel does not have are left out."""
    plan = KERNELS[kernel]
    constants = entry["constants"]
    precisions = plan.get("precisions", PRECISIONS) if "PREC" in constants else [None]
    configs = []
    for index, tiles in enumerate(GEMM_TILES[: plan["tiles"]]):
        for precision in (["ieee"] if index == 0 and precisions != [None] else []) + precisions:
            for extra in plan["extra"]:
                config = {k: v for k, v in {**tiles, **extra}.items() if k in constants or k in entry["policy"]}
                config |= {k: v for k, v in tiles.items() if k.startswith("num_")}
                if precision is not None:
                    config["PREC"] = precision
                configs.append(config)
    return configs


def picked_config(entry: dict) -> dict | None:
    for tuned in entry.get("_autotuned", {}).values():
        best = getattr(tuned, "best_config", None)
        if best is not None:
            return {**best.kwargs, "num_warps": best.num_warps, "num_stages": best.num_stages}
    return None


def table(result: dict) -> str:
    """The fastest configuration that passes the gate's tolerance, and the autotuned launcher, per kernel and
    B layout, against the peers of the same run."""
    lines = [
        "| kernel | B stored | config | ms | TFLOP/s | passes the fp32 rule | eager ms | torch.compile ms | vs eager "
        "| target |",
        "| --- | --- | --- | ---: | ---: | --- | ---: | ---: | ---: | --- |",
    ]
    best: dict[tuple, dict] = {}
    for row in result["rows"]:
        if row["config"] != "autotuned" and "ms_median" in row and row["passes"]:
            key = (row["kernel"], row["layout"])
            if key not in best or row["ms_median"] < best[key]["ms_median"]:
                best[key] = row
    autotuned = {(r["kernel"], r["layout"]): r for r in result["rows"] if r["config"] == "autotuned"}
    for key in sorted({*best, *autotuned}):
        for row in (best.get(key), autotuned.get(key)):
            if row is not None:
                lines.append(table_row(row))
    return "\n".join(lines)


def table_row(row: dict) -> str:
    def ms_of(peer: str) -> float | None:
        return row["peers"].get(peer, {}).get("ms_median")

    config = (
        row["config"] if isinstance(row["config"], str) else ", ".join(f"{k}={v}" for k, v in row["config"].items())
    )
    if row.get("picked"):
        config += " → " + ", ".join(f"{k}={v}" for k, v in row["picked"].items())
    cells = [f"`{row['kernel']}`", row["layout"], config]
    eager_ms, compiled_ms, ms = ms_of("eager"), ms_of("torch.compile"), row.get("ms_median")
    if ms is None:
        cells += ["—", "—", row.get("error", ""), "", "", "", ""]
    else:
        target = KERNELS[row["kernel"]]["targets"].get("eager")
        ratio = eager_ms / ms if eager_ms else None
        cells += [f"{ms:.3f}", f"{row['tflops']:.1f}", "yes" if row["passes"] else f"no ({row['max_rel_error']:.1e})"]
        cells += [f"{eager_ms:.3f}" if eager_ms else "—", f"{compiled_ms:.3f}" if compiled_ms else "—"]
        cells += [f"{ratio:.2f}×" if ratio else "—"]
        cells += [f"{target:.1f}× ({'met' if ratio and ratio >= target else 'missed'})" if target else "—"]
    return "| " + " | ".join(cells) + " |"


def run(bundles: Path, out: Path, trials: int, only: list[str], tiles: int | None) -> int:
    import torch
    import triton

    out.mkdir(parents=True, exist_ok=True)
    bench = Fp32Bench(bundles, trials)
    started = time.perf_counter()

    def result() -> dict:
        return {
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "device": torch.cuda.get_device_name(),
            "versions": {"torch": torch.__version__, "triton": triton.__version__, "python": sys.version.split()[0]},
            "trials": trials,
            "seconds": time.perf_counter() - started,
            "gates": bench.gates,
            "rows": bench.rows,
        }

    for folder in sorted(p for p in bundles.iterdir() if (p / "run.py").exists()):
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        for kernel in manifest["kernels"]:
            if kernel not in KERNELS or (only and kernel not in only):
                continue
            if tiles is not None:
                KERNELS[kernel]["tiles"] = min(tiles, KERNELS[kernel]["tiles"])
            bench.gate(folder, kernel)
            bench.kernel(folder, kernel)
            (out / "h200_fp32.json").write_text(json.dumps(result(), indent=1, default=str), encoding="utf-8")
    final = result()
    print(table(final))
    print(f"\n{final['device']}, torch {torch.__version__}, triton {triton.__version__}, {final['seconds']:.0f} s")
    failed = [g["kernel"] for g in bench.gates if any(g[s].get("status") != "passed" for s in ("compile", "correct"))]
    if failed:
        print(f"gate failures: {', '.join(failed)}")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    bundle = commands.add_parser("bundle", help="write one gate bundle per examples/fp32_* file")
    bundle.add_argument("--out", type=Path, default=ROOT / "build" / "h200_fp32")
    running = commands.add_parser("run", help="on the GPU: gate, sweep, autotune and peers; the table and JSON")
    running.add_argument("bundles", type=Path)
    running.add_argument("--out", type=Path, required=True)
    running.add_argument("--trials", type=int, default=30, help="timed launches per measurement")
    running.add_argument("--kernel", action="append", default=[], help="only this kernel (repeatable)")
    running.add_argument("--tiles", type=int, help="only the first N tile configurations of the sweep")
    shown = commands.add_parser("table", help="print the table of a result file")
    shown.add_argument("result", type=Path)
    args = parser.parse_args(argv)
    if args.command == "bundle":
        return write_bundles(args.out)
    if args.command == "table":
        print(table(json.loads(args.result.read_text(encoding="utf-8"))))
        return 0
    return run(args.bundles, args.out, args.trials, args.kernel, args.tiles)


if __name__ == "__main__":
    sys.exit(main())
