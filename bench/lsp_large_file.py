"""A 10 MB file in `argus serve`: how soon its one AR010 arrives, how soon a normal file opened beside it gets its
diagnostics, and the server's memory. Prints one line.

    .venv/bin/python bench/lsp_large_file.py [--copies 420]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

from lsprotocol import types

from lsp_latency import Session, many_kernels_file, rss_mib


async def main(copies: int) -> int:
    session = Session([sys.executable, "-m", "argus", "serve"])
    await session.start()
    text = many_kernels_file() * copies
    big, small = "file:///tmp/lsp_large_file_big.argus", "file:///tmp/lsp_large_file_small.argus"
    try:
        started = time.perf_counter()
        item = types.TextDocumentItem(uri=big, language_id="argus", version=1, text=text)
        session.client.text_document_did_open(types.DidOpenTextDocumentParams(item))
        big_s = await session.publication(big, 1, 1, timeout=120) - started
        started = time.perf_counter()
        item = types.TextDocumentItem(uri=small, language_id="argus", version=1, text=many_kernels_file())
        session.client.text_document_did_open(types.DidOpenTextDocumentParams(item))
        small_s = await session.publication(small, 1, 1, timeout=120) - started
        print(
            f"{len(text) / 1e6:.1f} M characters: its first publication after {big_s:.2f} s; a 1,000-line file "
            f"opened beside it got its diagnostics {small_s:.2f} s later; server RSS {rss_mib(session.pid):.0f} MiB"
        )
    finally:
        await session.stop()
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=420, help="copies of the 1,000-line file (420: about 10 MB)")
    raise SystemExit(asyncio.run(main(parser.parse_args().copies)))
