#!/bin/bash
# Lineage bundles (argus lineage ... --device bundle -o build/lineage/ID) profiled on a GPU machine: a thin wrapper
# over bench/lineage_device.py, which gates them all through the gate's executor (a local dask cluster: a worker
# per GPU, JOBS gate runs on each card at once, their GPU stages taking turns on its lock; CLUSTER=tcp://HOST:8786
# for a scheduler's workers), the experts first, one progress bar over the whole fan-out. Resumable: a result
# already there is kept. Writes $OUT/lineage.tgz: the device tool returns at most 8 files. Here afterwards:
# tar xzf lineage.tgz; argus lineage --read build/lineage/ID.
#
#   LINEAGES="gemm.gemm attention.attention" JOBS=10 LEFT=540 bash bench/lineage_device.sh
set -u
START=$(date +%s)
PY=${PYTHON:-python3}
export PYTHONPATH=server${PYTHONPATH:+:$PYTHONPATH}
if ! "$PY" -c 'import lark, z3, pydantic, yaml, distributed' 2>/dev/null && [ -d .whl ]; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    || { echo "the wheels of .whl did not install"; exit 1; }
  export PYTHONPATH=/tmp/site:$PYTHONPATH
fi
folders=(); for id in ${LINEAGES:?name the lineage folders under build/lineage}; do folders+=("build/lineage/$id"); done
exec "$PY" bench/lineage_device.py "${folders[@]}" --cluster "${CLUSTER:-local}" --runs-per-gpu "${JOBS:-10}" \
  --left $(( ${LEFT:-540} - ($(date +%s) - START) )) --out "${OUT:-.}" --device "${DEVICE:-cuda}"
