"""Run generated kernels in a fresh process and print one JSON record per kernel, for the tests beside it.

    python harness.py interpret FILE... [--override NAME=VALUE]...   run each kernel and model the file gates at
                                                                    its `small` sizes under the Triton
                                                                    interpreter and compare with the reference
    python harness.py compile FILE...                                compile for sm_90 (no GPU needed) and read
                                                                    back shared memory and registers
    python harness.py copies FILE --sizes M=256,N=256,K=256 [--override NAME=VALUE]... [--drop-layouts]
                                                                    launch through the launcher (a recorder runs
                                                                    nothing), compile what it passed for sm_90 as
                                                                    the JIT specializes it, and report how each
                                                                    global-to-shared copy moves its operand

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
    from argus.gate.runner import gate_interpreter

    gate_interpreter.install()  # the gate's corrections of the interpreter (float atomic_max, ...): docs/gate.md

    records = []
    for path in paths:
        check = check_source(Path(path).read_text(encoding="utf-8"))
        module = load(generate(check, path).source, "kernels")
        for name in check.analysis.gated:  # a kernel a model launches runs through the model
            entry = module.KERNELS[name] if name in module.KERNELS else module.MODELS[name]
            problem = load(generate_problem(check, name), "problem")
            inputs = problem.make_inputs(problem.SIZES["small"], 0, "cpu")
            if transpose:  # same values, column-major strides
                for name, value in inputs.items():
                    if isinstance(value, torch.Tensor) and value.dim() == 2 and name not in problem.OUTPUTS:
                        inputs[name] = value.t().contiguous().t()
            inouts = getattr(problem, "INOUTS", [])  # in/out tensors hold input data: the reference gets a copy
            given = {k: v.clone() if k in inouts else v for k, v in inputs.items()}
            for output in problem.OUTPUTS:
                if output in inouts:
                    continue
                if inputs[output].is_floating_point():
                    inputs[output].fill_(float("nan"))  # an element the kernel never writes fails
                else:
                    inputs[output].fill_(-7)
            chosen = {k: v for k, v in overrides.items() if k in entry["constants"] or k in entry.get("policy", {})}
            entry["launcher"](**inputs, **chosen)
            expected = problem.reference(**given)
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
            for tensor, strides in entry["strides"].items():
                signature.update({stride: "i32" for stride in strides})
                if strides and tensor not in entry["layouts"]:
                    # a contiguous tensor's last stride is 1, which Triton's JIT specializes as a constant; a tensor
                    # with a `layout` has that constant in the kernel, and the launcher passes its other strides
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


def specialized(jit, args: tuple, kwargs: dict):
    """ASTSource arguments for one recorded launch, specialized as Triton's JIT does (3.6 and 3.9 alike, see
    docs/codegen.md): an integer equal to 1 becomes the constant 1, an integer divisible by 16 and a 16-byte
    aligned pointer are marked divisible by 16."""
    import torch

    bound = dict(zip(jit.arg_names, args, strict=False)) | {k: v for k, v in kwargs.items() if k in jit.arg_names}
    types_ = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16", torch.int32: "i32"}
    signature, constexprs, attrs = {}, {}, {}
    for index, param in enumerate(jit.params):
        value = bound.get(param.name, param.default)
        divisible = False
        if param.is_constexpr or (isinstance(value, int) and value == 1):
            signature[param.name], constexprs[param.name] = "constexpr", value
        elif isinstance(value, torch.Tensor):
            signature[param.name], divisible = "*" + types_[value.dtype], value.data_ptr() % 16 == 0
        elif isinstance(value, int):
            signature[param.name], divisible = "i32", value % 16 == 0
        else:
            signature[param.name] = "fp32"
        if divisible:
            attrs[(index,)] = [["tt.divisibility", 16]]
    return signature, constexprs, attrs


def operand_copies(paths: list[str], overrides: dict, sizes: dict, drop_layouts: bool) -> list[dict]:
    import collections

    import triton
    from codegen_support import Recorder
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from argus.codegen import generate, generate_problem
    from argus.dsl.check import check_source

    records = []
    for path in paths:
        text = Path(path).read_text(encoding="utf-8")
        if drop_layouts:
            text = re.sub(r"^[ \t]*layout .*\n", "", text, flags=re.MULTILINE)
        check = check_source(text)
        module = load(generate(check, path).source, "kernels")
        for name, entry in module.KERNELS.items():
            problem = load(generate_problem(check, name), "problem")
            inputs = problem.make_inputs(sizes, 0, "cpu")
            jit, entry["jit"] = entry["jit"], Recorder()
            entry["launcher"](**inputs, **overrides)
            [launch] = entry["jit"].launches
            signature, constexprs, attrs = specialized(jit, launch["args"], launch["kwargs"])
            options = {k: v for k, v in launch["kwargs"].items() if k in ("num_warps", "num_stages", "num_ctas")}
            target = GPUTarget("cuda", 90, 32)
            compiled = triton.compile(ASTSource(jit, signature, constexprs, attrs), target=target, options=options)
            ttgir = compiled.asm["ttgir"]
            encodings = dict(re.findall(r"^(#[\w.]+) = (.*)$", ttgir, re.MULTILINE))
            copies = []
            for line in re.findall(r"^.*ttg\.async_copy_global_to_local .*$", ttgir, re.MULTILINE):
                found = re.search(r"tensor<([\dx]+)x!tt\.ptr<\w+>, (#\w+)> -> <[\dx]+x\w+, (#\w+)", line)
                layout = encodings[found.group(2)]
                copies.append(
                    {
                        "shape": [int(n) for n in found.group(1).split("x")],
                        "order": [int(n) for n in re.search(r"order = \[([\d, ]+)\]", layout).group(1).split(",")],
                        "per_thread": [
                            int(n) for n in re.search(r"sizePerThread = \[([\d, ]+)\]", layout).group(1).split(",")
                        ],
                        "shared": encodings[found.group(3)],
                    }
                )
            sizes_in_bytes = re.findall(r"cp\.async\.\w+\.shared\.global[^;]*?, (0x[0-9a-f]+)", compiled.asm["ptx"])
            records.append(
                {
                    "kernel": name,
                    "strides": {k: list(v.stride()) for k, v in inputs.items() if hasattr(v, "stride")},
                    "copies": copies,
                    "cp_async_bytes": {int(k, 16): n for k, n in collections.Counter(sizes_in_bytes).items()},
                }
            )
    return records


def main(argv: list[str]) -> None:
    mode, rest = argv[0], argv[1:]
    overrides, paths, transpose = {}, [], False
    sizes, drop_layouts = {}, False
    while rest:
        item = rest.pop(0)
        if item == "--transpose-inputs":
            transpose = True
        elif item == "--drop-layouts":
            drop_layouts = True
        elif item == "--sizes":
            sizes = {key: int(value) for key, value in (pair.split("=") for pair in rest.pop(0).split(","))}
        elif item == "--override":
            key, value = rest.pop(0).split("=")
            overrides[key] = int(value) if value.lstrip("-").isdigit() else value  # PREC=tf32: a string constant
        else:
            paths.append(item)
    if mode == "interpret":
        os.environ["TRITON_INTERPRET"] = "1"
        records = interpret(paths, overrides, transpose)
    elif mode == "copies":
        os.environ.pop("TRITON_INTERPRET", None)
        records = operand_copies(paths, overrides, sizes, drop_layouts)
    else:
        os.environ.pop("TRITON_INTERPRET", None)
        records = compile_sm90(paths)
    print(json.dumps(records))


if __name__ == "__main__":
    main(sys.argv[1:])
