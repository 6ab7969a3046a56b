"""Where a run's CPU went, from /proc: by kind of process, and how busy the machine was.

On this 2-core machine the bots, the workers and PostgreSQL share the cores, so a throughput
figure alone cannot say whether the arena is slow or simply has less CPU than the baseline.
``Sampler`` snapshots the CPU seconds of every process (by kind: which cmdline it has) and of
the machine, before and after a run; ``Usage.per`` divides them by the run's turns.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")

# A process's kind, by the first of these its command line contains.
KINDS: Mapping[str, str] = {
    "bots.serve": "bots",
    "celery": "workers",
    "gunicorn": "web",
    "postgres": "postgres",
    "redis-server": "redis",
}


def _kind(pid: str) -> str | None:
    if int(pid) == os.getpid():
        return "bench"
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return None
    return next((kind for marker, kind in KINDS.items() if marker in cmdline), None)


def _process_seconds(pid: str) -> float:
    """User + system CPU seconds of one process and of its children that have ended (and
    that it waited for): a PostgreSQL backend whose connection closed during a run is gone
    by the second snapshot, and only the postmaster's count of its reaped children still
    holds its CPU. (Before, such backends were left out: PostgreSQL's figure under the arena
    bench was 0.00 ms per bot turn.) Living children are counted on their own."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    # utime, stime, cutime, cstime: fields 14 to 17 of proc(5)
    return sum(int(f) for f in fields[11:15]) / TICKS


def snapshot() -> tuple[dict[str, float], float, float]:
    """CPU seconds by kind (processes alive now), the machine's busy and total seconds."""
    by_kind: dict[str, float] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (kind := _kind(entry)) is not None:
            by_kind[kind] = by_kind.get(kind, 0.0) + _process_seconds(entry)
    ticks = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = ticks[3] + ticks[4]  # idle, iowait
    return by_kind, (sum(ticks) - idle) / TICKS, sum(ticks) / TICKS


@dataclass
class Usage:
    by_kind: dict[str, float]
    busy: float  # the machine's busy share over the run, 0..1

    def per(self, count: int, unit: str) -> str:
        """'cpu per <unit>: bots 0.41 ms, workers 0.52 ms, ...; machine 97% busy'."""
        parts = ", ".join(f"{kind} {seconds * 1000 / max(count, 1):.2f} ms"
                          for kind, seconds in sorted(self.by_kind.items(), key=lambda x: -x[1])
                          if seconds > 0)
        return f"cpu per {unit}: {parts}; machine {self.busy:.0%} busy"


class Sampler:
    """``with Sampler() as cpu: ...`` then ``cpu.usage``. A process that ends inside the run
    counts through its parent (``_process_seconds``: the children it reaped), of the parent's
    kind: a PostgreSQL backend through the postmaster, a pool child through its worker."""

    def __enter__(self) -> Sampler:
        self._before = snapshot()
        return self

    def __exit__(self, *_: object) -> None:
        after = snapshot()
        kinds = set(self._before[0]) | set(after[0])
        # A process that started during the run counts from zero: its whole CPU is the run's.
        by_kind = {k: max(0.0, after[0].get(k, 0.0) - self._before[0].get(k, 0.0))
                   for k in kinds}
        busy = (after[1] - self._before[1]) / max(after[2] - self._before[2], 1e-9)
        self.usage = Usage(by_kind, busy)


def combined(usages: list[Usage]) -> Usage:
    """Several runs of one load (alternating with another) as one: CPU seconds added, the
    machine's busy share averaged."""
    by_kind: dict[str, float] = {}
    for usage in usages:
        for kind, seconds in usage.by_kind.items():
            by_kind[kind] = by_kind.get(kind, 0.0) + seconds
    return Usage(by_kind, sum(u.busy for u in usages) / max(len(usages), 1))
