"""Counterexample records: what a refuted obligation reports, in `Diagnostic.data` and in the message."""

from __future__ import annotations

from pydantic import BaseModel, Field


class Access(BaseModel):
    """The other side of a race: where it happens and in which program, iteration and element."""

    line: int = Field(description="0-based line of the access")
    character: int = Field(description="0-based column of the access")
    what: str
    program: dict[str, int] = Field(description="program id of each grid axis, by the name the kernel gives it")
    iteration: dict[str, int] = Field(description="value of each enclosing loop variable, and its iteration number")
    element: dict[str, int] = Field(description="coordinates of the tile element")


class Counterexample(BaseModel):
    """A concrete launch in which the invariant fails."""

    kind: str = Field(
        description="in_bounds | race_store | race_read | coverage | contraction | alignment | tag | tag_missing "
        "| invariant_entry | invariant_step | hint"
    )
    line: int = Field(description="0-based line of the program point")
    character: int = Field(description="0-based column of the program point")
    program: dict[str, int] = Field(description="program id of each grid axis, by the name the kernel gives it")
    iteration: dict[str, int] = Field(description="value of each enclosing loop variable, and its iteration number")
    element: dict[str, int] = Field(description="coordinates of the tile element (i, j, ...; kk for a dot's K)")
    sizes: dict[str, int] = Field(description="the problem sizes")
    values: dict[str, int | bool | str] = Field(description="indices, extents and tag values involved")
    data: dict[str, int | bool | str] = Field(default_factory=dict, description="tensor elements loaded as data")
    second: Access | None = Field(default=None, description="for a race: the other program's access")

    def text(self) -> str:
        parts = []
        if self.program:
            parts.append("program (" + ", ".join(f"{k}={v}" for k, v in self.program.items()) + ")")
        loops = {k: v for k, v in self.iteration.items() if not k.endswith(" iteration")}
        if loops:
            parts.append("iteration " + ", ".join(f"{k}={v}" for k, v in loops.items()))
        if self.element:
            parts.append("element (" + ", ".join(f"{k}={v}" for k, v in self.element.items()) + ")")
        text = ", ".join(parts)
        if self.values:
            text += (": " if text else "") + ", ".join(f"{k} = {v}" for k, v in self.values.items())
        if self.sizes:
            text += "; sizes " + ", ".join(f"{k}={v}" for k, v in self.sizes.items())
        if self.data:
            text += "; data " + ", ".join(f"{k}={v}" for k, v in self.data.items())
        if self.second is not None:
            other = self.second
            where = ", ".join(f"{k}={v}" for k, v in other.program.items())
            loops = {k: v for k, v in other.iteration.items() if not k.endswith(" iteration")}
            text += f"; and program ({where})"
            if loops:
                text += " iteration " + ", ".join(f"{k}={v}" for k, v in loops.items())
            if other.element:
                text += " element (" + ", ".join(f"{k}={v}" for k, v in other.element.items()) + ")"
            text += f" {other.what} at line {other.line + 1}"
        return text
