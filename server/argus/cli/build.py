"""`argus build FILE [-o OUT.py] [--problem NAME]`: the Triton module generated from an Argus file (or the
problem module of one kernel or model: its sizes, inputs and PyTorch reference)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from argus.cli import read_source, write_output


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "build",
        help="generate the Triton module of an Argus file",
        description=(
            "Generate Triton from an Argus file: one @triton.jit kernel per Argus kernel, a launcher that checks "
            "its arguments, a function per model that runs its launches, KERNELS, MODELS and SOURCE_MAP. Exit "
            "status: 0 on success, 1 if the file does not check or cannot be generated, 2 on usage errors."
        ),
    )
    parser.add_argument("path", metavar="FILE", help="the .argus file")
    parser.add_argument(
        "-o", "--output", metavar="OUT.py", help="write here instead of standard output (its folders are made)"
    )
    parser.add_argument(
        "--problem",
        metavar="NAME",
        nargs="?",
        const="",
        help="write the problem module (SIZES, make_inputs, reference, OUTPUTS) of the kernel or model NAME "
        "instead (of the only one the file gates when no name is given)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    path = Path(args.path)
    text = read_source("build", path)  # before the imports: a wrong path is said at once
    if text is None:
        return 2
    from argus.codegen import CodegenError, generate, generate_problem
    from argus.dsl.check import check_source

    check = check_source(text)
    errors = [d for d in check.diagnostics if d.severity.value == "error"]
    if errors:
        for diagnostic in errors:
            print(diagnostic.text_line(str(path)), file=sys.stderr)
        print(f"argus build: {path} has {len(errors)} error(s); nothing generated", file=sys.stderr)
        return 1
    try:
        if args.problem is None:
            output = generate(check, str(path)).source
        else:
            kernel = args.problem or only_kernel(check)
            if kernel is None:
                names = ", ".join(check.analysis.gated)
                print(f"argus build: --problem needs a kernel or model name ({names})", file=sys.stderr)
                return 2
            output = generate_problem(check, kernel)
    except CodegenError as failure:
        print(f"argus build: {path}: {failure}", file=sys.stderr)
        return 1
    if args.output:
        if not write_output("build", args.output, output):
            return 2
    else:
        sys.stdout.write(output)
    return 0


def only_kernel(check) -> str | None:
    """The one kernel or model the file gates on its own, if there is only one."""
    names = list(check.analysis.gated)
    return names[0] if len(names) == 1 else None
