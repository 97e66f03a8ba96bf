"""Compile `NAME_gluon` of a generated module for sm_90 without a GPU and print ptxas' report as JSON.

Run by a Python with the device's Triton (3.6; Gluon's API moves between releases) and torch only:
    python gluon_compile.py MODULE.py NAME
tests/codegen/test_gluon_gemm.py runs it; so can anyone checking a kernel's registers before a device run.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
from triton.runtime.jit import mangle_type


def arguments(fn, size: int = 4096, tiles: tuple[int, int, int] = (128, 256, 64)) -> dict:
    """A launch of the 128 x 256 x 64 tile at size^3 with every epilogue tensor f16 and every scalar 1.5."""
    bm, bn, bk = tiles
    x = torch.empty(size, size, dtype=torch.float16)
    f16 = gl.float16

    def descriptor(block):
        return TensorDescriptor(x, [size, size], [size, 1], block, gl.NVMMASharedLayout.get_default_for(block, f16))

    values = {"a_desc": descriptor([bm, bk]), "b_desc": descriptor([bk, bn]), "c_ptr": x, "stride_cm": size}
    values |= {"M": size, "N": size, "K": size, "GROUP_M": 8, "NUM_SMS": 132, "STAGES": 3, "SUB_M": 16}
    values |= {"TAIL_CHUNKS": 5, "EPILOGUE_WARPS": 4, "EPILOGUE_REGS": 120, "num_warps": 8}
    for param in fn.params:
        if param.name.startswith("p_"):
            values[param.name] = 1 if param.name.endswith("_stride") else x[0]
        elif param.name.startswith("s_"):
            values[param.name] = 1.5
    return values


def main() -> None:
    path, name = sys.argv[1], sys.argv[2]
    spec = importlib.util.spec_from_file_location("generated", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fn = getattr(module, f"{name}_gluon")
    values = arguments(fn)
    signature, constexprs = {}, {}
    for index, param in enumerate(fn.params):
        if param.is_constexpr:
            signature[param.name] = "constexpr"
            constexprs[(index,)] = values[param.name]
        else:
            signature[param.name] = mangle_type(values[param.name])
    pointers = [i for i, p in enumerate(fn.params) if p.name == "c_ptr" or re.fullmatch(r"p_\w+(?<!_stride)", p.name)]
    attrs = {(i,): [["tt.divisibility", 16]] for i in pointers}
    compiled = triton.compile(
        GluonASTSource(fn, signature, constexprs, attrs),
        target=GPUTarget("cuda", 90, 32),
        options={"num_warps": values["num_warps"]},
    )
    with tempfile.TemporaryDirectory() as tmp:
        ptx = Path(tmp) / "kernel.ptx"
        ptx.write_text(compiled.asm["ptx"])
        ptxas = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "ptxas"
        command = [str(ptxas), "-v", "--gpu-name=sm_90a", str(ptx), "-o", f"{ptx}.o"]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
    report = {
        "triton": triton.__version__,
        "registers": [int(n) for n in re.findall(r"Used (\d+) registers", done.stderr)],
        "spill_stores": [int(n) for n in re.findall(r"(\d+) bytes spill stores", done.stderr)],
        "shared_bytes": compiled.metadata.shared,
        "ptx_erf_calls": compiled.asm["ptx"].count("__nv_erff"),
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
