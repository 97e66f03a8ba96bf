"""Code generation: the tile IR of a checked Argus file becomes readable Triton plus checking launchers.

`generate(check)` gives the kernel module; `generate_problem(check, kernel)` gives the module the gate uses
to make inputs and compute the PyTorch reference. docs/codegen.md describes both contracts.
"""

from argus.codegen.errors import CodegenError
from argus.codegen.module import GeneratedModule, KernelInfo, generate
from argus.codegen.problem import generate_problem

__all__ = ["CodegenError", "GeneratedModule", "KernelInfo", "generate", "generate_problem"]
