"""Terminal output of the tournament commands: a live progress bar and plain-text tables."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

BAR_WIDTH = 30
_NUMERIC = re.compile(r"-?[0-9.]+(%|\.\.-?[0-9.]+)?")


def progress_line(progress: Mapping[str, Any]) -> str:
    done, total = int(progress.get("games_done") or 0), int(progress.get("games_total") or 0)
    filled = BAR_WIDTH * done // total if total else 0
    bar = "#" * filled + "." * (BAR_WIDTH - filled)
    eta = progress.get("eta_seconds")
    eta_text = f"  about {eta:.0f}s left" if isinstance(eta, int | float) else ""
    return (f"[{bar}] {done}/{total} games  {progress.get('matches_done', 0)}/"
            f"{progress.get('matches_total', 0)} matches{eta_text}")


class ProgressBar:
    """Redrawn in place with ``\\r`` on a terminal; one line per change anywhere else (a log,
    a pipe), so a captured run still shows each step."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.tty = bool(getattr(out, "isatty", lambda: False)())
        self.last = ""
        self.width = 0

    def update(self, progress: Mapping[str, Any]) -> None:
        line = progress_line(progress)
        if line == self.last:
            return
        self.last = line
        if self.tty:
            self.out.write("\r" + line.ljust(self.width))
            self.width = len(line)
        else:
            self.out.write(line + "\n")
        self.out.flush()

    def finish(self) -> None:
        if self.tty and self.last:
            self.out.write("\n")
            self.out.flush()


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain-text table: text columns left-aligned, numbers right-aligned."""
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    numeric = [all(_is_number(row[i]) for row in rows) and bool(rows) for i in range(len(headers))]

    def line(values: Sequence[str]) -> str:
        return "  ".join(v.rjust(w) if num else v.ljust(w)
                         for v, w, num in zip(values, widths, numeric, strict=True)).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]),
                      *(line(r) for r in cells)])


def _is_number(value: Any) -> bool:
    if isinstance(value, str):  # pre-formatted: "62%", "1504..1834", "12.5"
        return bool(_NUMERIC.fullmatch(value))
    return value is None or (isinstance(value, int | float) and not isinstance(value, bool))


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.1f}"
    return str(value)
