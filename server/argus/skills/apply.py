"""Applying a library skill to a file: match first (on the file as it is now), refuse with the failed
precondition named, verify the result, and write it in one atomic replace, so a file is never half-applied."""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from argus.skills.cards import Card
from argus.skills.document import Document
from argus.skills.facts import verify_errors
from argus.skills.matcher import match


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Outcome:
    card: str
    text_before: str
    text_after: str | None  # None: refused
    refused: str | None = None  # "<precondition>: <what was found>"
    rematched: bool = False  # the file changed since the match the caller saw
    title: str = ""


def plan(text: str, card: Card, line: int, *, since: str | None = None, verify: bool = True) -> Outcome:
    """The text after applying `card` at `line` (0-based), or the reason it is refused."""
    rematched = since is not None and since != digest(text)
    doc = Document.parse(text)
    matches = match(doc, line, [card])
    if not matches:
        return Outcome(card.id, text, None, f"no_site: `{card.id}` has no site at line {line + 1}", rematched)
    usable = next((m for m in matches if m.applicable), None)
    if usable is None:
        failed = matches[0].failed
        reason = f"{failed.name}: {failed.found or 'does not hold'}" if failed else "no edit at this place"
        return Outcome(card.id, text, None, reason, rematched, matches[0].application.title)
    after = usable.application.result(text)
    if verify:
        kernel = usable.application.kernel
        before_doc, after_doc = doc, Document.parse(after)
        old = verify_errors(before_doc.check, next(k for k in before_doc.kernels() if k.name == kernel))
        node = next((k for k in after_doc.kernels() if k.name == kernel), None)
        new = verify_errors(after_doc.check, node) if node is not None else old + 1
        if new > old:
            reason = f"verifies: the rewritten kernel has {new} verifier errors, {old} before"
            return Outcome(card.id, text, None, reason, rematched, usable.application.title)
    return Outcome(card.id, text, after, None, rematched, usable.application.title)


def write_atomically(path: Path, text: str) -> None:
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
