"""The shared-memory estimate (argus.dsl.resources, what `argus check` holds every tune configuration to: AR410)
against what Triton compiles for sm_90, per kernel and configuration: the gate's compile stage on the CPU, which
compiles the declared configuration and the autotuner's others with the largest estimates first.

    python bench/shared_memory.py [FILE.argus ...] [--configs N] [--timeout S]

Without files: every example (examples/*.argus), expert and candidate (skills/experts), held-out kernel
(skills/heldout) and the calibration kernels of bench/variants/shared_memory_calibration.argus. Prints a Markdown
table (docs/codegen.md holds one); a few seconds a compile on the CPU.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from argus.gate import run_gate_all

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = [
    *sorted((ROOT / "examples").glob("*.argus")),
    *sorted((ROOT / "skills" / "experts").glob("*.argus")),
    *sorted((ROOT / "skills" / "experts" / "candidates").glob("*.argus")),
    *sorted((ROOT / "skills" / "heldout").glob("*.argus")),
    ROOT / "bench" / "variants" / "shared_memory_calibration.argus",
]


def number(n: int | None) -> str:
    return "-" if n is None else f"{n:,}"


def difference(estimate: int | None, compiled: int | None) -> str:
    if estimate is None or compiled is None:
        return "-"
    return "0" if estimate == compiled else f"{estimate - compiled:+,}"


def rows(path: Path, result) -> list[str]:
    facts = result.compile.facts
    name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    if facts is None:
        return [f"| {name} | {result.kernel} | - | - | - | - | {result.compile.message} |"]
    if facts.launches:  # a model: each launch compiled in its kernel's declared configuration, no estimate here
        return [
            f"| {name} | {result.kernel}: {launch.kernel} (line {launch.line}) | declared | - | "
            f"{number(launch.shared_memory_bytes)} | - | {launch.registers} regs, "
            f"{(launch.spill_stores_bytes or 0) + (launch.spill_loads_bytes or 0)} B spilled |"
            for launch in facts.launches
        ]
    found = []
    spills = (facts.spill_stores_bytes or 0) + (facts.spill_loads_bytes or 0)
    estimate, compiled = facts.estimated_shared_memory_bytes, facts.shared_memory_bytes
    found.append(
        f"| {name} | {result.kernel} | declared | {number(estimate)} | {number(compiled)} | "
        f"{difference(estimate, compiled)} | {facts.registers} regs, {spills} B spilled |"
    )
    for config in facts.configs:
        values = ", ".join(f"{k}={v}" for k, v in config.config.items())
        spills = (config.spill_stores_bytes or 0) + (config.spill_loads_bytes or 0)
        notes = config.message if config.shared_memory_bytes is None else f"{config.registers} regs, {spills} B spilled"
        found.append(
            f"| | | {values} | {number(config.estimated_shared_memory_bytes)} | {number(config.shared_memory_bytes)} | "
            f"{difference(config.estimated_shared_memory_bytes, config.shared_memory_bytes)} | {notes} |"
        )
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", type=Path, help="Argus files (default: the examples, experts, ...)")
    parser.add_argument("--configs", type=int, default=4, help="configurations compiled per kernel (default 4)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per kernel")
    args = parser.parse_args(argv)
    import triton

    print(f"Triton {triton.__version__}, sm_90, without a GPU; bytes of shared memory a program\n")
    print("| file | kernel | configuration | estimate | compiled | estimate − compiled | registers, spills |")
    print("| --- | --- | --- | ---: | ---: | ---: | --- |")
    failed = 0
    for path in args.files or DEFAULT:
        text = path.read_text(encoding="utf-8")
        results = run_gate_all(
            text, path=str(path), device="cpu", stages=("compile",), timeout_s=args.timeout,
            compile_configs=args.configs,
        )  # fmt: skip
        for result in results:
            print("\n".join(rows(path, result)), flush=True)
            failed += result.compile.status.value != "passed"
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
