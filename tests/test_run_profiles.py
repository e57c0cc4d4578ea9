"""The testbed profiles added for the seeds' tuning experiments and the history demo:
keepalive-client, keepalive-upstream, worker-connections, somaxconn-large, slow-upstream."""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import time
from pathlib import Path

import psutil
import pytest
from test_run_testbed import NGINX, free_port, get, statements

from perfkit.errors import PerfkitError
from perfkit.run.profiles import resolve_variables
from perfkit.run.testbed import PROFILES, Testbed, parse_profile, render_config

needs_nginx = pytest.mark.skipif(not os.access(NGINX, os.X_OK), reason="Debian nginx missing")
needs_netns = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("ip") is None,
                                 reason="network namespaces need root and ip")


def config(profile: str) -> set[str]:
    """The statements of a profile's rendered config, comments and the user line left out."""
    rendered = statements(render_config(profile, port=8080, state_dir="/tmp/x"))
    return {s for s in rendered if not s.startswith("user ")}


@pytest.fixture
def testbed():
    d = tempfile.mkdtemp(prefix="perfkit-testbed-test-", dir="/tmp")
    os.chmod(d, 0o755)
    tb = Testbed(d)
    try:
        yield tb
    finally:
        tb.down()
        shutil.rmtree(d, ignore_errors=True)


def test_only_the_known_pairs_of_profiles_conflict():
    refused = set()
    for a, b in itertools.combinations(PROFILES, 2):
        try:
            parse_profile(f"{a}+{b}")
        except PerfkitError:
            refused.add(frozenset((a, b)))
    assert refused == {frozenset(p) for p in (("cache-disk", "cache-ram"),
                                              ("backlog", "somaxconn-large"),
                                              ("netns", "somaxconn-large"),
                                              # each keepalive factor's two settings
                                              ("client-keepalive-off", "keepalive"),
                                              ("client-keepalive-off", "keepalive-client"),
                                              ("upstream-keepalive", "keepalive"),
                                              ("upstream-keepalive", "keepalive-upstream"))}


def test_the_two_halves_of_keepalive_make_keepalive():
    assert parse_profile("keepalive-client+keepalive-upstream") == PROFILES["keepalive"]
    both = config("keepalive-client+keepalive-upstream+proxy")
    assert both == config("keepalive+proxy")
    client = config("keepalive-client+proxy")
    assert {"keepalive_requests 100000;", "keepalive_timeout 300;"} <= client
    assert "keepalive 32;" not in client and "proxy_http_version 1.1;" not in client
    upstream = config("keepalive-upstream+proxy")
    assert {"keepalive 32;", "proxy_http_version 1.1;", "keepalive_timeout 65;"} <= upstream
    assert not any(s.startswith("keepalive_requests") for s in upstream)


def test_client_and_upstream_keepalive_are_two_parts_named_by_what_they_change():
    """nginx's default keeps client connections alive (keepalive_timeout 65): the client
    factor's part turns it off; the upstream factor's part adds a pool that covers every load
    point of the examples; ``keepalive`` stays as it was."""
    off = config("client-keepalive-off+proxy")
    assert "keepalive_timeout 0;" in off
    assert not any(s.startswith("keepalive ") for s in off)
    assert "keepalive_timeout 65;" in config("proxy")
    pooled = config("upstream-keepalive+proxy")
    assert {"keepalive 1024;", "proxy_http_version 1.1;", 'proxy_set_header Connection "";',
            "keepalive_timeout 65;"} <= pooled
    assert "keepalive 32;" in config("keepalive+proxy")
    both = parse_profile("client-keepalive-off+upstream-keepalive")
    assert both == {"keepalive_timeout_s": 0, "upstream_keepalive": 1024}


def test_worker_connections_profile_sets_10240_per_worker():
    assert "worker_connections 10240;" in config("worker-connections")
    assert "worker_connections 1024;" in config("default")
    assert config("worker-connections") - config("default") == {"worker_connections 10240;"}


def test_somaxconn_large_asks_for_a_32768_queue_in_a_namespace():
    v = resolve_variables("somaxconn-large", port=8080, state_dir="/tmp/x")
    assert (v["netns"], v["somaxconn"], v["backlog"]) == (True, 32768, 32768)
    assert "listen 127.0.0.1:8080 backlog=32768;" in config("somaxconn-large")
    with pytest.raises(PerfkitError, match="somaxconn"):
        parse_profile("netns+somaxconn-large")


def test_slow_upstream_changes_the_upstream_not_the_nginx_config():
    assert resolve_variables("proxy+slow-upstream", state_dir="/tmp/x")["upstream_delay_ms"] == 20
    assert resolve_variables("proxy", state_dir="/tmp/x")["upstream_delay_ms"] == 10
    assert config("proxy+slow-upstream") == config("proxy")
    assert config("slow-upstream") == config("default")


@pytest.mark.live
@needs_nginx
@needs_netns
@pytest.mark.skipif(shutil.which("ss") is None, reason="needs ss")
def test_somaxconn_large_grants_the_queue_and_leaves_the_host_alone(testbed):
    host = Path("/proc/sys/net/core/somaxconn").read_text()
    info = testbed.up("somaxconn-large", port=free_port())
    assert (info.somaxconn, info.backlog, info.accept_queue_max) == (32768, 32768, 32768)
    assert info.effective_backlog == 32768 and info.netns
    assert Path("/proc/sys/net/core/somaxconn").read_text() == host


@pytest.mark.live
@needs_nginx
def test_slow_upstream_answers_after_at_least_20_ms(testbed):
    info = testbed.up("proxy+slow-upstream", port=free_port())
    cmdline = psutil.Process(info.pids["upstream"]).cmdline()
    assert cmdline[cmdline.index("--delay-ms") + 1] == "20"
    for _ in range(3):
        start = time.perf_counter()
        status, _, body = get(info.port, "/")
        assert status == 200 and len(body) == 1024
        assert time.perf_counter() - start >= 0.020  # a lower bound: sleeps are never shorter
