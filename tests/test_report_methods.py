"""Issue 12: every number of a report's Methods paragraph matches the run manifests.

The paragraphs come from the built demo report (``methods.md``); the expected values are read
here straight from each run's ``manifest.json`` with :mod:`json`, not through perfkit.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from perfkit.analysis import load_experiment
from perfkit.analysis.context import provenance
from perfkit.report.methods import design_sentence, methods_paragraph
from perfkit.report.sections import common
from perfkit.report.sections import history as hs

DATA = Path(__file__).resolve().parents[1] / "data"
PARAMS = Path(__file__).resolve().parents[1] / "params" / "demo.yaml"


@pytest.fixture(scope="module")
def paragraphs(demo_report) -> dict[str, str]:
    text = (demo_report / "methods.md").read_text(encoding="utf-8")
    parts = re.split(r"^## (.+)\n", text, flags=re.M)
    sections = {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}
    # what several experiments share is said once, in its own section, naming them
    shared = sections.pop("Shared by several experiments", "").strip().split("\n\n")
    out = {}
    for name, own in sections.items():
        said = [line.split(": ", 1)[1] for line in shared if line.startswith(
            "Every experiment: ") or re.match(rf"Experiments [^:]*\b{re.escape(name)}\b[,:]",
                                               line)]
        out[name] = own + " " + " ".join(said)
    return out


def _manifests(name: str) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((DATA / name).glob("runs/*/manifest.json"))]


def _experiments() -> list[str]:
    notebooks = yaml.safe_load(PARAMS.read_text())["notebooks"]
    return sorted(n for n in notebooks["overview"]["experiments"]
                  if _manifests(n) and (DATA / n / "experiment.yaml").exists())


@pytest.mark.parametrize("name", _experiments())
def test_methods_numbers_are_the_manifests(paragraphs, name):
    text = paragraphs[name]
    manifests = _manifests(name)
    design = yaml.safe_load((DATA / name / "experiment.yaml").read_text())
    assert re.search(rf"\b{len(manifests)} runs?\b", text)
    if "seed" in design:
        assert f"seed {design['seed']}" in text
    if "repetitions" in design:
        assert re.search(rf"\b{design['repetitions']} repetitions?\b", text)
    starts = sorted(m["start_utc"] for m in manifests)
    ends = sorted(m["end_utc"] for m in manifests)
    assert f"({starts[0]} to {ends[-1]})" in text  # first start to last end
    from perfkit.report.methods import relative

    versions = {m["tool_version"] for m in manifests}  # machine paths made relative
    assert all(relative(v) in text for v in versions)
    host = manifests[0]["host"]
    assert f"{host['cpus']} CPUs" in text and host["kernel"] in text
    assert f"{round(host['memory_bytes'] / 2**30)} GiB" in text
    for key, value in manifests[0]["sysctls"].items():
        if key.startswith("net.") and all(m["sysctls"].get(key) == value for m in manifests):
            assert f"{key} = {value}" in text, key
    cpu = [m.get("cpu") or {} for m in manifests]
    recorded = sum(1 for c in cpu if c.get("generator_cpu_share") is not None)
    assert (f"generator CPU recorded for {recorded} of {len(manifests)} runs" in text
            if recorded else "generator CPU not recorded" in text)
    server = {m["server"]["version"] for m in manifests if m.get("server")
              and m["server"].get("version")}
    assert all(v.split("/")[-1] in text for v in server)
    load = design.get("load", {})
    for column in ("connections", "users"):
        levels = load.get(column)
        for c in levels if isinstance(levels, list) else [levels] if levels else []:
            assert re.search(rf"{column} [^;]*\b{c}\b", text), (column, c)


def test_namespaced_arms_report_the_somaxconn_they_ran_with():
    """seeds-backlog runs every arm in a network namespace of its own: the host's somaxconn
    (4096) is not what they ran with; each arm's namespace value is (read from the manifests)."""
    from perfkit.analysis import load_experiment
    from perfkit.analysis.context import provenance
    from perfkit.report.methods import methods_paragraph

    name = "seeds-backlog"
    text = methods_paragraph(provenance(load_experiment(DATA / name)))
    servers = [m["server"] for m in _manifests(name)]
    assert all(s["netns"] for s in servers)
    by_value: dict[int, set[str]] = {}
    for s in servers:
        by_value.setdefault(s["somaxconn"], set()).add(s["profile"])
    assert by_value.keys() == {128, 32768}
    inside = text.split("in each namespace:", 1)[1]
    for value, profiles in by_value.items():
        assert f"net.core.somaxconn {value} (" in inside or f", {value} (" in inside, value
        m = re.search(rf"\b{value} \(([^)]*)\)", inside)
        assert m and set(m.group(1).split(", ")) == profiles, (value, profiles)
    host = _manifests(name)[0]["sysctls"]["net.core.somaxconn"]
    assert f"net.core.somaxconn = {host}" in text and "do not apply to them" in text


def test_the_command_line_fills_or_names_every_varying_part(paragraphs):
    text = paragraphs["demo-wrk2-sweep"]
    assert "{url}" not in text
    manifests = _manifests("demo-wrk2-sweep")
    ports = {m["url"].rsplit(":", 1)[1].strip("/"): m["server"]["profile"] for m in manifests}
    assert len(ports) == 2 and "http://127.0.0.1:{port}/" in text
    for port, profile in ports.items():
        assert f"{port} (profile {profile})" in text
    for name in paragraphs:
        assert "{url}" not in paragraphs[name] and "{value}" not in paragraphs[name], name


def test_a_history_is_said_to_run_in_label_order_not_in_random_blocks(paragraphs):
    text = paragraphs["demo-history"]
    labels = (DATA / "demo-history" / "labels.csv").read_text().splitlines()[1:]
    first, last = labels[0].split(",")[0], labels[-1].split(",")[0]
    assert "randomized" not in text.replace("not randomized", "")
    assert f"in label (time) order ({first} first, {last} last)" in text
    assert "seed" not in text


def test_every_metric_analysed_is_named_in_the_methods(paragraphs):
    notebooks = yaml.safe_load(PARAMS.read_text())["notebooks"]
    labels = {"latency_p99_ms": "p99 latency", "throughput_rps": "throughput",
              "latency_p50_ms": "p50 latency"}
    effects = notebooks["tuning-effects"]
    sentences = re.split(r"(?<=\.) (?=[A-Z])", paragraphs[effects["experiment"]])
    (compared,) = [s for s in sentences if "compared run against run" in s]
    (factorial,) = [s for s in sentences if s.startswith("Factorial effects")]
    for m in effects["metrics"]:
        assert labels[m] in compared.lower(), m
        assert m in factorial, m
    aa = [s for s in re.split(r"(?<=\.) (?=[A-Z])", paragraphs[effects["aa_experiment"]])
          if "compared run against run" in s]
    assert len(aa) == 1 and all(labels[m] in aa[0].lower() for m in labels)


@pytest.mark.parametrize("name", _experiments())
def test_methods_state_host_cpu_backlog_and_restarts_as_recorded(paragraphs, name):
    # the host's CPU (client and server together), the accept queue in effect (not only the
    # host's somaxconn) and the testbed's restarts, counted here from the manifests with json
    text = paragraphs[name]
    manifests = _manifests(name)
    host = [(m.get("cpu") or {}).get("host_cpu_mean_percent") for m in manifests]
    host = [h for h in host if h is not None]
    if host:
        busy = sum(h >= 90 for h in host)
        assert f"averaged >= 90% in {busy} of {len(host)} runs" in text
    queues = {(m.get("server") or {}).get("effective_backlog") for m in manifests} - {None}
    if queues and not any((m.get("server") or {}).get("netns") for m in manifests):
        assert "Accept queue in effect" in text and "server.effective_backlog" in text
        assert all(f"{q} for " in text for q in queues)
    starts = {(m.get("server") or {}).get("started_utc") for m in manifests} - {None}
    if starts:
        assert f"started the server {len(starts)} time(s) for {len(manifests)} runs" in text


def test_the_demo_methods_name_the_drift_check_once(demo_report):
    text = (demo_report / "methods.md").read_text(encoding="utf-8")
    assert text.count("Theil-Sen") == 1 and "## every experiment: drift check" in text


@pytest.fixture(scope="module")
def history():
    return hs.load("demo-history")


def test_the_history_methods_name_the_profiles_the_labels_ran(history):
    sentence = design_sentence(provenance(history))
    assert "of one configuration" not in sentence
    assert ("the server profile changed with the labels: proxy (v01-v07), "
            "proxy+slow-upstream (v08-v12), keepalive-upstream+proxy+slow-upstream (v13-v16)"
            in sentence)


def test_one_runs_window_is_one_value_and_one_run_is_singular():
    exp = load_experiment(DATA / "demo-wrk2-uncorrected")
    text = " ".join([methods_paragraph(provenance(exp)), *common.threats([exp])])
    assert "9.9-9.9" not in text and "(1 runs" not in text and "1 run(s)" not in text
    assert "cover 9.9 s at the end of the run (1 run)" in text
    assert "in its one wrk2 run of 20 s the percentiles cover only 9.9 s" in text
