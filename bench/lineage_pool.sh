#!/bin/bash
# Lineage bundles (argus lineage ... --device bundle -o build/lineage/ID) profiled on a GPU machine through ONE
# pool: every text of every named lineage, JOBS gate runs at a time, taking turns on the GPU through one lock,
# the ceilings measured once by the first expert. bench/lineage_device.sh runs one lineage after another, so
# with many small lineages most of its time is one lineage's last text; here compiles of all lineages overlap.
# The experts are gated first (each lineage's slowdowns are against them); references are timed eager only
# (no torch.compile peer: the cards need kernel times). Writes $OUT/lineage.tgz (the device tool returns at most
# 8 files). Here afterwards: tar xzf lineage.tgz; argus lineage --read build/lineage/ID for each ID.
#
#   LINEAGES="fp32_gemm.gemm_exact rows_wide.cross_entropy" JOBS=16 LEFT=540 bash bench/lineage_pool.sh
set -u
END=$(( $(date +%s) + ${LEFT:-540} ))
root=$PWD/build/lineage
export ROOT=$root END
gate() {  # "ID NAME": one text of one lineage
  set -- $1
  local kernel left
  kernel=$(grep -o -- '--kernel [^ ]*' "$ROOT/$1/run.sh" | head -1 | cut -d' ' -f2)
  left=$(( END - $(date +%s) )); [ $left -le 10 ] && { echo "no time left: $1 $2"; return; }
  (cd "$ROOT/$1" && timeout $left python3 "$2/run.py" --device cuda --kernel "$kernel" --stage compile \
    --stage correct --stage profile --ceilings-file "$ROOT/ceilings.json" --gpu-lock "$ROOT/gpu.lock" \
    --out "$2.result.json" --references eager > "$2.log" 2>&1) || echo "gate failed: $1 $2"
}
export -f gate
texts() {  # the experts first, then every candidate
  for id in ${LINEAGES:?name the lineage folders under build/lineage}; do echo "$id base"; done
  for id in $LINEAGES; do
    for dir in "$root/$id"/s*/; do echo "$id $(basename "$dir")"; done
  done
}
t0=$(date +%s)
first=$(texts | head -1)
gate "$first"  # alone: it measures the ceilings the others read
texts | tail -n +2 | xargs -r -P "${JOBS:-16}" -I TEXT bash -c 'gate "TEXT"'
for id in $LINEAGES; do
  echo "$id: $(ls "$root/$id"/*.result.json 2>/dev/null | wc -l) results of $(( $(ls -d "$root/$id"/s*/ | wc -l) + 1 ))"
done
echo "pool: $(( $(date +%s) - t0 )) s"
cd "$PWD" && tar czf "$OUT/lineage.tgz" build/lineage/*/*.result.json build/lineage/*/*.log
