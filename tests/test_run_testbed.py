"""The nginx testbed: profiles and rendering, then real nginx / upstream processes on 127.0.0.1."""

from __future__ import annotations

import http.client
import io
import itertools
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import psutil
import pytest
from _runner_helpers import port_is_free

from perfkit.cli import main
from perfkit.errors import PerfkitError
from perfkit.run.profiles import VARIABLES, coerce, resolve_variables
from perfkit.run.testbed import PROFILES, Testbed, parse_profile, render_config

FIXTURES = Path(__file__).parent / "fixtures" / "nginx"
PAGE = (FIXTURES / "index.html").read_bytes()
NGINX = "/usr/sbin/nginx"
needs_nginx = pytest.mark.skipif(not os.access(NGINX, os.X_OK), reason="Debian nginx missing")
needs_netns = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("ip") is None,
                                 reason="network namespaces need root and ip")


# -- helpers ----------------------------------------------------------------------------------
def statements(conf: str) -> Counter:
    """nginx config -> multiset of statements ('listen 127.0.0.1:8080;', 'location / {')."""
    text = re.sub(r"#[^\n]*", "", conf)
    found = re.findall(r"[^;{}]*[;{}]", text)
    return Counter(" ".join(s.split()) for s in found if s.strip())


def composable(profile: str) -> bool:
    """Whether the profiles of ``profile`` combine (no two set one variable differently)."""
    try:
        parse_profile(profile)
    except PerfkitError:
        return False
    return True


_PORTS = range(28100, 28991, 7)
#: round the range, so that more tests than it holds (every profile pair) still find one
_next = itertools.cycle(_PORTS)


def free_port() -> int:
    """A port (and the upstream's, port + 1000) free on the host loopback."""
    for _, port in zip(_PORTS, _next, strict=False):
        if port_is_free(port) and port_is_free(port + 1000):
            return port
    raise RuntimeError("no free port pair in 28100..28990")


def running(pid: int) -> bool:
    """Alive and not a zombie (this host's init reaps orphans only after a second or two)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def get(port: int, path: str = "/") -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


@pytest.fixture
def state_dir():
    """A fresh /tmp directory nginx's workers (nobody) can traverse (pytest's tmp_path is 0700)."""
    d = tempfile.mkdtemp(prefix="perfkit-testbed-test-", dir="/tmp")
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def testbed(state_dir):
    tb = Testbed(state_dir)
    try:
        yield tb
    finally:
        tb.down()


@pytest.fixture
def other_nginx(state_dir):
    """An unrelated nginx (its own prefix and port) that the testbed must never touch."""
    prefix = tempfile.mkdtemp(prefix="perfkit-other-nginx-", dir="/tmp")
    os.chmod(prefix, 0o755)
    port = free_port()
    for sub in ("conf", "logs", "html"):
        os.makedirs(os.path.join(prefix, sub), mode=0o755)
    shutil.copy(FIXTURES / "index.html", os.path.join(prefix, "html", "index.html"))
    conf = (FIXTURES / "default.conf").read_text().replace("127.0.0.1:8080", f"127.0.0.1:{port}")
    Path(prefix, "conf", "nginx.conf").write_text(conf.replace("access_log logs/access.log "
                                                               "combined", "access_log off"))
    os.makedirs(os.path.join(prefix, "tmp"), mode=0o755)
    subprocess.run([NGINX, "-p", prefix + "/", "-c", "conf/nginx.conf", "-e", "logs/error.log"],
                   check=True, timeout=10)
    pid = None
    try:
        for _ in range(200):
            text = Path(prefix, "logs", "nginx.pid")
            if text.exists() and text.read_text().strip():
                pid = int(text.read_text())
                break
            time.sleep(0.02)
        yield pid, port
    finally:
        if pid and psutil.pid_exists(pid):
            subprocess.run([NGINX, "-p", prefix + "/", "-c", "conf/nginx.conf", "-e",
                            "logs/error.log", "-s", "stop"], timeout=10)
            psutil.Process(pid).wait(timeout=10)
        shutil.rmtree(prefix, ignore_errors=True)


# -- profiles and rendering (no processes) ------------------------------------------------
def test_profiles_compose_into_the_union_of_their_variables():
    both = parse_profile("keepalive+cache-ram")
    assert both == PROFILES["keepalive"] | PROFILES["cache-ram"]
    assert parse_profile("default") == {}


def test_unknown_profile_lists_the_known_ones():
    with pytest.raises(PerfkitError) as exc:
        parse_profile("keepalive+turbo")
    assert "turbo" in str(exc.value)
    for name in PROFILES:
        assert name in str(exc.value)


def test_conflicting_profiles_are_refused():
    with pytest.raises(PerfkitError, match="proxy_cache"):
        parse_profile("cache-disk+cache-ram")


def test_command_line_values_are_converted_by_variable_type():
    assert coerce("backlog", "64") == 64
    assert coerce("backlog", "none") is None
    assert coerce("netns", "yes") is True
    assert coerce("reload_interval_s", "1.5") == 1.5
    with pytest.raises(PerfkitError):
        coerce("backlog", "many")
    with pytest.raises(PerfkitError):
        coerce("proxy_cache", "tape")
    with pytest.raises(PerfkitError):
        coerce("no_such_variable", 1)


def test_somaxconn_is_only_set_inside_a_namespace():
    with pytest.raises(PerfkitError, match="netns"):
        resolve_variables("backlog", {"somaxconn": 64})
    assert resolve_variables("backlog+netns", {"somaxconn": 64})["somaxconn"] == 64


def test_default_profile_renders_the_fixture_default_conf():
    rendered = statements(render_config("default", port=8080, state_dir="/tmp/x"))
    rendered = Counter({k: n for k, n in rendered.items() if not k.startswith("user ")})
    # ... and a server of its own for perfkit's counters: stub_status on a unix socket
    counters = Counter(["server {", "listen unix:/tmp/x/logs/status.sock;", "access_log off;",
                        "location = /nginx_status {", "stub_status;", "}", "}"])
    assert rendered - counters == statements((FIXTURES / "default.conf").read_text())
    assert rendered - statements((FIXTURES / "default.conf").read_text()) == counters


def test_backlog_profile_renders_the_listen_backlog():
    fixture = statements((FIXTURES / "backlog.conf").read_text())
    rendered = statements(render_config("backlog", port=8083, state_dir="/tmp/x"))
    assert "listen 127.0.0.1:8083 backlog=8;" in fixture
    assert "listen 127.0.0.1:8083 backlog=8;" in rendered
    assert "listen 127.0.0.1:8083;" in statements(render_config("default", port=8083))


def test_buffered_log_renders_the_tuned_fixture_access_log():
    line = "access_log logs/access.log combined buffer=256k flush=10s;"
    assert line in statements((FIXTURES / "tuned.conf").read_text())
    assert line in statements(render_config("buffered-log", state_dir="/tmp/x"))


def test_keepalive_sets_client_and_upstream_keepalive():
    alone = statements(render_config("keepalive", state_dir="/tmp/x"))
    assert "keepalive_requests 100000;" in alone and "keepalive_timeout 300;" in alone
    assert "keepalive 32;" not in alone  # no proxied location without proxy/cache
    proxied = statements(render_config("keepalive+proxy", state_dir="/tmp/x"))
    for line in ("keepalive 32;", "proxy_http_version 1.1;", 'proxy_set_header Connection "";'):
        assert line in proxied


def test_cache_paths_are_on_tmpfs_or_under_the_state_dir():
    ram = resolve_variables("cache-ram", port=8080, state_dir="/tmp/sd")["cache_path"]
    disk = resolve_variables("cache-disk", port=8080, state_dir="/tmp/sd")["cache_path"]
    assert ram.startswith("/dev/shm/") and disk == "/tmp/sd/cache"
    assert f"proxy_cache_path {ram} " in render_config("cache-ram", state_dir="/tmp/sd")


def test_help_documents_every_profile_and_variable():
    out = io.StringIO()
    assert main(["testbed", "--help"], out, io.StringIO()) == 0
    text = out.getvalue()
    for name in list(PROFILES) + [v.name for v in VARIABLES]:
        assert name in text


# -- real nginx -----------------------------------------------------------------------------
@pytest.mark.live
@needs_nginx
@pytest.mark.parametrize("profile", sorted(
    "+".join(pair) for pair in itertools.combinations_with_replacement(PROFILES, 2)
    if composable("+".join(pair))))
def test_nginx_accepts_every_profile_and_pair(state_dir, profile):
    report = Testbed(state_dir).check_config(profile, port=free_port())
    assert "test is successful" in report
    assert not os.path.exists(os.path.join(state_dir, "check"))


@pytest.mark.live
@needs_nginx
def test_default_testbed_serves_the_page_and_error_statuses(testbed):
    info = testbed.up("default", port=free_port())
    assert info.base_url == f"http://127.0.0.1:{info.port}/"
    status, headers, body = get(info.port, "/")
    assert (status, body) == (200, PAGE) and len(body) == 1024
    assert get(info.port, "/missing")[0] == 404
    assert get(info.port, "/status503")[0] == 503
    assert get(info.port, "/status500")[0] == 500
    assert info.nginx_version == "1.22.1"
    assert info.config_text == Path(info.config_path).read_text()
    assert info.backlog == 511 and info.somaxconn == int(
        Path("/proc/sys/net/core/somaxconn").read_text())


@pytest.mark.live
@needs_nginx
def test_down_stops_exactly_the_started_pids_and_spares_another_nginx(testbed, other_nginx):
    other_pid, other_port = other_nginx
    info = testbed.up("cache-ram", port=free_port())
    assert testbed.status().pids == info.pids
    stopped = testbed.down()
    assert sorted(stopped) == sorted(info.pids.values())
    assert not any(running(p) for p in info.pids.values())
    assert testbed.status() is None and not testbed.state_path.exists()
    assert running(other_pid) and get(other_port, "/")[0] == 200
    assert testbed.down() == []  # idempotent
    assert not os.path.exists(info.variables["cache_path"])


@pytest.mark.live
@needs_nginx
def test_stale_state_naming_someone_elses_pid_kills_nothing(testbed, other_nginx):
    other_pid, other_port = other_nginx
    info = testbed.up("default", port=free_port())
    testbed.down()
    state = info.to_dict() | {"pids": {"nginx": other_pid}, "create_times": {}}
    Path(testbed.state_path).write_text(json.dumps(state))
    assert testbed.status() is None
    assert testbed.down() == []
    assert running(other_pid) and get(other_port, "/")[0] == 200


@pytest.mark.live
@needs_nginx
def test_keepalive_cache_ram_hits_on_the_second_request(testbed):
    info = testbed.up("keepalive+cache-ram", port=free_port())
    cache = info.variables["cache_path"]
    assert cache.startswith("/dev/shm/") and f"proxy_cache_path {cache} " in info.config_text
    first = get(info.port, "/")
    second = get(info.port, "/")
    assert first[0] == second[0] == 200 and len(second[2]) == 1024
    assert (first[1]["x-cache-status"], second[1]["x-cache-status"]) == ("MISS", "HIT")
    assert any(files for _, _, files in os.walk(cache))  # the cached entry is on tmpfs
    assert set(info.pids) == {"nginx", "upstream"}
    assert get(info.port, "/proxy/?delay_ms=1")[0] == 200


@pytest.mark.live
@needs_nginx
def test_cache_disk_keeps_its_cache_under_the_state_dir(testbed):
    info = testbed.up("cache-disk", port=free_port())
    assert info.variables["cache_path"] == os.path.join(testbed.state_dir, "cache")
    assert [get(info.port, "/")[1]["x-cache-status"] for _ in range(2)] == ["MISS", "HIT"]


@pytest.mark.live
@needs_nginx
@pytest.mark.skipif(shutil.which("ss") is None, reason="needs ss")
def test_backlog_profile_sets_the_accept_queue(testbed):
    info = testbed.up("backlog", port=free_port())
    assert info.backlog == 8 and info.accept_queue_max == 8 and info.effective_backlog == 8
    assert get(info.port, "/")[0] == 200


@pytest.mark.live
@needs_nginx
@pytest.mark.skipif(shutil.which("ss") is None, reason="needs ss")
def test_ss_shows_the_backlogs_nginx_and_the_upstream_asked_for(testbed):
    """Each listening socket's accept queue is the backlog it asked for (capped at
    somaxconn), as ss -ltn shows it: the upstream's too (it showed asyncio's 100)."""
    somaxconn = int(Path("/proc/sys/net/core/somaxconn").read_text())
    info = testbed.up("proxy", port=free_port(),
                      variables={"backlog": 300, "upstream_backlog": 700,
                                 "upstream_processes": 2, "upstream_ceiling_s": 0})
    assert info.accept_queue_max == min(300, somaxconn)
    assert info.upstream_backlog == 700
    assert info.upstream_accept_queue_max == min(700, somaxconn)
    assert info.upstream_processes == 2 and info.upstream_ceiling is None
    assert info.nginx_workers and info.nginx_workers >= 1
    assert get(info.port, "/")[0] == 200


@pytest.mark.live
@needs_nginx
@needs_netns
def test_netns_caps_the_backlog_with_its_own_somaxconn(testbed):
    host_somaxconn = Path("/proc/sys/net/core/somaxconn").read_text()
    port = free_port()
    info = testbed.up("backlog+netns", port=port, variables={"backlog": 1024, "somaxconn": 64})
    assert info.netns and info.somaxconn == 64 and info.backlog == 1024
    assert info.effective_backlog == 64 and info.accept_queue_max == 64
    assert Path("/proc/sys/net/core/somaxconn").read_text() == host_somaxconn
    with pytest.raises(OSError):  # the namespace's loopback is not the host's
        get(port, "/")
    argv = testbed.wrap_command(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                                 info.base_url])
    assert argv[:4] == ["ip", "netns", "exec", info.netns]
    assert subprocess.run(argv, capture_output=True, text=True, timeout=10).stdout == "200"
    testbed.down()
    assert not Path("/run/netns", info.netns).exists()
    assert testbed.wrap_command(["wrk"]) == ["wrk"]


@pytest.mark.live
@needs_nginx
def test_reload_disturbance_reloads_while_requests_succeed(testbed):
    info = testbed.up("default", port=free_port())
    master = psutil.Process(info.pids["nginx"])
    workers_before = {c.pid for c in master.children()}
    statuses = []
    with testbed.reload_disturbance(interval_s=1.0) as record:
        deadline = time.monotonic() + 3.3
        while time.monotonic() < deadline:
            statuses.append(get(info.port, "/")[0])
    assert record.count >= 2 and testbed.reload_count == record.count and not record.errors
    assert set(statuses) == {200} and len(statuses) > 10
    assert not workers_before & {c.pid for c in master.children()}  # a new worker generation
    assert testbed.status().pids["nginx"] == master.pid


@pytest.mark.live
@needs_nginx
def test_reload_profile_is_a_flag_not_a_config_change(testbed):
    info = testbed.up("reload", port=free_port())
    assert info.reload_interval_s == 2.0
    assert statements(info.config_text) == statements(render_config(
        "default", port=info.port, state_dir=testbed.state_dir))


@pytest.mark.live
@needs_nginx
def test_everything_the_testbed_writes_is_readable_by_others(testbed):
    testbed.up("buffered-log", port=free_port())
    base = Path(testbed.state_dir)
    checked = 0
    for path in [base, *base.rglob("*")]:
        if path.relative_to(base).parts[:1] in (("tmp",), ("cache",)):
            continue  # nginx's own 0700 directories, owned by its worker user
        mode = path.stat().st_mode
        assert mode & stat.S_IROTH, path
        assert not path.is_dir() or mode & stat.S_IXOTH, path
        checked += 1
    assert {"nginx.conf", "index.html", "state.json", "error.log"} <= {
        p.name for p in base.rglob("*")} and checked >= 8


@pytest.mark.live
@needs_nginx
def test_up_on_a_busy_port_fails_and_leaves_nothing_running(testbed, other_nginx):
    _, other_port = other_nginx
    with pytest.raises(PerfkitError, match="in use"):
        testbed.up("default", port=other_port)
    assert testbed.status() is None and not testbed.state_path.exists()


@pytest.mark.live
@needs_nginx
@pytest.mark.skipif(os.geteuid() != 0, reason="workers drop to nobody only under root")
def test_root_refuses_a_state_dir_its_workers_cannot_reach(state_dir):
    private = os.path.join(state_dir, "private")
    os.mkdir(private, 0o700)
    tb = Testbed(os.path.join(private, "testbed"))
    with pytest.raises(PerfkitError, match="not searchable by others"):
        tb.up("default", port=free_port())
    assert tb.status() is None


@pytest.mark.live
@needs_nginx
def test_cli_up_prints_the_base_url_last_then_status_and_down(state_dir):
    port = free_port()
    out = io.StringIO()
    args = ["--state-dir", state_dir]
    try:
        assert main(["testbed", "up", "--profile", "keepalive", "--port", str(port), *args],
                    out, io.StringIO()) == 0
        assert out.getvalue().splitlines()[-1] == f"http://127.0.0.1:{port}/"
        out = io.StringIO()
        assert main(["testbed", "status", *args], out, io.StringIO()) == 0
        info = Testbed(state_dir).status()
        for text in ("keepalive", info.base_url, str(info.pids["nginx"]), info.config_path):
            assert text in out.getvalue()
    finally:
        assert main(["testbed", "down", *args], io.StringIO(), io.StringIO()) == 0
    assert main(["testbed", "status", *args], io.StringIO(), io.StringIO()) == 3


# -- the upstream app -------------------------------------------------------------------------
@pytest.fixture
def upstream():
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "perfkit.run.upstream", "--port", str(port)])
    try:
        for _ in range(300):
            if not port_is_free(port):
                break
            time.sleep(0.02)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.live
def test_upstream_answers_1024_bytes_after_the_asked_delay_on_one_connection(upstream):
    conn = http.client.HTTPConnection("127.0.0.1", upstream, timeout=10)
    try:
        conn.request("GET", "/x?delay_ms=200")
        start = time.monotonic()
        first = conn.getresponse()
        assert first.status == 200 and len(first.read()) == 1024
        assert time.monotonic() - start >= 0.19  # the delay is the feature, a lower bound only
        sock = conn.sock
        conn.request("GET", "/")
        assert conn.getresponse().read() and conn.sock is sock  # kept alive
    finally:
        conn.close()
    assert get(upstream, "/x?delay_ms=soon")[0] == 400


@pytest.mark.live
def test_upstream_listens_on_loopback_only(upstream):
    listeners = [c.laddr for c in psutil.net_connections("tcp")
                 if c.status == psutil.CONN_LISTEN and c.laddr.port == upstream]
    assert listeners and all(addr.ip == "127.0.0.1" for addr in listeners)
