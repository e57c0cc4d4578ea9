#!/usr/bin/env bash
# Remake the bundled demo experiments in data/ (about 15-20 minutes on a 2-core box).
#
#   scripts/make_demo_data.sh            # all six
#   scripts/make_demo_data.sh demo-aa    # just one
#
# Each sweep runs on the local nginx testbed (loopback only, port 8090) and is resumable:
# interrupted, run the same command again. To start an experiment afresh, delete its
# plan.json, runs/ and .perfkit/ (keep experiment.yaml). Run it on a quiet machine: every other
# process competes with nginx and the load generator for the same cores.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
ALL=(demo-wrk-factorial demo-wrk-connections demo-locust demo-aa demo-wrk2-sweep
     demo-wrk2-uncorrected)
WANT=("${@:-${ALL[@]}}")

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
    *)
        echo "== $name: $(date -u +%FT%TZ)"
        "$PY" -m perfkit sweep "data/$name/experiment.yaml"
        rm -f "data/$name/.perfkit/lock" "data/$name/.perfkit/procs.json"
        ;;
    esac
done
du -sh data/*/ data
