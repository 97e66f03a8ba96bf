"""The `argus` command line."""

from __future__ import annotations

import sys
from pathlib import Path


def read_source(command: str, path: str | Path) -> str | None:
    """The text of an .argus file; None, with `argus COMMAND: cannot read ...` on stderr, when it cannot be read
    (the caller exits 2: a usage error)."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as problem:
        print(f"argus {command}: cannot read {path}: {problem}", file=sys.stderr)
        return None
