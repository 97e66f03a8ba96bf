"""Counterexample records: what a refuted obligation reports, in `Diagnostic.data` and in the message.

The message reads the way GPUVerify's and Faial's reports do: a first line that says what is wrong, then one
indented line per part of the launch that shows it (program ids, iteration, element, values, sizes, the other
access of a race), each naming the source line it comes from."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, Field


class Access(BaseModel):
    """The other side of a race: where it happens and in which program, iteration and element."""

    line: int = Field(description="0-based line of the access")
    character: int = Field(description="0-based column of the access")
    what: str
    program: dict[str, int] = Field(description="program id of each grid axis, by the name the kernel gives it")
    iteration: dict[str, int] = Field(description="value of each enclosing loop variable, and its iteration number")
    element: dict[str, int] = Field(description="coordinates of the tile element")

    def who(self) -> str:
        """`program pm=0, pn=1, iteration k0=0, element i=0, j=1`: which instance makes this access."""
        parts = [f"program {pairs(self.program)}"] if self.program else ["another program"]
        if iterations(self.iteration):
            parts.append(f"iteration {pairs(iterations(self.iteration))}")
        if self.element:
            parts.append(f"element {pairs(self.element)}")
        return ", ".join(parts)


class Counterexample(BaseModel):
    """A concrete launch in which the invariant fails."""

    kind: str = Field(
        description="in_bounds | race_store | race_read | coverage | contraction | alignment | tag | tag_missing "
        "| invariant_entry | invariant_step | hint | padding | nan | division | double_count | contraction_coverage "
        "| walked_axis | carried_tile | paired_axes | narrow_wrap | rescale | padded_mean | walked_sum"
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

    def report(
        self, program_lines: Mapping[str, int] | None = None, loop_lines: Mapping[str, int] | None = None
    ) -> list[str]:
        """The counterexample as a report reads it, one part a line, each naming the line it comes from:

            program: pm=0, pn=1 (from program_id at line 6)
            iteration: k0=32, the 2nd iteration of the loop at line 10
            element: i=0, j=1
            values: A index 0 (M) = 64, A extent 0 = 64
            sizes: M=64, K=33, N=1
            other access: store at line 15 by program pm=0, pn=0, element i=0, j=1

        `program_lines` gives the 0-based line of each program id's `program_id(...)`, `loop_lines` that of each
        enclosing loop's `for`; a part without a line is shown without one."""
        programs, loops = program_lines or {}, loop_lines or {}
        lines = []
        if self.program:
            lines.append(f"program: {pairs(self.program)}{read_at(self.program, programs)}")
        if iterations(self.iteration):
            lines.append("iteration: " + iteration_text(self.iteration, loops))
        if self.element:
            lines.append(f"element: {pairs(self.element)}")
        if self.values:
            label = "no program writes" if self.kind == "coverage" else "values"
            lines.append(f"{label}: {pairs(self.values, ' = ')}")
        if self.sizes:
            lines.append(f"sizes: {pairs(self.sizes)}")
        if self.data:
            lines.append(f"loaded data: {pairs(self.data)}")
        if self.second is not None:
            lines.append(f"other access: {self.second.what} at line {self.second.line + 1} by {self.second.who()}")
        return lines


def pairs(values: Mapping[str, object], between: str = "=") -> str:
    return ", ".join(f"{k}{between}{v}" for k, v in values.items())


def iterations(iteration: Mapping[str, int]) -> dict[str, int]:
    """The loop variables' values, without the iteration counts recorded beside them (`k0 iteration`)."""
    return {k: v for k, v in iteration.items() if not k.endswith(" iteration")}


def iteration_text(iteration: Mapping[str, int], loop_lines: Mapping[str, int]) -> str:
    parts = []
    for name, value in iterations(iteration).items():
        count = iteration.get(f"{name} iteration")
        text = f"{name}={value}"
        if isinstance(count, int) and count >= 0:
            text += f", the {ordinal(count + 1)} iteration"
            if name in loop_lines:
                text += f" of the loop at line {loop_lines[name] + 1}"
        elif name in loop_lines:
            text += f" (the loop at line {loop_lines[name] + 1})"
        parts.append(text)
    return "; ".join(parts)


def read_at(program: Mapping[str, int], program_lines: Mapping[str, int]) -> str:
    lines = sorted({program_lines[name] + 1 for name in program if name in program_lines})
    if not lines:
        return ""
    if len(lines) == 1:
        return f" (from program_id at line {lines[0]})"
    return f" (from program_id at lines {', '.join(map(str, lines[:-1]))} and {lines[-1]})"


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
