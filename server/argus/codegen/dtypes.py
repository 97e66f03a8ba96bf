"""Argus dtypes as Triton and PyTorch spell them."""

from __future__ import annotations

from argus.dsl.types import DType

TRITON = {
    "bool": "tl.int1",
    "i8": "tl.int8",
    "i16": "tl.int16",
    "i32": "tl.int32",
    "i64": "tl.int64",
    "u8": "tl.uint8",
    "f8e4m3": "tl.float8e4nv",
    "f8e5m2": "tl.float8e5",
    "f16": "tl.float16",
    "bf16": "tl.bfloat16",
    "f32": "tl.float32",
    "f64": "tl.float64",
}

TORCH = {
    "bool": "torch.bool",
    "i8": "torch.int8",
    "i16": "torch.int16",
    "i32": "torch.int32",
    "i64": "torch.int64",
    "u8": "torch.uint8",
    "f8e4m3": "torch.float8_e4m3fn",
    "f8e5m2": "torch.float8_e5m2",
    "f16": "torch.float16",
    "bf16": "torch.bfloat16",
    "f32": "torch.float32",
    "f64": "torch.float64",
}


def triton_dtype(dtype: DType) -> str:
    return TRITON[dtype.name]


def torch_dtype(dtype: DType) -> str:
    return TORCH[dtype.name]
