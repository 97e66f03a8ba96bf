"""The catalog of diagnostic codes. Codes are stable: a code is never reused for another meaning.

Families: AR0xx syntax, AR1xx names, AR2xx types and shapes, AR3xx data-flow invariants, AR4xx kernel and
model structure and problem sizes, AR5xx the gate (argus.gate reports them; `check` never does). docs/diagnostics.md
documents each code with a wrong and a right example.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

# The page every code links to. In a checkout (what `argus serve` runs from today) it is this file; a setting
# may point the links at a published copy later (documentation_url's `base`).
DOCS_PAGE = Path(__file__).resolve().parents[3] / "docs" / "diagnostics.md"


@dataclass(frozen=True)
class CodeInfo:
    title: str
    severity: str  # error | warning | information | hint


CODES: dict[str, CodeInfo] = {
    # syntax
    "AR001": CodeInfo("unexpected token", "error"),
    "AR002": CodeInfo("unexpected character", "error"),
    "AR003": CodeInfo("bracket never closed", "error"),
    "AR004": CodeInfo("unmatched closing bracket", "error"),
    "AR005": CodeInfo("inconsistent indentation", "error"),
    "AR006": CodeInfo("unknown top-level item", "error"),
    "AR007": CodeInfo("Python syntax error in a reference or inputs block", "error"),
    "AR008": CodeInfo("comparison mixed with a bitwise operator", "warning"),
    "AR010": CodeInfo("file too large to check in the editor", "information"),
    # names
    "AR101": CodeInfo("undefined name", "error"),
    "AR102": CodeInfo("duplicate definition", "error"),
    "AR103": CodeInfo("unknown function or method", "error"),
    "AR104": CodeInfo("unknown dtype", "error"),
    "AR105": CodeInfo("block for an unknown kernel", "error"),
    "AR106": CodeInfo("reference parameters differ from the kernel's inputs", "error"),
    "AR107": CodeInfo("kernel without a reference", "warning"),
    "AR108": CodeInfo("kernel without problem sizes", "warning"),
    "AR109": CodeInfo("assignment to a name that cannot change", "error"),
    "AR110": CodeInfo("name defined only on some paths", "error"),
    "AR111": CodeInfo("reference does not return a value", "error"),
    # types and shapes
    "AR201": CodeInfo("incompatible shapes", "error"),
    "AR202": CodeInfo("dot operand shapes do not match", "error"),
    "AR203": CodeInfo("mask does not match the access", "error"),
    "AR204": CodeInfo("wrong dtype for the operation", "error"),
    "AR205": CodeInfo("tile dimension is not a power of two", "error"),
    "AR206": CodeInfo("not a compile-time constant", "error"),
    "AR207": CodeInfo("wrong arguments", "error"),
    "AR208": CodeInfo("bad tensor access", "error"),
    "AR209": CodeInfo("loop-carried value changes type", "error"),
    "AR210": CodeInfo("condition is not a scalar", "error"),
    "AR211": CodeInfo("store to a tensor not marked out", "error"),
    "AR212": CodeInfo("implicit narrowing on store", "warning"),
    "AR213": CodeInfo("axis out of range", "error"),
    "AR214": CodeInfo("reshape changes the number of elements", "error"),
    "AR215": CodeInfo("dot operand smaller than 16", "error"),
    "AR216": CodeInfo("value used where it cannot be", "error"),
    "AR217": CodeInfo("unsupported tensor dimension", "error"),
    "AR218": CodeInfo("invalid argument value", "error"),
    "AR219": CodeInfo("dot precision cannot keep the output's tolerance", "error"),
    "AR220": CodeInfo("output accumulated by atomics with different starts", "error"),
    # views of parameters (AR220 is taken by the scans and atomics work)
    "AR221": CodeInfo("invalid view of a parameter", "error"),
    # data-flow invariants (the verifier, argus.verify)
    "AR301": CodeInfo("access out of bounds", "error"),
    "AR302": CodeInfo("two programs write the same element", "error"),
    "AR303": CodeInfo("read of an element another program writes", "error"),
    "AR304": CodeInfo("output element possibly never written", "warning"),
    "AR305": CodeInfo("tag assertion fails", "error"),
    "AR306": CodeInfo("loop invariant fails on entry", "error"),
    "AR307": CodeInfo("loop invariant not preserved", "error"),
    "AR308": CodeInfo("tag not set", "error"),
    "AR309": CodeInfo("compiler hint not established", "error"),
    "AR310": CodeInfo("dot contraction mismatch", "error"),
    "AR311": CodeInfo("statistic applied to other rows", "error"),
    "AR312": CodeInfo("invariant not proved", "warning"),
    "AR313": CodeInfo("padding reaches a reduction", "error"),
    "AR314": CodeInfo("division by zero", "error"),
    "AR315": CodeInfo("a contraction index reaches an atomic sum twice", "error"),
    "AR316": CodeInfo("a contraction index never reaches the dot", "warning"),
    "AR317": CodeInfo("-inf minus -inf in a real lane", "error"),
    "AR318": CodeInfo("accumulator carried into another tile", "error"),
    "AR319": CodeInfo("a tile axis pairs unrelated indices", "error"),
    "AR320": CodeInfo("narrow integer arithmetic wraps", "error"),
    "AR321": CodeInfo("a sum beside a running max is not rescaled", "error"),
    "AR322": CodeInfo("a mean counts padding lanes", "error"),
    "AR323": CodeInfo("partial sums stored along the wrong axis", "error"),
    "AR324": CodeInfo("a carried result is replaced, not accumulated", "error"),
    # kernel structure and problem sizes
    "AR401": CodeInfo("missing or repeated grid", "error"),
    "AR402": CodeInfo("program axis outside the grid", "error"),
    "AR403": CodeInfo("invalid policy setting", "error"),
    "AR404": CodeInfo("requires is not a condition on sizes", "error"),
    "AR405": CodeInfo("problem size set does not match the kernel", "error"),
    "AR406": CodeInfo("problem size set violates requires", "error"),
    "AR407": CodeInfo("declaration in the wrong place", "error"),
    "AR408": CodeInfo("output never written", "warning"),
    "AR409": CodeInfo("invalid tune list", "error"),
    "AR410": CodeInfo("tune configuration does not fit", "error"),
    "AR411": CodeInfo("invalid layout declaration", "error"),
    # models: kernel launches in order (argus.dsl.models)
    "AR412": CodeInfo("statement a model cannot hold", "error"),
    "AR413": CodeInfo("launch of something that is not a kernel", "error"),
    "AR414": CodeInfo("launch arguments do not match the kernel", "error"),
    "AR415": CodeInfo("launch argument has the wrong dtype", "error"),
    "AR416": CodeInfo("shapes disagree across launches", "error"),
    "AR417": CodeInfo("launch writes a model input", "error"),
    "AR418": CodeInfo("tensor read before any launch writes it", "error"),
    "AR419": CodeInfo("model output never written", "warning"),
    "AR420": CodeInfo("temporary never read", "warning"),
    "AR421": CodeInfo("model size set violates a launched kernel", "error"),
    # the gate: found by compiling and running the kernel, never by `check`
    "AR501": CodeInfo("kernel does not compile", "error"),
    "AR502": CodeInfo("kernel output differs from the reference", "error"),
    "AR503": CodeInfo("kernel launch failed", "error"),
    "AR504": CodeInfo("gate run exceeded its time limit", "error"),
    "AR505": CodeInfo("gate process crashed", "error"),
    "AR506": CodeInfo("gate ran out of memory", "error"),
    "AR507": CodeInfo("reference or inputs block failed", "error"),
}


def anchor(code: str) -> str:
    """The fragment of the code's section: GitHub's slug of its heading `## ARnnn: title` (lower case,
    punctuation dropped, spaces to hyphens), which VS Code's Markdown preview uses too."""
    heading = f"{code}: {CODES[code].title}"
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def documentation_url(code: str, base: str | None = None) -> str | None:
    """Where the code is explained: `base` (a URL of docs/diagnostics.md) with the code's anchor, by default
    the page in this checkout as a file URI. None for a code not in the catalog, or without a base when the
    page is not there (an installed package without its docs)."""
    if code not in CODES:
        return None
    if base is None:
        if not DOCS_PAGE.is_file():
            return None
        base = DOCS_PAGE.as_uri()
    return f"{base}#{anchor(code)}"
