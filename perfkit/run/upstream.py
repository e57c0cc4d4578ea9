"""A slow upstream for the testbed's proxy and cache profiles (stdlib only).

An asyncio HTTP/1.1 server with keep-alive on 127.0.0.1 only, like the fixtures'
``upstream_app.py`` (which used gevent):

- ``GET /slow``               -> 200 after ``--slow-ms`` (default 3000 ms);
- ``GET /anything?delay_ms=N`` -> 200 after N ms (0 <= N <= 600000);
- ``GET /anything``           -> 200 after ``--delay-ms`` (default 10 ms).

Every answer has a 1024-byte ``text/plain`` body. HTTP/1.1 connections stay open unless the
client sends ``Connection: close``; HTTP/1.0 ones close unless it sends ``keep-alive``.

Run it as ``python -m perfkit.run.upstream --port N``. With ``--daemon`` it binds first (so a
busy port is reported by the exit status), then forks, writes the child's pid to
``--pid-file`` and returns: the testbed starts it this way, as it starts nginx.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import sys
from urllib.parse import parse_qs, urlsplit

HOST = "127.0.0.1"
BODY = (b"upstream payload " * 64)[:1023] + b"\n"
MAX_DELAY_MS = 600_000
MAX_HEAD_BYTES = 65536


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


def _parse_head(head: bytes) -> tuple[str, str, str, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    method, target, version = lines[0].split(" ")
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    return method, target, version, headers


def _keep_alive(version: str, connection: str) -> bool:
    tokens = {t.strip().lower() for t in connection.split(",")}
    if version == "HTTP/1.1":
        return "close" not in tokens
    return "keep-alive" in tokens


def make_handler(default_ms: int, slow_ms: int):
    """The per-connection coroutine: requests are answered one after another."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                try:
                    method, target, version, headers = _parse_head(head)
                    length = int(headers.get("content-length", "0") or 0)
                except ValueError:
                    writer.write(response(400, False))
                    await writer.drain()
                    return
                if length:
                    await reader.readexactly(length)
                keep = _keep_alive(version, headers.get("connection", ""))
                delay = delay_ms_for(target, default_ms, slow_ms)
                if delay is None:
                    writer.write(response(400, False))
                    await writer.drain()
                    return
                await asyncio.sleep(delay / 1000.0)
                writer.write(response(200, keep, head_only=method == "HEAD"))
                await writer.drain()
                if not keep:
                    return
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            return
        finally:
            writer.close()

    return handle


def bind(port: int, backlog: int = 1024) -> socket.socket:
    """A listening TCP socket on 127.0.0.1:port."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    sock.listen(backlog)
    return sock


async def serve(sock: socket.socket, default_ms: int, slow_ms: int) -> None:
    """Serve forever on an already listening socket."""
    server = await asyncio.start_server(make_handler(default_ms, slow_ms), sock=sock,
                                        limit=MAX_HEAD_BYTES)
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perfkit.run.upstream",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True, help="TCP port on 127.0.0.1")
    parser.add_argument("--delay-ms", type=int, default=10, help="default delay (ms)")
    parser.add_argument("--slow-ms", type=int, default=3000, help="delay of /slow (ms)")
    parser.add_argument("--daemon", action="store_true", help="fork into the background")
    parser.add_argument("--pid-file", help="where --daemon writes the server's pid")
    parser.add_argument("--log-file", help="stdout/stderr of the daemon (default: discarded)")
    args = parser.parse_args(argv)
    if args.daemon and not args.pid_file:
        parser.error("--daemon needs --pid-file")
    try:
        sock = bind(args.port)
    except OSError as exc:
        print(f"upstream: cannot listen on {HOST}:{args.port}: {exc}", file=sys.stderr)
        return 1
    if args.daemon:
        _daemonize(args.pid_file, args.log_file)
    try:
        asyncio.run(serve(sock, args.delay_ms, args.slow_ms))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
