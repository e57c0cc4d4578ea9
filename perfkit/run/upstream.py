"""A slow upstream for the testbed's proxy and cache profiles (stdlib only).

An HTTP/1.1 server with keep-alive on 127.0.0.1 only, like the fixtures' ``upstream_app.py``
(which used gevent):

- ``GET /slow``               -> 200 after ``--slow-ms`` (default 3000 ms);
- ``GET /anything?delay_ms=N`` -> 200 after N ms (0 <= N <= 600000);
- ``GET /anything``           -> 200 after ``--delay-ms`` (default 10 ms).

Every answer has a 1024-byte ``text/plain`` body. HTTP/1.1 connections stay open unless the
client sends ``Connection: close``; HTTP/1.0 ones close unless it sends ``keep-alive``.

So that it is never the testbed's bottleneck where a faster server would not be:

- **its listen backlog is the one asked for** (``--backlog``, default :data:`BACKLOG`; the kernel
  caps it at ``net.core.somaxconn``). asyncio's ``start_server(sock=...)`` calls ``listen()``
  again with its own default of 100 unless it is given the backlog too, which it is here;
- **several processes** (``--processes``, default one per usable core) share the one listening
  socket, forked from a master after it binds (the pre-fork model of nginx and gunicorn): one
  accept queue, so ``ss -ltn`` shows one listener whose Send-Q is the backlog and whose drops
  are its own. (``SO_REUSEPORT`` would give each process a queue of its own, hashed to by
  the client's address: a queue can fill while another process is idle);
- each process answers from an asyncio protocol (no coroutine per request);
- **it counts** the connections it accepted and the requests it read, across its processes (a
  shared memory page, one slot per process), and serves the totals, like nginx's
  ``stub_status``, on a unix socket (``--status-socket``) that the load never reaches and
  that works across network namespaces: :data:`STATUS_HEAD`, then ``name: value`` lines
  (:func:`status_text`). Fetching it counts nothing.

Run it as ``python -m perfkit.run.upstream --port N``. With ``--daemon`` it binds first (so a
busy port is reported by the exit status), then forks, writes the master's pid to
``--pid-file`` and returns: the testbed starts it this way, as it starts nginx. SIGTERM to the
master stops its workers and it.
"""

from __future__ import annotations

import argparse
import asyncio
import mmap
import os
import signal
import socket
import struct
import sys
from urllib.parse import parse_qs, urlsplit

HOST = "127.0.0.1"
BODY = (b"upstream payload " * 64)[:1023] + b"\n"
MAX_DELAY_MS = 600_000
MAX_HEAD_BYTES = 65536
#: the default listen backlog (the kernel caps it at net.core.somaxconn)
BACKLOG = 4096
#: the first line of the status page
STATUS_HEAD = "perfkit upstream status"
#: the counters of each process's slot, in order (8-byte unsigned each)
SLOT_FIELDS = ("accepted", "requests", "closed")
_SLOT = struct.Struct("=3Q")


def delay_ms_for(target: str, default_ms: int, slow_ms: int) -> int | None:
    """The delay for a request target (path and query); None when ``delay_ms`` is invalid."""
    parts = urlsplit(target)
    if parts.path == "/slow":
        return slow_ms
    values = parse_qs(parts.query).get("delay_ms")
    if not values:
        return default_ms
    try:
        delay = int(values[0])
    except ValueError:
        return None
    return delay if 0 <= delay <= MAX_DELAY_MS else None


def response(status: int, keep_alive: bool, head_only: bool = False) -> bytes:
    """The raw HTTP/1.1 response with the 1024-byte body (or a short error body)."""
    reason = {200: "OK", 400: "Bad Request"}[status]
    body = BODY if status == 200 else b"bad request\n"
    head = (f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\n"
            f"Content-Length: {len(body)}\r\n"
            f"Connection: {'keep-alive' if keep_alive else 'close'}\r\n\r\n")
    return head.encode("ascii") + (b"" if head_only else body)


_RESPONSES = {(s, k, h): response(s, k, h) for s in (200, 400) for k in (False, True)
              for h in (False, True)}


def parse_head(head: bytes) -> tuple[str, str, str, dict[str, str]]:
    """Method, target, version and headers (lower-case names) of a request head; ValueError
    when its request line is not three words."""
    lines = head.decode("latin-1").split("\r\n")
    method, target, version = lines[0].split(" ")
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    return method, target, version, headers


def keep_alive(version: str, connection: str) -> bool:
    tokens = {t.strip().lower() for t in connection.split(",")}
    if version == "HTTP/1.1":
        return "close" not in tokens
    return "keep-alive" in tokens


class Tally:
    """The counters of every process: one slot of :data:`SLOT_FIELDS` per process in a shared
    anonymous mapping (made before the fork, so each worker's writes are seen by the master).
    Each process writes only its own slot."""

    def __init__(self, processes: int):
        self.processes = processes
        self._map = mmap.mmap(-1, _SLOT.size * processes)
        self._slot = 0
        self._mine = [0, 0, 0]

    def use_slot(self, slot: int) -> None:
        """Count into ``slot`` from now on (a worker, once, after the fork)."""
        self._slot = slot
        self._mine = list(_SLOT.unpack_from(self._map, slot * _SLOT.size))

    def add(self, field: int) -> None:
        mine = self._mine
        mine[field] += 1
        _SLOT.pack_into(self._map, self._slot * _SLOT.size, *mine)

    def totals(self) -> dict[str, int]:
        sums = [0, 0, 0]
        for slot in range(self.processes):
            for i, v in enumerate(_SLOT.unpack_from(self._map, slot * _SLOT.size)):
                sums[i] += v
        return dict(zip(SLOT_FIELDS, sums, strict=True))


def status_text(tally: Tally, backlog: int, delay_ms: int) -> str:
    """The status page: ``accepted`` connections and ``requests`` read since the start, and
    ``active`` connections (accepted, not yet closed), over every process."""
    t = tally.totals()
    lines = [STATUS_HEAD, f"processes: {tally.processes}", f"backlog: {backlog}",
             f"delay_ms: {delay_ms}", f"accepted: {t['accepted']}",
             f"requests: {t['requests']}", f"active: {t['accepted'] - t['closed']}"]
    return "\n".join(lines) + "\n"


class Connection(asyncio.Protocol):
    """One client connection: requests read from its buffer and answered one after another,
    each after its delay."""

    def __init__(self, default_ms: int, slow_ms: int, tally: Tally):
        self.default_ms, self.slow_ms, self.tally = default_ms, slow_ms, tally
        self.buf = b""
        self.busy = False
        self.transport: asyncio.Transport | None = None
        self.timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport) -> None:
        self.transport = transport
        self.tally.add(0)

    def connection_lost(self, exc: Exception | None) -> None:
        self.tally.add(2)
        if self.timer is not None:
            self.timer.cancel()
        self.transport = None

    def data_received(self, data: bytes) -> None:
        self.buf += data
        if not self.busy:
            self._next()

    def _next(self) -> None:
        end = self.buf.find(b"\r\n\r\n")
        if end < 0:
            if len(self.buf) > MAX_HEAD_BYTES:
                self._finish(400, False, False)
            return
        try:
            method, target, version, headers = parse_head(self.buf[:end])
            length = int(headers.get("content-length", "0") or 0)
        except ValueError:
            self._finish(400, False, False)
            return
        if len(self.buf) < end + 4 + length:
            return  # the body is still on its way
        self.buf = self.buf[end + 4 + length:]
        self.tally.add(1)
        delay = delay_ms_for(target, self.default_ms, self.slow_ms)
        if delay is None:
            self._finish(400, False, False)
            return
        keep = keep_alive(version, headers.get("connection", ""))
        self.busy = True
        loop = asyncio.get_running_loop()
        self.timer = loop.call_later(delay / 1000.0, self._finish, 200, keep, method == "HEAD")

    def _finish(self, status: int, keep: bool, head_only: bool) -> None:
        self.timer = None
        transport = self.transport
        if transport is None:
            return
        transport.write(_RESPONSES[status, keep, head_only])
        self.busy = False
        if not keep:
            transport.close()
        elif self.buf:
            self._next()


def bind(port: int, backlog: int = BACKLOG) -> socket.socket:
    """A listening TCP socket on 127.0.0.1:port with ``backlog``."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    sock.listen(backlog)
    return sock


async def serve(sock: socket.socket, default_ms: int, slow_ms: int, backlog: int = BACKLOG,
                tally: Tally | None = None) -> None:
    """Serve forever on an already listening socket, keeping its ``backlog`` (asyncio listens
    again when it starts serving: with 100 unless told)."""
    counts = tally or Tally(1)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: Connection(default_ms, slow_ms, counts),
                                      sock=sock, backlog=backlog)
    async with server:
        await server.serve_forever()


async def serve_status(path: str, tally: Tally, backlog: int, delay_ms: int) -> None:
    """The status page on the unix socket ``path``, to any request, then close."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5.0)
            body = status_text(tally, backlog, delay_ms).encode("ascii")
            writer.write(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: "
                         + str(len(body)).encode() + b"\r\n\r\n" + body)
            await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError,
                ConnectionError):
            pass
        finally:
            writer.close()

    if os.path.exists(path):
        os.unlink(path)  # left by a killed master: bind would fail
    server = await asyncio.start_unix_server(answer, path=path)
    os.chmod(path, 0o666)
    async with server:
        await server.serve_forever()


def _daemonize(pid_file: str, log_file: str | None) -> None:
    """Fork; the parent writes the child's pid and exits 0, the child detaches."""
    pid = os.fork()
    if pid:
        tmp = f"{pid_file}.tmp"
        with open(tmp, "w") as fh:
            fh.write(f"{pid}\n")
        os.chmod(tmp, 0o644)
        os.replace(tmp, pid_file)
        os._exit(0)
    os.setsid()
    null = os.open(os.devnull, os.O_RDWR)
    out = os.open(log_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644) if log_file else null
    os.dup2(null, 0)
    os.dup2(out, 1)
    os.dup2(out, 2)


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _worker(sock: socket.socket, args: argparse.Namespace, tally: Tally, slot: int) -> None:
    """A forked worker: serve until SIGTERM, then exit without running the master's cleanup."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    tally.use_slot(slot)
    try:
        asyncio.run(serve(sock, args.delay_ms, args.slow_ms, args.backlog, tally))
    finally:
        os._exit(0)


async def _master(workers: list[int], args: argparse.Namespace, tally: Tally) -> int:
    """Serve the status page; return when SIGTERM/SIGINT arrives (0) or a worker dies (1)."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    task = (asyncio.create_task(serve_status(args.status_socket, tally, args.backlog,
                                             args.delay_ms)) if args.status_socket else None)
    code = 0
    while not stop.is_set():
        try:
            await asyncio.wait_for(stop.wait(), 0.5)
        except TimeoutError:
            pass
        if any(os.waitpid(pid, os.WNOHANG)[0] for pid in workers):
            print("upstream: a worker died; stopping", file=sys.stderr)
            code = 1
            break
    if task is not None:
        task.cancel()
    return code


def run_processes(sock: socket.socket, args: argparse.Namespace) -> int:
    """Fork the workers on ``sock``, serve the status page, stop them on SIGTERM."""
    tally = Tally(args.processes)
    workers = []
    for slot in range(args.processes):
        pid = os.fork()
        if pid == 0:
            _worker(sock, args, tally, slot)
        workers.append(pid)
    sock.close()  # the workers hold it
    try:
        code = asyncio.run(_master(workers, args, tally))
    finally:
        for pid in workers:
            try:
                os.kill(pid, signal.SIGTERM)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        if args.status_socket and os.path.exists(args.status_socket):
            os.unlink(args.status_socket)
    return code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perfkit.run.upstream",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True, help="TCP port on 127.0.0.1")
    parser.add_argument("--delay-ms", type=int, default=10, help="default delay (ms)")
    parser.add_argument("--slow-ms", type=int, default=3000, help="delay of /slow (ms)")
    parser.add_argument("--backlog", type=int, default=BACKLOG,
                        help=f"listen backlog (default {BACKLOG}; capped at somaxconn)")
    parser.add_argument("--processes", type=int, default=None,
                        help="processes sharing the socket (default: one per usable core)")
    parser.add_argument("--status-socket", help="unix socket of the status page (counters)")
    parser.add_argument("--daemon", action="store_true", help="fork into the background")
    parser.add_argument("--pid-file", help="where --daemon writes the master's pid")
    parser.add_argument("--log-file", help="stdout/stderr of the daemon (default: discarded)")
    args = parser.parse_args(argv)
    if args.daemon and not args.pid_file:
        parser.error("--daemon needs --pid-file")
    if args.backlog < 1 or (args.processes is not None and args.processes < 1):
        parser.error("--backlog and --processes must be >= 1")
    args.processes = args.processes or usable_cores()
    try:
        sock = bind(args.port, args.backlog)
    except OSError as exc:
        print(f"upstream: cannot listen on {HOST}:{args.port}: {exc}", file=sys.stderr)
        return 1
    if args.daemon:
        _daemonize(args.pid_file, args.log_file)
    try:
        return run_processes(sock, args)
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
