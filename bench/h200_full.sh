#!/usr/bin/env bash
# Issue 18's one run on the device: every expert and candidate against its peers (bench/h200.py run), then one
# launch of each kernel whose target is missed under ncu, at its fastest configuration of this run, so that each
# gap is explained from the same call. Needs torch and triton only (the bundles carry the kernels).
#
#   here:        PYTHONPATH=server .venv/bin/python bench/h200.py bundle --out build/h200_experts
#   the device:  bash bench/h200_full.sh build/h200_experts "$OUT"     (carry ["build/h200_experts"])
#
# Writes OUT/h200_experts.json (the table's data), OUT/run.log, and OUT/ncu_NAME.txt per profiled kernel.
# NCU_KERNELS (space separated) picks the profiled kernels; NCU_SECONDS bounds each profile.
set -u
bundles=${1:?bundle folder}
out=${2:?output folder}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$out/run.log"
python3 bench/h200.py run "$bundles" --out "$out" --trials "${TRIALS:-50}" 2>&1 | tee -a "$out/run.log"
command -v ncu >/dev/null || { echo "ncu not found: no profiles" | tee -a "$out/run.log"; exit 0; }
for name in ${NCU_KERNELS:-gemm gemm_plain_persistent attention attention_causal attention64 grouped_gemm}; do
    size=large
    [ "$name" = attention64 ] && size=bench
    timeout "${NCU_SECONDS:-60}" ncu --clock-control none -k "regex:^${name}_kernel" --launch-skip 1 \
        --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section Occupancy \
        --section LaunchStats --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
        python3 bench/h200.py one "$bundles" "$name" --size "$size" --result "$out/h200_experts.json" \
        >"$out/ncu_${name}.txt" 2>&1
    echo "ncu $name: exit $?" | tee -a "$out/run.log"
done
