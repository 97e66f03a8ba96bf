#!/bin/bash
# The wheels that carry argus to the GPU machine (its python3 is 3.12 with torch, triton and numpy, but none of
# what argus itself needs): every package `python3 -m argus refine --device cuda` imports beyond those, at the
# versions of this checkout's .venv, for CPython 3.12 on x86-64 Linux, into .whl/ (git ignores it through
# .git/info/exclude). Name .whl in the device call's carry; bench/heldout_device.sh installs them when it
# finds them missing (pip install --no-index --no-deps --target /tmp/site .whl/*.whl). With dask.distributed's
# (the gate's executor, docs/gate.md: `argus lineage --cluster`), 26 wheels, about 21 MiB (z3-solver slimmed below).
#
#   bash bench/device_wheels.sh && du -sh .whl
set -eu
cd "$(dirname "$0")/.."
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo /.whl/ >> .git/info/exclude
PACKAGES=${PACKAGES:-lark z3-solver pydantic pydantic-core annotated-types typing-extensions typing-inspection pyyaml
  distributed dask click cloudpickle fsspec jinja2 markupsafe locket msgpack packaging partd psutil sortedcontainers
  tblib toolz tornado zict lazy-importer}
PY=${PYTHON:-.venv/bin/python}
frozen=$("$PY" -m pip freeze)
mkdir -p .whl
for name in $PACKAGES; do
  # pip freeze spells names as published (pydantic_core, PyYAML): compare them normalised (PEP 503)
  pin=$(echo "$frozen" | awk -F== -v want="$name" '
    { n = tolower($1); gsub(/[-_.]+/, "-", n); w = tolower(want); gsub(/[-_.]+/, "-", w); if (n == w) print $2 }')
  [ -n "$pin" ] || { echo "$name is not installed in $PY's environment"; exit 1; }
  "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d .whl "$name==$pin"
done
# z3-solver's wheel holds libz3 twice (libz3.so and libz3.so.5.4, both loaded by name) and the z3 command-line
# binary: 38 MiB of the 45, and the device takes 64 MiB with the working tree. Keep one library, drop the binary
# (argus uses z3's Python API only) and rewrite RECORD to match.
"$PY" - .whl/z3_solver-*.whl <<'SLIM'
import sys, zipfile
path = sys.argv[1]
with zipfile.ZipFile(path) as wheel:
    libs = sorted(n for n in wheel.namelist() if n.startswith("z3/lib/libz3.so"))
    drop = {n for n in wheel.namelist() if "/data/bin/" in n} | set(libs[:-1] if len(libs) > 1 else [])
    kept = [(info, wheel.read(info)) for info in wheel.infolist() if info.filename not in drop]
with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as wheel:
    for info, data in kept:
        if info.filename.endswith(".dist-info/RECORD"):
            data = b"".join(line + b"\n" for line in data.splitlines() if line.split(b",")[0].decode() not in drop)
        wheel.writestr(info, data)
print(f"{path}: dropped {', '.join(sorted(drop)) or 'nothing'}")
SLIM
ls .whl
