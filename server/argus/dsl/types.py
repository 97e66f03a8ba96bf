"""Dtypes and the types of Argus values: scalars, tiles (constant shapes), tensors (symbolic shapes)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class DType:
    name: str
    kind: str  # bool | int | uint | float
    bits: int
    doc: str = field(default="", compare=False)

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_integer(self) -> bool:
        return self.kind in ("int", "uint", "bool")

    def __str__(self) -> str:
        return self.name


DTYPES: dict[str, DType] = {
    d.name: d
    for d in (
        DType("bool", "bool", 1, "boolean (i1)"),
        DType("i8", "int", 8, "8-bit signed integer"),
        DType("i16", "int", 16, "16-bit signed integer"),
        DType("i32", "int", 32, "32-bit signed integer"),
        DType("i64", "int", 64, "64-bit signed integer"),
        DType("u8", "uint", 8, "8-bit unsigned integer"),
        DType("f8e4m3", "float", 8, "8-bit float, 4 exponent bits (Hopper FP8)"),
        DType("f8e5m2", "float", 8, "8-bit float, 5 exponent bits (Hopper FP8)"),
        DType("f16", "float", 16, "IEEE half precision"),
        DType("bf16", "float", 16, "bfloat16"),
        DType("f32", "float", 32, "IEEE single precision"),
        DType("f64", "float", 64, "IEEE double precision"),
    )
}
BOOL, I32, I64, F16, BF16, F32 = (DTYPES[n] for n in ("bool", "i32", "i64", "f16", "bf16", "f32"))


def promote(a: DType, b: DType) -> DType:
    """The dtype of a binary operation on two non-literal operands, as Triton computes it."""
    if a == b:
        return a
    if a.is_float or b.is_float:
        if not (a.is_float and b.is_float):
            return a if a.is_float else b
        if a.bits != b.bits:
            return a if a.bits > b.bits else b
        return F32  # f16 with bf16, or two fp8 kinds
    if a.kind == "bool":
        return b
    if b.kind == "bool":
        return a
    return a if a.bits >= b.bits else b


@dataclass(frozen=True, slots=True)
class Dim:
    """A tile dimension: always a compile-time constant, remembered with the name it was written as."""

    value: int
    label: str = ""

    def __str__(self) -> str:
        return self.label or str(self.value)


Shape = tuple[Dim, ...]


def shape_text(shape: Shape) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


@dataclass(frozen=True, slots=True)
class SizeExpr:
    """A tensor dimension: a size symbol plus an offset, or a constant (symbol None); or, on a view a parameter
    declares (`x: f16[B, C, H, W] as [B, C * H * W]`), the product of stored dimensions (`factors`, each one of
    the other forms; symbol None and offset 0 then)."""

    symbol: str | None
    offset: int = 0
    label: str = ""
    factors: tuple[SizeExpr, ...] = ()

    @property
    def is_product(self) -> bool:
        return bool(self.factors)

    def value(self, sizes: dict) -> int | None:
        """The length at these sizes (symbol -> int), or None when a symbol it needs is not there."""
        if self.factors:
            total = 1
            for factor in self.factors:
                length = factor.value(sizes)
                if length is None:
                    return None
                total *= length
            return total
        if self.symbol is None:
            return self.offset
        length = sizes.get(self.symbol)
        return None if length is None else int(length) + self.offset

    def symbols(self) -> list[str]:
        """The size symbols the dimension is made of."""
        if self.factors:
            return [s for f in self.factors for s in f.symbols()]
        return [] if self.symbol is None else [self.symbol]

    def __str__(self) -> str:
        if self.label:
            return self.label
        if self.factors:
            return " * ".join(f"({f})" if f.symbol is not None and f.offset else str(f) for f in self.factors)
        if self.symbol is None:
            return str(self.offset)
        if self.offset:
            return f"{self.symbol} {'+' if self.offset > 0 else '-'} {abs(self.offset)}"
        return self.symbol


@dataclass(frozen=True, slots=True)
class ScalarT:
    dtype: DType
    const: int | float | bool | None = None  # the value when known at compile time
    weak: bool = False  # a literal: adapts to the dtype of the other operand

    def __str__(self) -> str:
        return str(self.dtype) if self.const is None else f"{self.dtype} = {self.const}"


@dataclass(frozen=True, slots=True)
class TileT:
    dtype: DType
    shape: Shape

    def __str__(self) -> str:
        return f"{self.dtype}{shape_text(self.shape)}"


@dataclass(frozen=True, slots=True)
class TensorT:
    """A tensor parameter. `shape` is what the kernel indexes; `stored`, for a parameter that declares a view
    (`x: f16[B, C, H, W] as [B, C * H * W]`), the shape the caller's tensor has (None: the same as `shape`).
    `out`: the kernel may write it (`out` or `inout`); `inout`: it also holds input data."""

    dtype: DType
    shape: tuple[SizeExpr, ...]
    out: bool
    inout: bool = False
    stored: tuple[SizeExpr, ...] | None = None

    @property
    def stored_shape(self) -> tuple[SizeExpr, ...]:
        """The shape of the tensor the caller passes (the launcher checks it, the gate makes it)."""
        return self.shape if self.stored is None else self.stored

    def __str__(self) -> str:
        mode = "inout " if self.inout else "out " if self.out else ""
        dims = ", ".join(str(d) for d in self.stored_shape)
        view = "" if self.stored is None else " as [" + ", ".join(str(d) for d in self.shape) + "]"
        return f"{mode}{self.dtype}[{dims}]{view} tensor"


@dataclass(frozen=True, slots=True)
class RefT:
    """`T[i0, i1, ...]`: the elements of a tensor a load or store touches, in the shape of a tile."""

    tensor: str
    dtype: DType
    shape: Shape

    def __str__(self) -> str:
        return f"{self.tensor}[...] -> {self.dtype}{shape_text(self.shape)} access"


@dataclass(frozen=True, slots=True)
class DTypeT:
    dtype: DType

    def __str__(self) -> str:
        return f"dtype {self.dtype}"


@dataclass(frozen=True, slots=True)
class TupleT:
    elts: tuple[Type, ...]

    def __str__(self) -> str:
        return "(" + ", ".join(str(e) for e in self.elts) + ")"


@dataclass(frozen=True, slots=True)
class StrT:
    """A string: a literal, or the value of a string tile constant (`constant` names it), which only dot's
    input_precision takes."""

    value: str
    constant: str | None = None

    def __str__(self) -> str:
        return repr(self.value)


@dataclass(frozen=True, slots=True)
class NoneT:
    def __str__(self) -> str:
        return "None"


@dataclass(frozen=True, slots=True)
class ErrorT:
    """The type of an expression that already has a diagnostic: it silences follow-on errors."""

    def __str__(self) -> str:
        return "<error>"


Type = ScalarT | TileT | TensorT | RefT | DTypeT | TupleT | StrT | NoneT | ErrorT


def shape_of(t: Type) -> Shape:
    return t.shape if isinstance(t, TileT) else ()


def is_weak(t: Type) -> bool:
    """A literal's type, which adapts to the other operand's dtype."""
    return isinstance(t, ScalarT) and t.weak
