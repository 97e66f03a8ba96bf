#!/bin/bash
# The held-out check on a GPU machine: every naive kernel of SET refined by each of RUNS at budget B (gate runs
# after the start's), JOBS refinements at a time, their gate runs through the gate's executor (a local dask
# cluster by default: a worker per GPU, RUNS_PER_GPU gate runs on each card at once, their GPU stages taking
# turns on its lock; CLUSTER=tcp://HOST:8786 for a scheduler's workers, CLUSTER=serial for runners side by side
# with --gpu-lock, as this script did before), the ceilings measured once, and one store of gate results shared
# by every run (DIR/gate-cache: a text gated by one run is read back by the others, still one gate run of their
# budgets). A thin wrapper: it makes argus importable and runs `python bench/heldout.py run` (the fan-out, its
# progress bar and the resuming are there). Writes $OUT/NAME.tgz (NAME: the basename of DIR; the device tool
# returns at most 8 files): per run the JSON summary, the trajectory (JSON lines), the best source and the log,
# with the gate cache and the ceilings.
#
# Run names: search (the search planner on skills/library), oldsearch (the search planner on the cards as they
# were before issue 15, bench/cards/before-issue15), randomN (the random planner, seed N, on skills/library).
# Needs argus importable: PYTHONPATH=server plus lark, z3-solver, pydantic, pyyaml and (for a cluster)
# dask.distributed; when a .whl folder is here (bench/device_wheels.sh fills it; name it in the device call's
# carry) and they are missing, its wheels are installed into /tmp/site first. A call cut short by LEFT can be
# resumed: finished runs (a summary that parses) are kept, the others start again, and the gate cache replays
# what they had gated (RESUME=a .tgz of an earlier call seeds DIR when DIR does not exist, for a fresh machine).
#
#   SET="skills/heldout2 skills/heldout" LEFT=540 bash bench/heldout_device.sh   # then here:
#   python bench/heldout.py figures DIR
#   DEVICE=cpu B=2 JOBS=2 KERNELS="rmsnorm" RUNS="search random0" bash bench/heldout_device.sh   # a CPU try
set -u
START=$(date +%s); END=$(( START + ${LEFT:-540} ))
SET=${SET:-skills/heldout}; B=${B:-8}; JOBS=${JOBS:-16}; DEVICE=${DEVICE:-cuda}; CLUSTER=${CLUSTER:-local}
if [ -z "${RUNS:-}" ] && [ -n "${SEARCH:-}${SEEDS:-}" ]; then  # the older spelling: SEARCH=0|1, SEEDS="0 1"
  RUNS=$([ "${SEARCH:-1}" = 1 ] && echo search); for s in ${SEEDS:-0}; do RUNS="$RUNS random$s"; done
fi
RUNS=${RUNS:-search oldsearch random0 random1 random2}
# as many gate runs on the card at once as refinements, as when JOBS runners shared it through one lock
RUNS_PER_GPU=${RUNS_PER_GPU:-$JOBS}
OLD_CARDS=${OLD_CARDS:-bench/cards/before-issue15}
PY=${PYTHON:-python3}
dir=${DIR:-/tmp/heldout}; OUT=${OUT:-$(dirname "$dir")}

needs='import lark, z3, pydantic, yaml'
[ "$CLUSTER" = serial ] || needs="$needs, distributed"
if ! "$PY" -c "$needs" 2>/dev/null; then
  if [ -d .whl ]; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
      || { echo "the wheels of .whl did not install"; exit 1; }
    export PYTHONPATH=/tmp/site:server
  else
    echo "argus needs lark, z3-solver, pydantic, pyyaml and dask.distributed: carry .whl (bench/device_wheels.sh)"
    exit 1
  fi
else
  export PYTHONPATH=server${PYTHONPATH:+:$PYTHONPATH}
fi
"$PY" -c 'import argus.cli.refine' || exit 1
echo "argus importable after $(( $(date +%s) - START )) s"

sets=(); for s in $SET; do sets+=(--set "$s"); done
extra=(); [ -n "${KERNELS:-}" ] && extra+=(--kernels "$KERNELS"); [ -n "${WORKERS:-}" ] && extra+=(--workers "$WORKERS")
[ -n "${RESUME:-}" ] && extra+=(--resume "$RESUME")
exec "$PY" bench/heldout.py run "${sets[@]}" --dir "$dir" --runs "$RUNS" --budget "$B" --jobs "$JOBS" \
  --device "$DEVICE" --cluster "$CLUSTER" --runs-per-gpu "$RUNS_PER_GPU" --old-cards "$OLD_CARDS" \
  --left $(( END - $(date +%s) )) --min-left "${MIN_LEFT:-30}" --timeout "${TIMEOUT:-200}" --out "$OUT" "${extra[@]}"
