"""Expert kernels against their peers on one GPU, in one process: gate, sweep, peer, table.

    python bench/h200.py bundle [--out build/h200_experts]    here: one gate bundle per skills/experts file
    python3 bench/h200.py run BUNDLES --out DIR [--trials N]   on the GPU (torch and triton only): writes
                                                               DIR/h200_experts.json and prints the table
    python3 bench/h200.py one BUNDLES NAME --result FILE       on the GPU: launch NAME twice under its fastest
                                                               configuration in FILE (for ncu --launch-skip 1)
    python bench/h200.py table FILE                            the table of a result file

For every expert kernel the run (1) gates it: the gate's own compile stage (sm_90, through Triton's JIT) and
correct stage (fresh seeds, `small` then `large` sizes, outputs poisoned with NaN), and again under the sweep's
fastest configuration when that is not the default; (2) times it at the benchmark sizes under each candidate
configuration of a small sweep, checking each configuration's output against the reference (relative L2 error)
before timing it; (3) times its peer in the same process with the same timer (L2 flushed before every launch,
CUDA events, median of the trials):

    gemm               torch.matmul (cuBLAS), fp16, 4096^3, 8192^3, 4000^3 (the bias and GELU epilogue is ours only)
    attention[_causal] F.scaled_dot_product_attention, fp16, B 4, H 32, S 4096, D 128
    attention64        the same at D 64, B 8, H 16, S 2048 (its `bench` sizes)
    softmax            torch.softmax, fp16, 32768 x 4096; also torch copy bandwidth (read + write)
    layernorm          F.layer_norm, fp16, 32768 x 4096; against copy bandwidth
    grouped_gemm       a per-expert loop of torch.matmul, and one dense torch.matmul of the same FLOPs

The `run` half imports nothing of Argus: each bundle carries its generated kernel module, problem modules and
the gate runner (argus/gate/runner), which this script imports from the bundle.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXPERTS = ROOT / "skills" / "experts"

# Candidate configurations per kernel (overrides of tile constants and policy); the first is the file's
# default. Sizes are the size sets of the file to time at.
SWEEPS: dict[str, dict] = {
    "gemm": {"sizes": ["large", "huge", "odd"], "configs": [{}, {"GROUP_M": 8}]},
    "gemm_plain": {"sizes": ["large", "huge", "odd"], "configs": [{}, {"GROUP_M": 8}]},
    # the default lowers through Gluon (epilogue_warps = 4, argus.codegen.gluon_gemm); 0 is the Triton lowering
    "gemm_persistent": {
        "sizes": ["large", "huge", "odd"],
        "configs": [{}, {"GROUP_M": 16}, {"epilogue_warps": 0}],
    },
    # the halves measured slower than the whole tile on an H100 (docs/perf.md): their best configurations only
    "gemm_split": {"sizes": ["large", "huge", "odd"], "configs": [{}, {"num_stages": 4}]},
    "gemm_persistent_split": {"sizes": ["large", "huge", "odd"], "configs": [{}, {"num_stages": 4}]},
    # "moe": the grouped GEMM's problem as one dense GEMM, what a grouped kernel's tiles could reach
    "gemm_plain_persistent": {
        "sizes": ["large", "huge", "odd", "moe"],
        "configs": [{}, {"GROUP_M": 16}, {"flatten": 1}],
    },
    # the epilogue's cost taken apart: the bias alone, and the GELU with a cheaper erf (candidates/gemm_epilogue)
    "gemm_bias": {"sizes": ["large", "huge", "odd"], "configs": [{}]},
    "gemm_erf_poly": {"sizes": ["large", "huge", "odd"], "configs": [{}]},
    "attention": {
        "sizes": ["large"],
        "configs": [
            {},
            {"BN": 64},
            {"warp_specialize": 0, "num_warps": 8, "num_stages": 3},  # TMA alone
            {"tma": 0, "warp_specialize": 0, "num_warps": 8, "num_stages": 3},  # the earlier default
        ],
    },
    "attention_causal": {"sizes": ["large"], "configs": [{}, {"BN": 64}, {"tma": 0}]},
    "attention_causal_lpt": {"sizes": ["large"], "configs": [{}, {"HG": 8}, {"tma": 0}]},
    "attention64": {"sizes": ["bench"], "configs": [{}, {"BN": 128}, {"tma": 1}, {"num_stages": 3}]},
    "softmax": {"sizes": ["large"], "configs": [{}, {"num_warps": 8}]},
    "layernorm": {"sizes": ["large"], "configs": [{}, {"num_warps": 4}]},
    "grouped_gemm": {"sizes": ["large"], "configs": [{}, {"GROUP_M": 16}]},
    # W's tile through a 2-D descriptor over E * K rows instead of a [1, BK, BN] box reshaped
    "grouped_gemm_folded": {"sizes": ["large"], "configs": [{}, {"GROUP_M": 16}]},
    "grouped_gemm_persistent": {
        "sizes": ["large"],
        "configs": [{}, {"GROUP_M": 16}, {"num_stages": 4}, {"flatten": 1}],
    },
    # exact per-expert tiles (grouped_gemm_exact.argus, candidates/grouped_gemm_exact_persistent.argus)
    "grouped_gemm_exact": {"sizes": ["large"], "configs": [{}, {"GROUP_M": 16}]},
    "grouped_gemm_exact_persistent": {"sizes": ["large"], "configs": [{}, {"GROUP_M": 16}, {"flatten": 1}]},
}
# Tried in an earlier run (10:51 UTC 2026-11-30, skills/experts/results/h200-2026-11-30-ws.json) and dropped:
# attention with two 64-row halves of Q (2x slower), a causal kernel with one masked loop under warp
# specialization (5% slower), warp specialization for the GEMMs (slower, and wrong with GROUP_M = 16), flatten
# in the persistent GEMM (3% slower than without). On an H100 on 2026-12-07 (results/h100-2026-12-07-tiles.json
# under skills/experts): the epilogue GEMMs as 128 x 128 tiles of one warpgroup, two blocks an SM (BN 128,
# 4 warps; persistent with SMS = 264), 17-35% slower than the 128 x 256 tile of two warpgroups; causal attention
# longest first across all heads (grid (Z * H, blocks)), 22-26% slower than `attention_causal`
# (results/h100-2026-12-07-causal-order.json). Also on an H100 (results/h100-2026-12-07-run4): the epilogue
# GEMMs as 64 x 256 tiles of one warpgroup at 2 stages, two blocks an SM (persistent with SMS = 264), 22-41%
# slower.

TARGETS = {  # kernel -> (what the ratio is against, the target): issue 18's, in the same run on the H200
    "gemm": ("cuBLAS", 1.00),
    "gemm_plain": ("cuBLAS", 1.00),
    "gemm_persistent": ("cuBLAS", 1.00),
    "gemm_split": ("cuBLAS", 1.00),
    "gemm_persistent_split": ("cuBLAS", 1.00),
    "gemm_plain_persistent": ("cuBLAS", 1.00),
    "gemm_bias": ("cuBLAS", 1.00),
    "gemm_erf_poly": ("cuBLAS", 1.00),
    "attention": ("SDPA", 0.95),
    "attention_causal": ("SDPA causal", 0.95),
    "attention_causal_lpt": ("SDPA causal", 0.95),
    "attention64": ("SDPA, D 64", 0.95),
    "softmax": ("copy bandwidth", 0.94),
    "layernorm": ("copy bandwidth", 0.94),
    "grouped_gemm": ("dense cuBLAS GEMM of the same FLOPs", 0.95),
    "grouped_gemm_persistent": ("dense cuBLAS GEMM of the same FLOPs", 0.95),
    "grouped_gemm_folded": ("dense cuBLAS GEMM of the same FLOPs", 0.95),
    "grouped_gemm_exact": ("dense cuBLAS GEMM of the same FLOPs", 0.95),
    "grouped_gemm_exact_persistent": ("dense cuBLAS GEMM of the same FLOPs", 0.95),
}
HEAD_DIM = {"attention64": 64}  # the attention kernels whose head is not 128 wide
COPY_BYTES = 2 << 30


# ---- here: bundles ------------------------------------------------------------------------------------------


def write_bundles(out: Path, paths: list[Path] | None = None) -> int:
    """One gate bundle per Argus file in `paths` (by default the experts, then the candidates timed beside them:
    skills/experts/candidates, not check-clean yet) under `out`; 1 if a file could not be bundled."""
    sys.path.insert(0, str(ROOT / "server"))
    from argus.gate import GateSetupError, write_bundle

    out.mkdir(parents=True, exist_ok=True)
    status = 0
    if paths is None:
        paths = [*sorted(EXPERTS.glob("*.argus")), *sorted((EXPERTS / "candidates").glob("*.argus"))]
    for path in paths:
        try:
            where = path.relative_to(ROOT).as_posix()
            run_py = write_bundle(path.read_text(encoding="utf-8"), out / path.stem, path=where)
            print(f"wrote {run_py.parent}")
        except GateSetupError as failure:
            print(f"{path}: {failure}", file=sys.stderr)
            status = 1
    return status


# ---- there: the run ---------------------------------------------------------------------------------------------


def log(message: str) -> None:
    print(f"[h200 {time.strftime('%H:%M:%S')}] {message}", flush=True)


class Bench:
    def __init__(self, bundles: Path, trials: int) -> None:
        import torch

        self.bundles, self.trials = bundles, trials
        first = next(p for p in sorted(bundles.iterdir()) if (p / "run.py").exists())
        sys.path.insert(0, str(first))  # the gate runner's modules (identical in every bundle)
        import gate_profile

        self.timer = gate_profile.Timer()
        self.torch = torch
        self.rows: list[dict] = []
        self.sweeps: list[dict] = []
        self.gates: list[dict] = []
        self.peers: dict[str, dict] = {}

    def time(self, fn) -> dict:
        return self.timer.time(fn, self.trials)

    # -- the gate's compile and correct stages, in this process --------------------------------------------

    def gate(self, folder: Path, kernel: str, config: dict | None = None) -> dict:
        """The gate's stages at the file's defaults, or with `config` as the launcher's defaults (the sweep's
        fastest configuration, gated as it would be once it is the file's default)."""
        import gate_compile
        import gate_correct
        from gate_common import Bundle

        bundle = Bundle(folder)
        if config:
            load = bundle.load_kernel_module

            def load_with_config():
                module = load()
                entry = module.KERNELS[kernel]
                entry["constants"].update({k: v for k, v in config.items() if k in entry["constants"]})
                entry["policy"].update({k: v for k, v in config.items() if k not in entry["constants"]})
                return module

            bundle.load_kernel_module = load_with_config
        record = {"kernel": kernel, "config": config or {}}
        started = time.perf_counter()
        record["compile"] = gate_compile.run_compile(bundle, kernel, "cuda")
        record["correct"] = gate_correct.run_correct(bundle, kernel, "cuda", trials=2, seed=1234)
        record["seconds"] = time.perf_counter() - started
        for stage in ("compile", "correct"):
            status, message = record[stage].get("status"), record[stage].get("message", "")
            log(f"gate {kernel} {config or ''} {stage}: {status} {message}")
        self.gates.append(record)
        return record

    # -- one kernel: configurations at each size ------------------------------------------------------------

    def sweep(self, folder: Path, kernel: str) -> None:
        from gate_common import Bundle
        from gate_correct import reference_arguments

        bundle = Bundle(folder)
        module = bundle.load_kernel_module()
        problem = bundle.load_problem_module(kernel)
        entry = module.KERNELS[kernel]
        plan = SWEEPS[kernel]
        for size_name in plan["sizes"]:
            sizes = problem.SIZES[size_name]
            inputs = problem.make_inputs(sizes, 7, "cuda")
            expected = problem.reference(**reference_arguments(problem.reference, inputs, list(problem.OUTPUTS)))
            expected = expected if isinstance(expected, tuple) else (expected,)
            counts = counts_of(entry, sizes, inputs)
            for overrides in plan["configs"]:
                row = {"kernel": kernel, "sizes": sizes, "size_name": size_name, "config": overrides}
                try:
                    row.update(self.time_config(module, entry, problem, inputs, expected, overrides))
                except Exception as exc:  # a config that does not compile or fit: recorded, the sweep goes on
                    row["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
                    log(f"{kernel} {size_name} {overrides}: {row['error']}")
                    self.sweeps.append(row)
                    continue
                row["tflops"] = useful_flops(kernel, sizes) / (row["ms_median"] * 1e-3) / 1e12
                row["gb_per_s"] = counts["bytes"] / (row["ms_median"] * 1e-3) / 1e9
                log(
                    f"{kernel} {size_name} {overrides or 'default'}: {row['ms_median']:.4f} ms, "
                    f"{row['tflops']:.1f} TFLOP/s, {row['gb_per_s']:.0f} GB/s, rel err {row['rel_error']:.2e}"
                )
                self.sweeps.append(row)
            del inputs, expected
            self.torch.cuda.empty_cache()

    def time_config(self, module, entry, problem, inputs, expected, overrides) -> dict:
        torch = self.torch
        for name in problem.OUTPUTS:
            inputs[name].fill_(float("nan"))
        grid, args, kwargs = recorded_launch(module, entry, inputs, overrides)
        jit = entry["jit"]
        jit[grid](*args, **kwargs)
        torch.cuda.synchronize()
        errors = []
        for name, want in zip(problem.OUTPUTS, expected, strict=True):
            got = inputs[name].double()
            want = want.double()
            if torch.isnan(got).any():
                raise RuntimeError(f"{int(torch.isnan(got).sum())} elements of {name} unwritten or NaN")
            errors.append(float(torch.linalg.vector_norm(got - want) / torch.linalg.vector_norm(want)))
        if max(errors) > 1e-2:
            raise RuntimeError(f"wrong result: relative error {max(errors):.3e}")
        timing = self.time(lambda: jit[grid](*args, **kwargs))
        return {**timing, "rel_error": max(errors)}

    # -- peers --------------------------------------------------------------------------------------------------

    def peers_all(self) -> None:
        torch = self.torch
        F = torch.nn.functional
        log("peer: copy bandwidth")
        source = torch.randint(-100, 100, (COPY_BYTES,), dtype=torch.int8, device="cuda")
        target = torch.empty_like(source)
        t = self.time(lambda: target.copy_(source))
        self.peers["copy"] = {**t, "gb_per_s": 2 * COPY_BYTES / (t["ms_median"] * 1e-3) / 1e9}
        for n in (4096, 8192, 4000):
            log(f"peer: torch.matmul fp16 {n}^3")
            a = torch.randn(n, n, device="cuda", dtype=torch.float16)
            b = torch.randn(n, n, device="cuda", dtype=torch.float16)
            t = self.time(lambda a=a, b=b: torch.matmul(a, b))
            self.peers[f"matmul_{n}"] = {**t, "tflops": 2 * n**3 / (t["ms_median"] * 1e-3) / 1e12}
        self.peer_sdpa("sdpa", 4, 32, 4096, 128, (False, True))
        self.peer_sdpa("sdpa_64", 8, 16, 2048, 64, (False,))
        m, n = 32768, 4096
        x = torch.randn(m, n, device="cuda", dtype=torch.float16)
        w = torch.randn(n, device="cuda", dtype=torch.float16)
        b = torch.randn(n, device="cuda", dtype=torch.float16)
        log("peer: torch.softmax, F.layer_norm")
        t = self.time(lambda: torch.softmax(x, dim=1))
        self.peers["torch_softmax"] = {**t, "gb_per_s": 2 * x.numel() * 2 / (t["ms_median"] * 1e-3) / 1e9}
        t = self.time(lambda: F.layer_norm(x, (n,), w, b, 1e-5))
        self.peers["torch_layer_norm"] = {**t, "gb_per_s": 2 * x.numel() * 2 / (t["ms_median"] * 1e-3) / 1e9}
        self.peer_grouped()
        torch.cuda.empty_cache()

    def peer_sdpa(self, name: str, z: int, h: int, s: int, d: int, causals: tuple[bool, ...]) -> None:
        torch = self.torch
        q, k, v = (torch.randn(z, h, s, d, device="cuda", dtype=torch.float16) for _ in range(3))
        for causal in causals:
            log(f"peer: SDPA D {d} causal={causal}")
            t = self.time(lambda c=causal: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=c))
            flops = attention_flops(z, h, s, d, causal)
            self.peers[f"{name}{'_causal' if causal else ''}"] = {**t, "tflops": flops / (t["ms_median"] * 1e-3) / 1e12}

    def peer_grouped(self) -> None:
        torch = self.torch
        e, m, k, n = 8, 16384, 4096, 14336
        generator = torch.Generator().manual_seed(7)
        cuts = torch.sort(torch.randint(0, m + 1, (e - 1,), generator=generator)).values.tolist()
        offsets = [0, *cuts, m]
        x = torch.randn(m, k, device="cuda", dtype=torch.float16)
        w = torch.randn(e, k, n, device="cuda", dtype=torch.float16)
        y = torch.empty(m, n, device="cuda", dtype=torch.float16)

        def loop() -> None:
            for i in range(e):
                lo, hi = offsets[i], offsets[i + 1]
                if hi > lo:
                    torch.matmul(x[lo:hi], w[i], out=y[lo:hi])

        log("peer: per-expert loop of torch.matmul; dense GEMM of the same FLOPs")
        flops = 2 * m * k * n
        t = self.time(loop)
        self.peers["expert_loop"] = {**t, "tflops": flops / (t["ms_median"] * 1e-3) / 1e12, "offsets": offsets}
        w0 = w[0].contiguous()
        t = self.time(lambda: torch.matmul(x, w0))
        self.peers["dense_same_flops"] = {**t, "tflops": flops / (t["ms_median"] * 1e-3) / 1e12}


def recorded_launch(module, entry: dict, inputs: dict, overrides: dict):
    """(grid, args, kwargs) the launcher would pass its jit function, with these overrides; nothing launched.

    Timing the jit launch alone keeps the launcher's argument checks (and moe's data-fact sync) out."""
    jit = entry["jit"]
    names = [name for name, value in vars(module).items() if value is jit]
    calls = []

    class InterpretedFunction:  # the name generated launchers accept CPU tensors for, as the gate's recorder
        def __getitem__(self, grid):
            return lambda *args, **kwargs: calls.append((grid, args, kwargs))

        def __getattr__(self, name):
            return getattr(jit, name)

    recorder = InterpretedFunction()
    entry["jit"] = recorder
    for name in names:
        setattr(module, name, recorder)
    try:
        params = [p["name"] for p in entry["params"]]
        entry["launcher"](**{p: inputs[p] for p in params if p in inputs}, **overrides)
    finally:
        entry["jit"] = jit
        for name in names:
            setattr(module, name, jit)
    grid, args, kwargs = calls[0]
    return (grid(kwargs) if callable(grid) else grid), args, kwargs


def counts_of(entry: dict, sizes: dict, inputs: dict) -> dict:
    try:
        return entry["counts"](**sizes, inputs=inputs)
    except TypeError:
        return entry["counts"](**sizes)


def attention_flops(z: int, h: int, s: int, d: int, causal: bool) -> float:
    """Two S x S x D products per head; causal counts half, as attention benchmarks do."""
    flops = 4 * z * h * s * s * d
    return flops / 2 if causal else flops


def useful_flops(kernel: str, sizes: dict) -> float:
    """The FLOPs the peer is credited with for the same problem, so the rates compare like for like."""
    if kernel.startswith("gemm"):
        return 2 * sizes["M"] * sizes["N"] * sizes["K"]
    if kernel.startswith("attention"):
        d = HEAD_DIM.get(kernel, 128)
        return attention_flops(sizes["Z"], sizes["H"], sizes["S"], d, kernel.startswith("attention_causal"))
    if kernel.startswith("grouped_gemm"):
        return 2 * sizes["M"] * sizes["K"] * sizes["N"]
    return 0.0


def peer_for(kernel: str, row: dict, peers: dict) -> tuple[str, float, float, str]:
    """(peer name, our rate, the peer's rate, unit) for a sweep row."""
    if kernel.startswith("gemm") and row.get("size_name") == "moe":
        return "dense GEMM, same FLOPs", row["tflops"], peers["dense_same_flops"]["tflops"], "TFLOP/s"
    if kernel.startswith("gemm"):
        n = row["sizes"]["M"]
        return f"torch.matmul {n}^3", row["tflops"], peers[f"matmul_{n}"]["tflops"], "TFLOP/s"
    if kernel == "attention64":
        return "SDPA D 64", row["tflops"], peers["sdpa_64"]["tflops"], "TFLOP/s"
    if kernel == "attention":
        return "SDPA", row["tflops"], peers["sdpa"]["tflops"], "TFLOP/s"
    if kernel.startswith("attention_causal"):
        return "SDPA causal", row["tflops"], peers["sdpa_causal"]["tflops"], "TFLOP/s"
    if kernel in ("softmax", "layernorm"):
        return "copy", row["gb_per_s"], peers["copy"]["gb_per_s"], "GB/s"
    return "dense GEMM, same FLOPs", row["tflops"], peers["dense_same_flops"]["tflops"], "TFLOP/s"


def fastest_config(rows: list[dict]) -> dict:
    """The configuration with the lowest geometric mean of its times relative to the default's, over the sizes
    where every configuration ran."""
    import math

    default = {r["size_name"]: r["ms_median"] for r in rows if not r["config"] and "ms_median" in r}
    scores: dict[str, list[float]] = {}
    configs: dict[str, dict] = {}
    for r in rows:
        if "ms_median" in r and r["size_name"] in default:
            key = json.dumps(r["config"], sort_keys=True)
            configs[key] = r["config"]
            scores.setdefault(key, []).append(math.log(r["ms_median"] / default[r["size_name"]]))
    complete = {k: sum(v) / len(v) for k, v in scores.items() if len(v) == len(default)}
    return configs[min(complete, key=complete.get)] if complete else {}


def best_rows(sweeps: list[dict]) -> list[dict]:
    best: dict[tuple, dict] = {}
    for row in sweeps:
        if "ms_median" not in row:
            continue
        key = (row["kernel"], row["size_name"])
        if key not in best or row["ms_median"] < best[key]["ms_median"]:
            best[key] = row
    return list(best.values())


def table(result: dict) -> str:
    peers = result["peers"]
    lines = [
        "| kernel | sizes | best config | ms | ours | peer | peer rate | ratio | target |",
        "| --- | --- | --- | ---: | ---: | --- | ---: | ---: | ---: |",
    ]
    for row in best_rows(result["sweeps"]):
        kernel = row["kernel"]
        name, ours, theirs, unit = peer_for(kernel, row, peers)
        target = TARGETS.get(kernel, ("", None))[1]  # the same at 4000^3 for the GEMMs (1.05 before issue 18)
        ratio = ours / theirs
        sizes = ", ".join(f"{k}={v}" for k, v in row["sizes"].items())
        config = ", ".join(f"{k}={v}" for k, v in row["config"].items()) or "default"
        if target is None:  # a kernel swept without a target of the issue: its ratio only
            aim = "-"
        else:
            aim = f"{target:.2f}× ({'met' if ratio >= target else f'missed by {target - ratio:.2f}'})"
        lines.append(
            f"| `{kernel}` | {sizes} | {config} | {row['ms_median']:.3f} | {ours:.1f} {unit} | {name} | "
            f"{theirs:.1f} | {ratio:.2f}× | {aim} |"
        )
    extra = [
        f"copy {peers['copy']['gb_per_s']:.0f} GB/s",
        f"torch.softmax {peers['torch_softmax']['gb_per_s']:.0f} GB/s",
        f"F.layer_norm {peers['torch_layer_norm']['gb_per_s']:.0f} GB/s",
        f"per-expert torch.matmul loop {peers['expert_loop']['tflops']:.1f} TFLOP/s",
    ]
    return "\n".join(lines) + "\n\nOther peers, same run: " + "; ".join(extra) + "."


def run(bundles: Path, out: Path, trials: int, only: list[str]) -> int:
    import torch
    import triton

    out.mkdir(parents=True, exist_ok=True)
    bench = Bench(bundles, trials)
    started = time.perf_counter()
    bench.peers_all()

    def result() -> dict:
        return {
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "device": torch.cuda.get_device_name(),
            "versions": {"torch": torch.__version__, "triton": triton.__version__, "python": sys.version.split()[0]},
            "trials": trials,
            "seconds": time.perf_counter() - started,
            "peers": bench.peers,
            "gates": bench.gates,
            "sweeps": bench.sweeps,
        }

    for folder in sorted(p for p in bundles.iterdir() if (p / "run.py").exists()):
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        for kernel in manifest["kernels"]:
            if only and kernel not in only:
                continue
            if kernel not in SWEEPS:  # fp32 GEMMs: bench/h200_fp32.py; the wide-row kernels have no peer here
                log(f"{kernel}: no sweep here, left out")
                continue
            bench.gate(folder, kernel)
            bench.sweep(folder, kernel)
            fastest = fastest_config([r for r in bench.sweeps if r["kernel"] == kernel])
            if fastest:  # gate the configuration the file's default would become
                bench.gate(folder, kernel, fastest)
            # written after every kernel, so a run cut short still leaves what it measured
            (out / "h200_experts.json").write_text(json.dumps(result(), indent=1, default=str), encoding="utf-8")
    result = result()
    print(table(result))
    print(f"\n{result['device']}, torch {torch.__version__}, triton {triton.__version__}, {result['seconds']:.0f} s")
    failed = [
        f"{g['kernel']} {g.get('config') or ''}".strip()
        for g in bench.gates
        if any(g[s].get("status") != "passed" for s in ("compile", "correct"))
    ]
    if failed:
        print(f"gate failures: {', '.join(failed)}")
    return 1 if failed else 0


def one_launch(bundles: Path, kernel: str, size_name: str, result: Path) -> int:
    """Launch `kernel` twice at one size under its fastest configuration in `result` (for ncu: skip the
    first launch, which compiles, and profile the second)."""
    import torch

    rows = [r for r in json.loads(result.read_text())["sweeps"] if r["kernel"] == kernel and "ms_median" in r]
    rows = [r for r in rows if r["size_name"] == size_name]
    config = min(rows, key=lambda r: r["ms_median"])["config"] if rows else {}
    folders = [p for p in sorted(bundles.iterdir()) if (p / "manifest.json").exists()]
    folder = next(p for p in folders if kernel in json.loads((p / "manifest.json").read_text())["kernels"])
    sys.path.insert(0, str(folder))
    from gate_common import Bundle

    bundle = Bundle(folder)
    module = bundle.load_kernel_module()
    problem = bundle.load_problem_module(kernel)
    inputs = problem.make_inputs(problem.SIZES[size_name], 7, "cuda")
    entry = module.KERNELS[kernel]
    grid, args, kwargs = recorded_launch(module, entry, inputs, config)
    for _ in range(2):
        entry["jit"][grid](*args, **kwargs)
    torch.cuda.synchronize()
    print(f"{kernel} {size_name} config {config or 'default'}: launched twice")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    bundle = commands.add_parser("bundle", help="write one gate bundle per expert file")
    bundle.add_argument("--out", type=Path, default=ROOT / "build" / "h200_experts")
    bundle.add_argument("files", nargs="*", type=Path, help="Argus files (default: the experts and the candidates)")
    running = commands.add_parser("run", help="on the GPU: gate, sweep and peers; the table and JSON")
    running.add_argument("bundles", type=Path)
    running.add_argument("--out", type=Path, required=True)
    running.add_argument("--trials", type=int, default=50, help="timed launches per measurement")
    running.add_argument("--kernel", action="append", default=[], help="only this kernel (repeatable)")
    once = commands.add_parser("one", help="on the GPU: launch one kernel twice (for ncu) under its best config")
    once.add_argument("bundles", type=Path)
    once.add_argument("kernel")
    once.add_argument("--size", default="large")
    once.add_argument("--result", type=Path, required=True)
    shown = commands.add_parser("table", help="print the table of a result file")
    shown.add_argument("result", type=Path)
    args = parser.parse_args(argv)
    if args.command == "bundle":
        return write_bundles(args.out, [p.resolve() for p in args.files] or None)
    if args.command == "one":
        return one_launch(args.bundles, args.kernel, args.size, args.result)
    if args.command == "table":
        print(table(json.loads(args.result.read_text(encoding="utf-8"))))
        return 0
    return run(args.bundles, args.out, args.trials, args.kernel)


if __name__ == "__main__":
    sys.exit(main())
