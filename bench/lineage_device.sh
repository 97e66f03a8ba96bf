#!/bin/bash
# Lineage bundles (argus lineage ... --device bundle -o build/lineage/ID) profiled on a GPU machine, one after
# another, each bundle's candidates JOBS at a time (taking turns on the GPU). Writes $OUT/lineage.tgz: the
# device tool returns at most 8 files. Here afterwards: tar xzf lineage.tgz; argus lineage --read build/lineage/ID.
#
#   LINEAGES="gemm.gemm attention.attention" JOBS=10 LEFT=540 bash bench/lineage_device.sh
set -u
END=$(( $(date +%s) + ${LEFT:-540} ))
for id in ${LINEAGES:?name the lineage folders under build/lineage}; do
  left=$(( END - $(date +%s) )); [ $left -le 20 ] && { echo "no time left for $id"; break; }
  [ -f build/lineage/ceilings.json ] && cp build/lineage/ceilings.json build/lineage/$id/ceilings.json
  t0=$(date +%s)
  JOBS=${JOBS:-10} timeout $left sh build/lineage/$id/run.sh > build/lineage/$id/log.txt 2>&1
  echo "$id: $(( $(date +%s) - t0 )) s, $(ls build/lineage/$id/*.result.json 2>/dev/null | wc -l) results"
  [ -f build/lineage/ceilings.json ] || cp build/lineage/$id/ceilings.json build/lineage/ 2>/dev/null
done
tar czf "$OUT/lineage.tgz" build/lineage/*/*.result.json build/lineage/*/log.txt
