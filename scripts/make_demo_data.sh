#!/usr/bin/env bash
# Remake the bundled experiments in data/ (all of them: about 1 h 40 min on a 2-core box).
#
#   scripts/make_demo_data.sh              # every experiment below
#   scripts/make_demo_data.sh demo-aa      # just one (any name below)
#   scripts/make_demo_data.sh seeds        # the five seeds-* experiments (~35 min)
#   scripts/make_demo_data.sh demos        # the seven demos below (~20 min)
#
# Each sweep runs on the local nginx testbed (loopback only; port 8090 for the original demos,
# 8200 for demo-history, demo-wrk2-* and seeds-*) and is resumable: interrupted, run the same
# command again. To start an experiment afresh, delete its plan.json, runs/ and .perfkit/ (keep
# experiment.yaml; for demo-history delete its jobs/*/{plan.json,runs,.perfkit}). Run it on a
# quiet machine: every other process competes with nginx and the load generator for the same
# cores. seeds-backlog, demo-wrk-factorial and demo-backlog need root (network namespaces:
# profiles netns and isolated); wrk2 must be on PATH for demo-wrk2-*, seeds-backlog and
# seeds-keepalive.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
DEMOS=(demo-wrk-factorial demo-wrk-connections demo-locust demo-aa demo-wrk2-sweep
       demo-wrk2-uncorrected demo-backlog)
SEEDS=(seeds-backlog seeds-keepalive seeds-cache seeds-buffered-log seeds-worker-connections)
ALL=("${DEMOS[@]}" demo-history demo-wrk2-aa demo-wrk2-rates "${SEEDS[@]}")
WANT=()
for arg in "${@:-all}"; do
    case "$arg" in
    all) WANT+=("${ALL[@]}") ;;
    demos) WANT+=("${DEMOS[@]}") ;;
    seeds) WANT+=("${SEEDS[@]}") ;;
    *) WANT+=("$arg") ;;
    esac
done

busy=$(ps -eo pcpu=,args= | awk '$1 > 20 {print}' | grep -v -e make_demo_data -e "ps -eo" || true)
if [ -n "$busy" ]; then
    echo "make_demo_data: warning: other busy processes (they will add noise):" >&2
    echo "$busy" >&2
fi

for name in "${WANT[@]}"; do
    case "$name" in
    demo-wrk2-sweep)
        # the real wrk2 sweep of the shared fixtures, imported byte for byte (no wrk2 here)
        rm -rf "data/$name"
        "$PY" scripts/import_wrk2_sweep.py --out "data/$name"
        ;;
    demo-wrk2-uncorrected)
        # the real wrk2 -U run of the shared fixtures, imported byte for byte
        rm -rf "data/$name"
        "$PY" scripts/import_wrk2_sweep.py --source tests/fixtures/wrk2/single \
            --single uncorrected_U_default_R20000_c50 --out "data/$name"
        ;;
    demo-history)
        # 16 CI jobs (v01..v16), one small sweep each, in time order; writes labels.csv
        echo "== $name: $(date -u +%FT%TZ)"
        "$PY" scripts/make_history_data.py --out "data/$name"
        ;;
    *)
        echo "== $name: $(date -u +%FT%TZ)"
        "$PY" -m perfkit sweep "data/$name/experiment.yaml"
        rm -f "data/$name/.perfkit/lock" "data/$name/.perfkit/procs.json"
        ;;
    esac
done
du -sh data/*/ data
