"""Benchmark: what open streams cost one web worker process (threads, memory, time to open).

Run: ``python bench/streams.py [--streams 1000] [--users 100]``. PostgreSQL as bench/api.py
finds or starts it; one gunicorn worker as compose runs it (``arena.asgi``, uvicorn). It opens
``streams`` raw ``GET /api/stream/`` connections from ``users`` users (under the per-user cap),
waits for each one's ``200``, and reads the worker's thread count and resident memory from
/proc before, while they are open, and after they are closed.

The last line is exactly ``streams: N open in S s; worker threads T (T0 before); RSS +M MB,
K kB a stream``.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.api import gunicorn, postgres, prepare, server_environment


def threads_and_rss(pid: str) -> tuple[int, int]:
    """(threads, resident kB) of process ``pid``."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text()
                  .splitlines() if ":" in line)
    return int(fields["Threads"]), int(fields["VmRSS"].split()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--users", type=int, default=100, help="at most 16 streams a user")
    args = parser.parse_args()
    with postgres() as database_url:
        env = server_environment(database_url)
        keys = prepare(env, args.users)
        with gunicorn(env, 1, 4, "asgi") as port:
            time.sleep(2)  # the worker up, its imports done
            found = subprocess.run(["pgrep", "-f", f"bind=127.0.0.1:{port} "],
                                   capture_output=True, text=True, check=True).stdout.split()
            worker = max(found, key=int)  # the master's child
            threads0, rss0 = threads_and_rss(worker)
            print(f"before: {threads0} threads, RSS {rss0 // 1024} MB")
            started = time.perf_counter()
            sockets = []
            for i in range(args.streams):
                sock = socket.create_connection(("127.0.0.1", port))
                sock.sendall(f"GET /api/stream/ HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: "
                             f"Token {keys[i % len(keys)]}\r\n\r\n".encode())
                sockets.append(sock)
            for sock in sockets:
                sock.settimeout(60)
                head = sock.recv(64)
                assert head.startswith(b"HTTP/1.1 200"), head
            opened = time.perf_counter() - started
            time.sleep(2)
            threads, rss = threads_and_rss(worker)
            print(f"open: {threads} threads, RSS {rss // 1024} MB")
            for sock in sockets:
                sock.close()
            time.sleep(3)
            after, rss_after = threads_and_rss(worker)
            print(f"closed: {after} threads, RSS {rss_after // 1024} MB")
    grown = rss - rss0
    print(f"streams: {args.streams} open in {opened:.2f} s; worker threads {threads} "
          f"({threads0} before); RSS +{grown // 1024} MB, {grown / args.streams:.0f} kB a stream")


if __name__ == "__main__":
    main()
