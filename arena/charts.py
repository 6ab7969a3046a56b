"""Server-side SVG charts, with no scripts, styles sheets or any external reference.

Pure Python, no Django: the page embeds the returned string as it is (it is well-formed XML,
every text escaped).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from xml.sax.saxutils import escape, quoteattr

WIDTH = 640
HEIGHT = 280
_LEFT, _RIGHT, _TOP, _BOTTOM = 56, 16, 28, 36  # plot margins: room for the axis labels
_LINE = "#1f6feb"
_BAND = "#1f6feb"
_GRID = "#d0d7de"
_TEXT = "#24292f"


@dataclass(frozen=True, slots=True)
class Point:
    """One rating: ``x`` a game number or a time, ``low``/``high`` an optional interval."""

    x: int | float | datetime | date
    rating: float
    low: float | None = None
    high: float | None = None


PointLike = Point | tuple[object, ...]


def rating_history_svg(
    points: Sequence[PointLike], *, title: str = "", width: int = WIDTH, height: int = HEIGHT
) -> str:
    """A line chart of a rating over games (or time), with its interval as a shaded band.

    ``points`` are ``Point``s or tuples ``(x, rating[, low, high])``, in any order (they are
    sorted by ``x``). Zero points draw an empty frame saying so; one point draws a dot.
    """
    data = sorted((_point(p) for p in points), key=lambda p: _number(p.x))
    body: list[str] = []
    if title:
        body.append(_text(width / 2, 18, title, anchor="middle", weight="bold"))
    if not data:
        body.append(_text(width / 2, height / 2, "No rated games yet", anchor="middle"))
        return _svg(width, height, title, body)
    xs = [_number(p.x) for p in data]
    ys = [v for p in data for v in (p.rating, p.low, p.high) if v is not None]
    frame = _Frame(width, height, _padded(min(xs), max(xs), 0.0), _padded(min(ys), max(ys), 10.0))
    body.extend(frame.y_axis())
    body.extend(frame.x_axis(data))
    body.extend(_band(frame, data))
    coords = [(frame.x(_number(p.x)), frame.y(p.rating)) for p in data]
    if len(coords) > 1:
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in coords)
        body.append(f'<polyline points="{path}" fill="none" stroke="{_LINE}" stroke-width="2"/>')
    last_x, last_y = coords[-1]
    body.append(f'<circle cx="{last_x:.1f}" cy="{last_y:.1f}" r="3.5" fill="{_LINE}"/>')
    return _svg(width, height, title, body)


def _point(raw: PointLike) -> Point:
    if isinstance(raw, Point):
        return raw
    x, rating, *rest = raw
    low = rest[0] if len(rest) > 0 else None
    high = rest[1] if len(rest) > 1 else None
    return Point(x, float(rating), _optional(low), _optional(high))  # type: ignore[arg-type]


def _optional(value: object) -> float | None:
    if value is None:
        return None
    number = float(value)  # type: ignore[arg-type]
    return None if math.isnan(number) else number


def _number(x: object) -> float:
    if isinstance(x, datetime):
        return x.timestamp()
    if isinstance(x, date):
        return float(x.toordinal())
    return float(x)  # type: ignore[arg-type]


def _padded(low: float, high: float, minimum_span: float) -> tuple[float, float]:
    """The range to draw: a single value gets a span around it, so nothing divides by zero."""
    span = high - low
    if span <= minimum_span:
        middle = (low + high) / 2
        half = max(minimum_span, 1.0) / 2
        return middle - half, middle + half
    return low - span * 0.05, high + span * 0.05


class _Frame:
    def __init__(
        self, width: int, height: int, xr: tuple[float, float], yr: tuple[float, float]
    ) -> None:
        self.width, self.height = width, height
        self.xr, self.yr = xr, yr

    def x(self, value: float) -> float:
        lo, hi = self.xr
        return _LEFT + (value - lo) / (hi - lo) * (self.width - _LEFT - _RIGHT)

    def y(self, value: float) -> float:
        lo, hi = self.yr
        return self.height - _BOTTOM - (value - lo) / (hi - lo) * (self.height - _TOP - _BOTTOM)

    def y_axis(self) -> list[str]:
        out = []
        for tick in _ticks(*self.yr):
            y = self.y(tick)
            out.append(
                f'<line x1="{_LEFT}" x2="{self.width - _RIGHT}" y1="{y:.1f}" y2="{y:.1f}"'
                f' stroke="{_GRID}" stroke-width="1"/>'
            )
            out.append(_text(_LEFT - 6, y + 4, f"{tick:g}", anchor="end"))
        return out

    def x_axis(self, data: list[Point]) -> list[str]:
        base = self.height - _BOTTOM
        out = [
            f'<line x1="{_LEFT}" x2="{self.width - _RIGHT}" y1="{base}" y2="{base}"'
            f' stroke="{_TEXT}" stroke-width="1"/>'
        ]
        first, last = data[0].x, data[-1].x
        labels = [(first, "start")] if first == last else [(first, "start"), (last, "end")]
        for value, anchor in labels:
            out.append(_text(self.x(_number(value)), base + 18, _label(value), anchor=anchor))
        return out


def _ticks(low: float, high: float, wanted: int = 5) -> list[float]:
    """Round-numbered ticks (1, 2 or 5 times a power of ten) inside [low, high]."""
    raw = (high - low) / wanted
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    start = math.ceil(low / step) * step
    count = int((high - start) / step) + 1
    return [start + i * step for i in range(count)]


def _label(value: object) -> str:
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M")
    if isinstance(value, date):
        return value.isoformat()
    return f"game {value:g}" if isinstance(value, int | float) else str(value)


def _band(frame: _Frame, data: list[Point]) -> list[str]:
    """The interval as one shaded polygon (upper edge forward, lower edge back)."""
    known = [p for p in data if p.low is not None and p.high is not None]
    if not known:
        return []
    if len(known) == 1:
        p = known[0]
        x = frame.x(_number(p.x))
        return [
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{frame.y(p.low):.1f}"'  # type: ignore[arg-type]
            f' y2="{frame.y(p.high):.1f}" stroke="{_BAND}" stroke-width="2"'  # type: ignore[arg-type]
            ' stroke-opacity="0.4"/>'
        ]
    upper = [f"{frame.x(_number(p.x)):.1f},{frame.y(p.high):.1f}" for p in known]  # type: ignore[arg-type]
    lower = [f"{frame.x(_number(p.x)):.1f},{frame.y(p.low):.1f}" for p in reversed(known)]  # type: ignore[arg-type]
    return [f'<polygon points="{" ".join(upper + lower)}" fill="{_BAND}" fill-opacity="0.15"/>']


def _text(x: float, y: float, content: str, *, anchor: str = "start", weight: str = "") -> str:
    bold = ' font-weight="bold"' if weight else ""
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{bold}>{escape(content)}</text>'


def _svg(width: int, height: int, title: str, body: list[str]) -> str:
    label = quoteattr(title or "Rating history")
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}"'
        f' viewBox="0 0 {width} {height}" role="img" aria-label={label}'
        f' font-family="sans-serif" font-size="12" fill="{_TEXT}">'
        f"<title>{escape(title or 'Rating history')}</title>" + "".join(body) + "</svg>"
    )
