"""The rating-history chart: well-formed SVG, self-contained, escaped, any number of points."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta

import pytest

from arena.charts import Point, rating_history_svg

SVG = "{http://www.w3.org/2000/svg}"


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    return root


def assert_self_contained(svg: str) -> None:
    # The only URL is the SVG namespace itself: no links, images, fonts, scripts or styles.
    assert svg.replace('xmlns="http://www.w3.org/2000/svg"', "").count("http") == 0
    assert "href" not in svg
    assert "url(" not in svg
    assert "<script" not in svg
    assert "<style" not in svg


def test_no_points_draw_an_empty_chart_that_says_so() -> None:
    svg = rating_history_svg([])
    root = parse(svg)
    assert_self_contained(svg)
    assert "No rated games yet" in "".join(root.itertext())
    assert root.find(f"{SVG}polyline") is None


def test_one_point_draws_a_dot_without_dividing_by_zero() -> None:
    svg = rating_history_svg([(1, 1500.0)])
    root = parse(svg)
    assert root.find(f"{SVG}circle") is not None
    assert root.find(f"{SVG}polyline") is None
    assert "nan" not in svg and "inf" not in svg


def test_many_points_draw_a_line_with_the_interval_band() -> None:
    points = [Point(i, 1500 + 10 * math.sin(i), 1480 + i, 1520 + i) for i in range(200)]
    svg = rating_history_svg(points, title="alice")
    root = parse(svg)
    assert_self_contained(svg)
    line = root.find(f"{SVG}polyline")
    assert line is not None
    assert len(line.get("points", "").split()) == 200
    assert root.find(f"{SVG}polygon") is not None
    labels = [t.text for t in root.iter(f"{SVG}text")]
    assert "game 0" in labels and "game 199" in labels


def test_flat_ratings_still_get_a_readable_axis() -> None:
    svg = rating_history_svg([(i, 1500.0) for i in range(5)])
    ticks = [t.text for t in parse(svg).iter(f"{SVG}text")]
    assert "1500" in ticks
    assert "nan" not in svg


def test_times_on_the_x_axis_are_labelled_as_dates() -> None:
    start = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
    points = [(start + timedelta(hours=h), 1500 + h) for h in range(10)]
    labels = [t.text for t in parse(rating_history_svg(points)).iter(f"{SVG}text")]
    assert "2026-11-01 12:00" in labels


def test_missing_intervals_are_simply_left_out() -> None:
    svg = rating_history_svg([(0, 1500, math.nan, math.nan), (1, 1510, None, None), (2, 1490)])
    root = parse(svg)
    assert root.find(f"{SVG}polygon") is None
    assert "nan" not in svg


@pytest.mark.parametrize(
    "name", ['<script>alert("x")</script>', "bob & sons", "quote \" and ' apostrophe"]
)
def test_names_are_escaped(name: str) -> None:
    svg = rating_history_svg([(0, 1500), (1, 1516)], title=name)
    root = parse(svg)
    assert_self_contained(svg)
    assert root.find(f"{SVG}title").text == name  # type: ignore[union-attr]
    assert root.get("aria-label") == name
