#!/bin/bash
# The held-out check on a GPU machine: every naive kernel of skills/heldout refined by the deterministic skill
# search and by the random baseline (same gate budget), all side by side on one GPU, taking turns on it through
# one lock, with the ceilings measured once. Needs argus importable (PYTHONPATH=server plus lark, z3-solver and
# pydantic, carried as wheels to the device: docs/perf.md says how). Writes $OUT/NAME.tgz (NAME: the basename
# of DIR; the device tool returns at most 8 files): per run the JSON summary, the trajectory (JSON lines), the
# best source and the log. SEARCH=0 runs the random seeds only (the random planner ignores measured effects).
#
#   B=4 SEEDS="0" LEFT=380 bash bench/heldout_device.sh      # then here: python bench/heldout.py table DIR
set -u
B=${B:-4}; SEEDS=${SEEDS:-0}; END=$(( $(date +%s) + ${LEFT:-380} ))
KERNELS=${KERNELS:-batched_gemm gemm_bias_gelu rmsnorm logsoftmax causal_attention stencil2d}
dir=${DIR:-/tmp/heldout}; mkdir -p $dir; lock=$dir/gpu.lock; ceil=$dir/ceilings.json
run() {  # kernel name
  k=$1; name=$2; planner=(--planner search)
  [ "$name" != search ] && planner=(--planner random --seed ${name#random})
  timeout $(( END - $(date +%s) )) python3 -m argus refine skills/heldout/$k.argus "${planner[@]}" --budget $B \
    --device cuda --no-memory --json --gpu-lock $lock --ceilings-file $ceil --log $dir/$k.$name.jsonl \
    -o $dir/$k.$name.best.argus --timeout 200 > $dir/$k.$name.json 2> $dir/$k.$name.log
  echo "$k $name rc=$?"
}
names=(); [ "${SEARCH:-1}" = 1 ] && names+=(search)
for s in $SEEDS; do names+=(random$s); done
first=1
for k in $KERNELS; do
  for name in "${names[@]}"; do
    run $k $name &
    if [ $first = 1 ]; then  # the first run measures the ceilings; the others wait for the shared file
      for _ in $(seq 60); do [ -f $ceil ] && break; sleep 2; done; first=0
    fi
  done
done
wait
tar czf "$OUT/$(basename $dir).tgz" -C $(dirname $dir) $(basename $dir)
