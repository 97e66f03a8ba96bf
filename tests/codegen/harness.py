"""Run generated kernels in a fresh process and print one JSON record per kernel, for the tests beside it.

    python harness.py interpret FILE... [--override NAME=VALUE]...   run at the `small` sizes under the Triton
                                                                    interpreter and compare with the reference
    python harness.py compile FILE...                                compile for sm_90 (no GPU needed) and read
                                                                    back shared memory and registers

TRITON_INTERPRET must be set before triton is imported, so each mode runs here, never inside pytest's process.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import types
from pathlib import Path

from codegen_support import module_from

TOLERANCE = {"f32": 1e-4, "f64": 1e-6, "f16": 1e-2, "bf16": 1e-2}


def load(source: str, name: str) -> types.ModuleType:
    """Import generated source from a real file, as Triton's JIT reads the source of what it compiles."""
    return module_from(source, name, Path(tempfile.mkdtemp(prefix="argus-codegen-")))


def interpret(paths: list[str], overrides: dict, transpose: bool = False) -> list[dict]:
    import torch

    from argus.codegen import generate, generate_problem
    from argus.dsl.check import check_source

    records = []
    for path in paths:
        check = check_source(Path(path).read_text(encoding="utf-8"))
        module = load(generate(check, path).source, "kernels")
        for name, entry in module.KERNELS.items():
            problem = load(generate_problem(check, name), "problem")
            inputs = problem.make_inputs(problem.SIZES["small"], 0, "cpu")
            if transpose:  # same values, column-major strides
                for name, value in inputs.items():
                    if isinstance(value, torch.Tensor) and value.dim() == 2 and name not in problem.OUTPUTS:
                        inputs[name] = value.t().contiguous().t()
            for output in problem.OUTPUTS:
                if inputs[output].is_floating_point():
                    inputs[output].fill_(float("nan"))  # an element the kernel never writes fails
                else:
                    inputs[output].fill_(-7)
            chosen = {k: v for k, v in overrides.items() if k in entry["constants"] or k in entry["policy"]}
            entry["launcher"](**inputs, **chosen)
            expected = problem.reference(**inputs)
            expected = expected if isinstance(expected, tuple) else (expected,)
            for output, want in zip(problem.OUTPUTS, expected, strict=True):
                got = inputs[output]
                dtype = next(p["dtype"] for p in entry["params"] if p["name"] == output)
                tolerance = TOLERANCE.get(dtype, 0.0)
                difference = (got.double() - want.to(got.device).double()).abs()
                close = torch.allclose(got.double(), want.double(), atol=tolerance, rtol=tolerance)
                records.append(
                    {
                        "overrides": chosen,
                        "strides": [list(v.stride()) for v in inputs.values() if isinstance(v, torch.Tensor)],
                        "file": Path(path).name,
                        "kernel": name,
                        "output": output,
                        "dtype": dtype,
                        "tolerance": tolerance,
                        "max_abs_error": float(difference.max()) if difference.numel() else 0.0,
                        "nan": int(torch.isnan(got.double()).sum()),
                        "close": bool(close),
                    }
                )
    return records


def argument_type(param: dict) -> str:
    types_ = {"f16": "fp16", "bf16": "bf16", "f32": "fp32", "f64": "fp64", "i32": "i32", "i64": "i64"}
    types_.update({"i8": "i8", "i16": "i16", "u8": "u8", "bool": "i1", "f8e4m3": "fp8e4nv", "f8e5m2": "fp8e5"})
    return ("*" if param["kind"] == "tensor" else "") + types_[param["dtype"]]


def compile_sm90(paths: list[str]) -> list[dict]:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.backends.nvidia.compiler import get_ptxas
    from triton.compiler import ASTSource

    from argus.codegen import generate
    from argus.dsl.check import check_source

    records = []
    for path in paths:
        check = check_source(Path(path).read_text(encoding="utf-8"))
        module = load(generate(check, path).source, "kernels")
        variants = [
            (name, kernel, tma)
            for name, kernel in module.KERNELS.items()
            for tma in ((0, 1) if "tma" in kernel["policy"] else (None,))
        ]
        for name, entry, tma in variants:
            jit = entry["jit"]
            signature, constexprs = {}, {}
            if tma is not None:  # both forms of a kernel with TMA descriptors (codegen/tma.py)
                signature["ARGUS_TMA"] = "constexpr"
                constexprs["ARGUS_TMA"] = tma
            for param in entry["params"]:
                signature[param["name"]] = argument_type(param)
            for size in entry["sizes"]:
                signature[size] = "i32"
            for strides in entry["strides"].values():
                signature.update({stride: "i32" for stride in strides[:-1]})
                if strides:  # a contiguous tensor's last stride is 1, which Triton's JIT specializes as a constant
                    signature[strides[-1]] = "constexpr"
                    constexprs[strides[-1]] = 1
            # torch allocations are 16-byte aligned, which the JIT also specializes on
            aligned = {(jit.arg_names.index(p["name"]),): [["tt.divisibility", 16]] for p in entry["params"]}
            aligned = {k: v for k, v in aligned.items() if entry["params"][k[0]]["kind"] == "tensor"}
            for constant, value in entry["constants"].items():
                signature[constant] = "constexpr"
                constexprs[constant] = value
            for setting, flag in (("warp_specialize", "ARGUS_WS"), ("flatten", "ARGUS_FLATTEN")):
                if setting in entry["policy"]:  # loop options: constexpr flags of the jit function
                    signature[flag] = "constexpr"
                    constexprs[flag] = entry["policy"][setting]
                    if flag == "ARGUS_WS" and tma == 0:  # the launcher runs the pointer form unspecialized
                        constexprs[flag] = 0
            signature = {arg: signature[arg] for arg in jit.arg_names}
            loop_flags = ("tma", "warp_specialize", "flatten")
            options = {k: v for k, v in entry["policy"].items() if k not in loop_flags}
            compiled = triton.compile(
                ASTSource(jit, signature, constexprs, aligned), target=GPUTarget("cuda", 90, 32), options=options
            )
            with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as ptx:
                ptx.write(compiled.asm["ptx"])
            report = subprocess.run(
                [get_ptxas(90).path, "-v", "--gpu-name", "sm_90a", ptx.name, "-o", os.devnull],
                capture_output=True,
                text=True,
                check=True,
            ).stderr
            registers = re.search(r"Used (\d+) registers", report)
            spills = re.search(r"(\d+) bytes spill stores", report)
            records.append(
                {
                    "file": Path(path).name,
                    "kernel": name,
                    "tma": tma,
                    "shared": int(compiled.metadata.shared),
                    "registers": int(registers.group(1)) if registers else None,
                    "spill_stores": int(spills.group(1)) if spills else None,
                    "uses_dot": "tl.dot(" in Path(jit.__globals__["__file__"]).read_text(encoding="utf-8"),
                    "ptx_target": "sm_90a" in compiled.asm["ptx"],
                }
            )
    return records


def main(argv: list[str]) -> None:
    mode, rest = argv[0], argv[1:]
    overrides, paths, transpose = {}, [], False
    while rest:
        item = rest.pop(0)
        if item == "--transpose-inputs":
            transpose = True
        elif item == "--override":
            key, value = rest.pop(0).split("=")
            overrides[key] = int(value) if value.lstrip("-").isdigit() else value  # PREC=tf32: a string constant
        else:
            paths.append(item)
    if mode == "interpret":
        os.environ["TRITON_INTERPRET"] = "1"
        records = interpret(paths, overrides, transpose)
    else:
        os.environ.pop("TRITON_INTERPRET", None)
        records = compile_sm90(paths)
    print(json.dumps(records))


if __name__ == "__main__":
    main(sys.argv[1:])
