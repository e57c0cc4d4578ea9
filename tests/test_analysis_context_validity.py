"""perfkit.analysis.context._validity: the threats to validity, read from the run manifests
(generator load, the workload, run lengths, the recorded nginx configurations) and from the analyses
a page ran (which of them ignore the blocks)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from perfkit.analysis import load_experiment
from perfkit.analysis.compare import _aa as aa_calibration
from perfkit.analysis.context import CACHE_DIR, STATE_DIR, threats
from perfkit.analysis.core import GENERATOR_BUSY
from perfkit.report.sections import effects, scaling

#: the demo factorial as first recorded, with the upstream's queue of 100: its 1 s stalls
#: (tests/fixtures/stalls/README.md)
STALLS = Path(__file__).resolve().parent / "fixtures" / "stalls"
DATA = Path(__file__).resolve().parents[1] / "data"
#: the closed-loop sweep recorded on a busy shared VM: its throughput differs between blocks
#: and drifts, and its default profile has a claimed peak
SHARED_VM = (Path(__file__).resolve().parent / "fixtures" / "scaling"
             / "wrk-connections-shared-vm")



def _configs(name: str) -> dict[str, Counter]:
    """Per server profile: its recorded nginx config's directive lines (comments, blank lines
    and lone braces left out), counted, read straight from the manifests with json; the
    testbed's own folder (the recording host's ``state_dir``) and the RAM cache's shown as the
    pages show them."""
    out: dict[str, Counter] = {}
    for path in sorted((DATA / name).glob("runs/*/manifest.json")):
        server = json.loads(path.read_text())["server"]
        text = server["config_text"]
        cache = (server.get("variables") or {}).get("cache_path") or ""
        if cache.startswith("/dev/shm/"):  # the RAM cache's folder, named after its recorder
            text = text.replace(cache, f"/dev/shm/{CACHE_DIR}")
        text = text.replace(server["state_dir"].rstrip("/"), STATE_DIR)
        lines = [" ".join(ln.split()) for ln in text.splitlines()
                 if ln.strip() and not ln.strip().startswith("#")]
        out.setdefault(server["profile"], Counter(ln for ln in lines if ln not in "{}"))
    return out


def _blocks(exp, analyses=()) -> str:
    (text,) = [t.text for t in threats(exp, analyses=analyses) if t.kind == "blocks"]
    return text


def test_threats_come_from_the_manifests(demo_sweep):
    locust = load_experiment(DATA / "demo-locust")
    shares = [r.manifest.get("cpu", {}).get("generator_cpu_share") for r in locust.rows().runs]
    busy = sum(1 for s in shares if isinstance(s, float) and s >= GENERATOR_BUSY == 0.9)
    kinds = {t.kind: t.text for t in threats(locust)}
    assert busy and f"{busy} of {len(shares)}" in kinds["generator-busy"]
    assert "same-host" in kinds
    swept = {t.kind: t.text for t in threats(demo_sweep)}
    assert "generator-unknown" in swept and "wrk2-calibration" in swept
    assert "nginx 1." in swept["workload"] and "bytes read per response" in swept["workload"]
    stalls = load_experiment(STALLS / "factorial-upstream-backlog100")
    factorial = {t.kind: t.text for t in threats(stalls)}
    assert "runs of 5.01-5.1 s" in factorial["short-runs"]  # wrk -d 5s, timed in manifests


@pytest.mark.parametrize("name", ["seeds-keepalive", "seeds-backlog", "seeds-cache",
                                  "demo-wrk-factorial"])
def test_config_diffs_are_two_sided_and_name_each_lines_side(name):
    configs = _configs(name)
    (text,) = [t.text for t in threats(load_experiment(DATA / name)) if t.kind == "configs"]
    pairs = text.split("(each line named by the profile that has it): ", 1)[1].rstrip(".")
    shown = 0
    sides = []  # (the text of one side, its profile, the other's)
    for part in pairs.split(" | "):
        if " (each pair alike): " in part:  # pairs that differ by the same lines, said once
            names, body = part.split(" (each pair alike): ", 1)
            first, second = body.split("; only in the second: ")
            for pair in names.split(", "):
                a, b = pair.split(" vs ")
                sides += [(first, a, b), (second, b, a)]
            continue
        a, rest = part.split(" vs ", 1)
        b, body = rest.split(": ", 1)
        first = body.split(f"only in {b}: ")[0]
        second = body.split(f"only in {b}: ")[1]
        sides += [(first, a, b), (second, b, a)]
    for side, mine, other in sides:
        extra = configs[mine] - configs[other]
        for line, n in extra.items():
            assert f"`{line}`" + (f" (x{n})" if n > 1 else "") in side, (mine, line)
            shown += 1
        for line in configs[other] - configs[mine]:
            assert f"`{line}`" not in side, (mine, line)
    assert shown
    if name == "seeds-keepalive":  # the reviewer's pair: client keepalive on both sides
        assert "`keepalive_timeout 300;`" in text and "`keepalive_timeout 65;`" in text
        assert "`proxy_set_header Connection \"\";` (x3)" in text
    if name == "demo-wrk-factorial":  # 12 pairs, 3 ways (one per factor), each said once
        assert text.count("(each pair alike)") == 3 and text.count("keepalive 1024;") == 1
    if name == "seeds-backlog":
        assert "backlog=8;`" in text and "backlog=32768;`" in text
    if name == "seeds-cache":
        # the ram cache in /dev/shm, the disk cache in the testbed's folder
        assert f"proxy_cache_path /dev/shm/{CACHE_DIR} " in text
        assert f"proxy_cache_path {STATE_DIR}/" in text


def test_the_block_threat_names_the_analyses_that_ignore_blocks():
    # the closed-loop sweep recorded on a busy shared VM: its throughput differs between blocks
    # (the bundled demos, recorded on an idle machine, show no block effect)
    factorial = load_experiment(SHARED_VM, name="demo-wrk-connections")
    rows = factorial.rows()
    ab = effects.ab_tables(rows, ["profile"], ["latency_p99_ms", "throughput_rps"],
                           "connections", 0.05, 0.95)
    fits = effects.factorials(rows, ["profile"], ["latency_p99_ms", "throughput_rps"],
                              "connections", 0.95, 0.05)
    text = _blocks(factorial, [*ab, *fits])
    assert "scalability fit" not in text and "SLO bracket" not in text  # neither runs here
    blind, modelled = text.split("ignoring blocks", 1)[1].split("modelling blocks", 1)
    assert "Mann-Whitney comparisons (p99 latency, throughput)" in blind
    assert all(r.block == "block" for r in fits) and "factorial effects" in modelled
    # without the page's analyses (the overview) no analysis is named as ignoring blocks
    generic = _blocks(factorial)
    assert "scalability fit" not in generic and "SLO bracket" not in generic
    aa_exp = load_experiment(DATA / "demo-aa")
    result = aa_calibration.aa_calibration(aa_exp.rows(), "arm", ["latency_p99_ms"])
    assert "A/A false-positive rates" in _blocks(aa_exp, [result]).split("ignoring blocks")[1]


def test_the_block_threat_names_the_seeds_compares_and_the_scaling_fit(demo_sweep, seeds_analysis):
    analysis = seeds_analysis
    cache = load_experiment(DATA / "seeds-cache")
    reps = [r for r in analysis.replications if r.link.experiment == "seeds-cache"]
    assert reps
    text = _blocks(cache, reps)
    assert all(f"claim {r.link.claim_id}" in text for r in reps) and "Mann-Whitney" in text
    assert "scalability fit" not in text and "SLO bracket" not in text
    closed = load_experiment(SHARED_VM, name="demo-wrk-connections")
    fits = scaling.closed_models(closed, {}, ["profile"], 0.95, 0.05, 50, 1)
    slo = scaling.slo(demo_sweep.rows(), ["profile", "connections"], 5.0, 99.0, 0.95, 1, 100)
    (shown,) = [t for t in scaling.threats(demo_sweep, closed, slo, fits) if "between blocks" in t]
    assert shown.startswith("demo-wrk-connections") and "the scalability fit" in shown
    assert "SLO bracket" not in shown  # the SLO bracket is on the sweep, which has no blocks


def test_the_threats_of_runs_in_blocks_import_no_scipy_stats():
    """The block check's ANOVA p comes from perfkit.stats.anova (tests/test_stats_anova.py):
    the threats of an experiment in blocks (the demo factorial) import no scipy.stats (0.6 s
    of each report page, issue 33)."""
    import subprocess
    import sys

    code = ("import sys; from perfkit.analysis import load_experiment; "
            "from perfkit.analysis.context import threats; "
            f"exp = load_experiment({str(DATA / 'demo-wrk-factorial')!r}); "
            "assert any(t for t in threats(exp)); print('scipy.stats' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"
