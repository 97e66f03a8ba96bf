#!/bin/bash
# The held-out check on a GPU machine: every naive kernel of SET refined by each of RUNS at budget B (gate runs
# after the start's), JOBS refinements at a time (compiles in parallel, GPU stages taking turns through one
# lock), the ceilings measured once, and one store of gate results shared by every run (DIR/gate-cache: a text
# gated by one run is read back by the others, still one gate run of their budgets). Writes $OUT/NAME.tgz
# (NAME: the basename of DIR; the device tool returns at most 8 files): per run the JSON summary, the
# trajectory (JSON lines), the best source and the log, with the gate cache and the ceilings.
#
# Run names: search (the search planner on skills/library), oldsearch (the search planner on the cards as they
# were before issue 15, bench/cards/before-issue15), randomN (the random planner, seed N, on skills/library).
# Needs argus importable: PYTHONPATH=server plus lark, z3-solver and pydantic; when a .whl folder is here
# (bench/device_wheels.sh fills it; name it in the device call's carry) and they are missing, its wheels are
# installed into /tmp/site first. A call cut short by LEFT can be resumed: finished runs (a summary that
# parses) are kept, the others start again, and the gate cache replays what they had gated (RESUME=a .tgz of
# an earlier call seeds DIR when DIR does not exist, for a fresh machine).
#
#   SET="skills/heldout2 skills/heldout" LEFT=540 bash bench/heldout_device.sh   # then here:
#   python bench/heldout.py figures DIR
#   DEVICE=cpu B=2 JOBS=2 KERNELS="rmsnorm" RUNS="search random0" bash bench/heldout_device.sh   # a CPU try
set -u
START=$(date +%s); END=$(( START + ${LEFT:-540} ))
SET=${SET:-skills/heldout}; B=${B:-8}; JOBS=${JOBS:-16}; DEVICE=${DEVICE:-cuda}
if [ -z "${RUNS:-}" ] && [ -n "${SEARCH:-}${SEEDS:-}" ]; then  # the older spelling: SEARCH=0|1, SEEDS="0 1"
  RUNS=$([ "${SEARCH:-1}" = 1 ] && echo search); for s in ${SEEDS:-0}; do RUNS="$RUNS random$s"; done
fi
RUNS=${RUNS:-search oldsearch random0 random1 random2}
OLD_CARDS=${OLD_CARDS:-bench/cards/before-issue15}
PY=${PYTHON:-python3}
dir=${DIR:-/tmp/heldout}; OUT=${OUT:-$(dirname "$dir")}
if [ ! -d "$dir" ] && [ -f "${RESUME:-}" ]; then
  mkdir -p "$dir" && tar xzf "$RESUME" -C "$dir" --strip-components=1 && echo "resumed from $RESUME"
fi
mkdir -p "$dir/gate-cache"

if ! "$PY" -c 'import lark, z3, pydantic, yaml' 2>/dev/null; then
  if [ -d .whl ]; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
      || { echo "the wheels of .whl did not install"; exit 1; }
    export PYTHONPATH=/tmp/site:server
  else
    echo "argus needs lark, z3-solver, pydantic and pyyaml: carry .whl (bench/device_wheels.sh)"; exit 1
  fi
else
  export PYTHONPATH=server${PYTHONPATH:+:$PYTHONPATH}
fi
"$PY" -c 'import argus.cli.refine' || exit 1
echo "argus importable after $(( $(date +%s) - START )) s"

# the runs, kernel by kernel (runs of one kernel side by side share the most gate results): "path name" lines
list=$dir/runs.todo; : > "$list"
for set in $SET; do
  if [ -n "${KERNELS:-}" ]; then
    for k in $KERNELS; do [ -f "$set/$k.argus" ] && echo "$set/$k.argus"; done
  else
    ls "$set"/*.argus
  fi
done | while read -r path; do
  for name in $RUNS; do echo "$path $name"; done
done > "$list"
[ -s "$list" ] || { echo "no kernels in SET=$SET (KERNELS=${KERNELS:-all})"; exit 1; }

finished() {  # a summary that parses: the run ended and printed it
  "$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(0 if "gate_runs" in d else 1)' "$1" 2>/dev/null
}

ceilings_wait() {  # the first run measures the GPU's ceilings; the others start once the file is there
  [ "$DEVICE" = cuda ] || return 0
  for _ in $(seq 90); do
    "$PY" -c 'import json, sys; json.load(open(sys.argv[1]))' "$dir/ceilings.json" 2>/dev/null && return 0
    [ -f "$dir/first.done" ] && return 0  # it ended without them: each run measures its own
    sleep 2
  done
}

run_one() {  # path name
  local path=$1 name=$2 k planner left rc
  k=$(basename "$path" .argus)
  local base=$dir/$k.$name
  if finished "$base.json"; then echo "$k $name: finished earlier"; return 0; fi
  left=$(( END - $(date +%s) ))
  if [ $left -le ${MIN_LEFT:-30} ]; then echo "$k $name: no time left"; return 0; fi
  case $name in
    search) planner=(--planner search) ;;
    oldsearch) planner=(--planner search --library "$OLD_CARDS") ;;
    random*) planner=(--planner random --seed "${name#random}") ;;
    *) echo "$k $name: no such run (search, oldsearch, randomN)"; return 0 ;;
  esac
  rm -f "$base.json" "$base.jsonl" "$base.best.argus" "$base.log"  # a run cut short starts again
  local t0; t0=$(date +%s)
  timeout -k 15 $left "$PY" -m argus refine "$path" "${planner[@]}" --budget "$B" --device "$DEVICE" \
    --no-memory --json --gpu-lock "$dir/gpu.lock" --ceilings-file "$dir/ceilings.json" \
    --gate-cache "$dir/gate-cache" --log "$base.jsonl" -o "$base.best.argus" --timeout 200 \
    > "$base.json" 2> "$base.log"
  rc=$?
  echo "$k $name rc=$rc $(( $(date +%s) - t0 )) s" | tee -a "$dir/runs.txt"
}

run_listed() {  # path name: a line of the list
  if [ "$1 $2" = "$FIRST" ]; then
    run_one "$1" "$2"; touch "$dir/first.done"
  else
    ceilings_wait; run_one "$1" "$2"
  fi
}
FIRST=$(head -n 1 "$list"); rm -f "$dir/first.done"
export -f run_listed run_one finished ceilings_wait
export dir END B DEVICE OLD_CARDS PY FIRST MIN_LEFT=${MIN_LEFT:-30}
xargs -P "$JOBS" -L 1 bash -c 'run_listed "$@"' _ < "$list"
echo "$(grep -c . "$list") runs, $(ls "$dir"/gate-cache/*.json 2>/dev/null | wc -l) gate results kept," \
  "$(( $(date +%s) - START )) s"
tar czf "$OUT/$(basename "$dir").tgz" -C "$(dirname "$dir")" --exclude='*.lock' "$(basename "$dir")"
