"""The transforms, by name. Each is a rewrite with its inverse (argus.skills.transforms.base says how)."""

from __future__ import annotations

from argus.skills.transforms.accumulate import DotAccumulator, F32Accumulation
from argus.skills.transforms.arith import Exp2, Reciprocal, Rsqrt
from argus.skills.transforms.base import Application, Check, Transform
from argus.skills.transforms.flash import CausalSplit, OnlineSoftmax
from argus.skills.transforms.hints import AlignmentHint
from argus.skills.transforms.layout import OperandLayout
from argus.skills.transforms.masks import DropEdgeMasks
from argus.skills.transforms.order import GroupedOrder, HeavyFirst
from argus.skills.transforms.precision import Precision
from argus.skills.transforms.reuse import ReuseLoad
from argus.skills.transforms.settings import NumWarps, Pipelining, TileSize, Tma, WarpSpecialize
from argus.skills.transforms.split_k import SplitK

TRANSFORMS: dict[str, Transform] = {
    t.name: t
    for t in (
        Pipelining(),
        NumWarps(),
        TileSize(),
        Tma(),
        WarpSpecialize(),
        GroupedOrder(),
        HeavyFirst(),
        DropEdgeMasks(),
        Exp2(),
        Reciprocal(),
        Rsqrt(),
        DotAccumulator(),
        F32Accumulation(),
        AlignmentHint(),
        OnlineSoftmax(),
        CausalSplit(),
        ReuseLoad(),
        SplitK(),
        Precision(),
        OperandLayout(),
    )
}

__all__ = ["TRANSFORMS", "Application", "Check", "Transform"]
