#!/usr/bin/env bash
# Play the CI job of docs/ci.md locally, on the testbed: three "commits", each measured by the
# job's steps exactly as the GitHub Actions workflow runs them:
#
#   start the service under test -> sweep -> stop it -> gate against the stored baseline
#   (markdown summary + JUnit XML) -> append to the history
#
# and at the end the HTML report of the history. The commits are testbed profiles (nginx on
# 127.0.0.1 in front of the testbed's upstream app): c1 and c2 run the same server (proxy,
# upstream answering after 10 ms: c2 against c1 is an A/A pair), c3 makes the upstream answer
# after 20 ms (proxy+slow-upstream): a real regression.
#
# usage: scripts/ci_recipe.sh [WORK_DIR]        (default: a new /tmp/perfkit-ci-XXXXXX)
# environment:
#   PORT            nginx port on 127.0.0.1 (default 8300); PORT+1000 is the upstream's
#   PERFKIT         the perfkit command (default: perfkit), e.g. ".venv/bin/python -m perfkit"
#   DURATION        length of each run (default 2s)
#   REPETITIONS     runs per job (default 4)
#   MAX_REGRESSION  the gate's threshold (default 10%)
#
# WORK_DIR ends up holding what a CI run leaves behind: perf.yaml (the job's design),
# runs/<commit>/ (the sweeps), history/ (the history store), summary.md (the job summaries),
# gate-<commit>.xml (JUnit), gates.txt (commit, profile, gate exit status), report/ (HTML).
# The testbed is started and stopped by the script; its state lives in a temporary folder
# removed at exit. Takes about 1.5 minutes on a quiet 2-core machine (each perfkit command
# starts in ~2 s; 12 runs of 2 s with a 1 s warm-up; the report ~20 s).
set -euo pipefail

WORK=${1:-$(mktemp -d /tmp/perfkit-ci-XXXXXX)}
PORT=${PORT:-8300}
DURATION=${DURATION:-2s}
REPETITIONS=${REPETITIONS:-4}
MAX_REGRESSION=${MAX_REGRESSION:-10%}
read -r -a PK <<< "${PERFKIT:-perfkit}"

STORE="$WORK/history"            # in CI: .perfkit/history, restored from the cache
SUMMARY="$WORK/summary.md"       # in CI: $GITHUB_STEP_SUMMARY
export PERFKIT_NO_PROGRESS=1
TESTBED_DIR=$(mktemp -d /tmp/perfkit-ci-testbed-XXXXXX)
chmod 755 "$TESTBED_DIR"         # nginx's workers must be able to traverse it
export PERFKIT_TESTBED_DIR="$TESTBED_DIR"

cleanup() {
    "${PK[@]}" testbed down >/dev/null 2>&1 || true
    rm -rf "$TESTBED_DIR"
}
trap cleanup EXIT

mkdir -p "$WORK"
cat > "$WORK/perf.yaml" <<EOF
# The CI job's sweep: the service under test at its URL, a few short runs.
name: ci-perf
tool: wrk
target:
  url: http://127.0.0.1:$PORT/
load: {connections: 16, threads: 2}
duration: $DURATION
repetitions: $REPETITIONS
warmup: 1s
seed: 20261124
pause: 0.2s
options: {latency: true}
EOF

# One CI job: the steps of docs/ci.md for commit $1, whose server runs testbed profile $2.
job() {
    local commit=$1 profile=$2 status=skipped
    # step "Start the service under test" (in CI: build and start your service)
    "${PK[@]}" testbed up --profile "$profile" --port "$PORT" >/dev/null
    # step "Sweep"
    "${PK[@]}" sweep "$WORK/perf.yaml" --out "$WORK/runs/$commit" >/dev/null
    "${PK[@]}" testbed down >/dev/null
    # step "Gate against the stored baseline": the last two labels of the history
    if [ -f "$STORE/HISTORY.json" ]; then
        status=0
        "${PK[@]}" gate "$STORE::labels_ago=0|1" "$WORK/runs/$commit" \
            --metric latency_p99_ms --metric throughput_rps \
            --max-regression "$MAX_REGRESSION" \
            --format markdown --junit "$WORK/gate-$commit.xml" >> "$SUMMARY" || status=$?
    else
        echo "No baseline yet for $commit: this job only records the history." >> "$SUMMARY"
    fi
    # step "Append to the history" (in CI: on pushes to main only)
    "${PK[@]}" history add "$WORK/runs/$commit" --label "$commit" --store "$STORE" >/dev/null
    echo "$commit $profile $status" >> "$WORK/gates.txt"
    echo "$commit ($profile): gate exit status $status"
}

job c1 proxy
job c2 proxy
job c3 proxy+slow-upstream

# step "HTML report" (uploaded as an artifact in CI)
cat > "$WORK/report.yaml" <<EOF
title: "CI performance history"
data: .
notebooks:
  history:
    history: history
    metrics: [latency_p99_ms, throughput_rps]
    max_regression: $(awk "BEGIN { print ${MAX_REGRESSION%\%} / 100 }")
EOF
"${PK[@]}" report -p "$WORK/report.yaml" -o "$WORK/report" >/dev/null
echo "report: $WORK/report/index.html"
