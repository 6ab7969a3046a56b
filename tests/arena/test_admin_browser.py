"""The admin in a real browser: headless Chromium (Debian's chromium + chromium-driver) driven
by Selenium, as Django tests its own admin, against a live server. It signs in, opens the
leaderboard, a running tournament's page, a bot's Elo chart and a game's move log, and checks
what is shown. With SAVE_SCREENSHOTS=1 it saves each page to docs/screenshots/.

Skipped only where the browser is missing and CI is not set; in CI a missing browser fails."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.arena.admin_fixtures import World, build_world
from tests.conftest import IN_CI

# Debian's packages; elsewhere point these at a Chromium and its matching driver.
CHROMIUM = os.environ.get("CHROMIUM_BIN", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER_BIN", "/usr/bin/chromedriver")
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--no-first-run", "--window-size=1280,900")

COLOURS = {"red": "rgba(215, 38, 0, 1)", "yellow": "rgba(236, 212, 7, 1)",
           "green": "rgba(43, 122, 11, 1)", "blue": "rgba(9, 86, 191, 1)"}

pytestmark = pytest.mark.django_db(transaction=True)


def _browser_missing() -> list[str]:
    return [p for p in (CHROMIUM, CHROMEDRIVER) if not os.access(p, os.X_OK)]


@pytest.fixture
def browser() -> Iterator[Any]:
    missing = _browser_missing()
    if missing:
        message = f"headless Chromium needs {', '.join(missing)} (apt-get install chromium " \
                  "chromium-driver)"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="arena-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.implicitly_wait(5)  # for elements after a navigation, not a timing assertion
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def world(alice: Any, bob: Any, django_user_model: Any, settings: Any, fresh_cache: None
          ) -> World:
    # A cache of the test's own: a running tournament's standings are cached by its id and
    # games done, and another test's tournament of the same id (another xdist worker's
    # database, the same Redis) showed its bots' rows here.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    django_user_model.objects.create_superuser("root", password="root-password-1")
    return build_world(alice, bob)


def _screenshot(driver: Any, name: str) -> None:
    """The whole page, when SAVE_SCREENSHOTS is set (docs/screenshots/<name>.png)."""
    if not os.environ.get("SAVE_SCREENSHOTS"):
        return
    driver.set_window_size(1600, 900)
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1600, min(max(int(height) + 20, 600), 2400))
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(SCREENSHOTS / f"{name}.png"))
    driver.set_window_size(1280, 900)
    driver.execute_script("window.scrollTo(0, 0)")


def _sign_in(driver: Any, base: str) -> None:
    from selenium.webdriver.common.by import By

    driver.get(f"{base}/admin/login/?next=/admin/")
    driver.find_element(By.NAME, "username").send_keys("root")
    driver.find_element(By.NAME, "password").send_keys("root-password-1")
    driver.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    assert driver.find_element(By.ID, "user-tools").text.upper().find("ROOT") >= 0


def test_staff_browse_the_leaderboard_a_running_tournament_a_bot_chart_and_a_game(
    browser: Any, live_server: Any, world: World
) -> None:
    from selenium.webdriver.common.by import By

    base = live_server.url
    _sign_in(browser, base)
    index = browser.find_element(By.ID, "content-main").text
    assert "Ratings" in index and "Tournaments" in index

    # The leaderboard: best Elo first, the interval, latency and strikes in their columns.
    browser.get(f"{base}/admin/arena/rating/")
    assert "Leaderboard: Elo, official rules" in browser.find_element(By.TAG_NAME, "h1").text
    rows = browser.find_elements(By.CSS_SELECTOR, "#result_list tbody tr")
    names = [r.find_element(By.CSS_SELECTOR, ".field-bot_link").text for r in rows]
    assert names == ["heuristic", "greedy", "random"]
    first = rows[0]
    assert first.find_element(By.CSS_SELECTOR, ".field-elo_shown").text == "1516"
    assert first.find_element(By.CSS_SELECTOR, ".field-interval_shown").text == "1620 [1540, 1710]"
    assert first.find_element(By.CSS_SELECTOR, ".field-latency_shown").text == "4 / 40"
    assert rows[1].find_element(By.CSS_SELECTOR, ".field-strikes_shown").text == "1"
    # Its eleven columns fit beside the filters in a 1400 px window: no sideways scrolling.
    browser.set_window_size(1400, 900)
    overflow = browser.execute_script(
        "const r = document.querySelector('#changelist .results');"
        "return r.scrollWidth - r.clientWidth;")
    browser.set_window_size(1280, 900)
    assert overflow <= 0
    _screenshot(browser, "leaderboard")

    # A running tournament: its progress bar, standings, games and the cancel button.
    browser.get(f"{base}/admin/arena/tournament/{world.running.pk}/change/")
    bar = browser.find_element(By.ID, "tournament-progress")
    assert (bar.get_attribute("value"), bar.get_attribute("max")) == ("2", "6")
    assert "2 of 6 games, 1 of 3 matches done" in browser.page_source
    standings = browser.find_elements(By.CSS_SELECTOR, "#standings tbody tr")
    # One win each: the points of the two seeded games so far decide (greedy's win scored more).
    assert [r.find_elements(By.TAG_NAME, "td")[1].text for r in standings] == [
        "greedy", "heuristic", "random"]
    links = browser.find_elements(By.CSS_SELECTOR, "a.tournament-game")
    assert len(links) == 2
    assert browser.find_element(By.ID, "tournament-cancel").is_displayed()
    _screenshot(browser, "tournament")

    # A bot's page: the Elo chart is an inline SVG with a line through its games.
    browser.get(f"{base}/admin/bots/bot/{world.bots['heuristic'].pk}/change/")
    chart = browser.find_element(By.CSS_SELECTOR, "figure.arena-chart svg")
    line = chart.find_element(By.TAG_NAME, "polyline")
    assert len(line.get_attribute("points").split()) == 5  # the start, then 4 rated games
    assert chart.size["width"] > 300 and chart.size["height"] > 100
    assert len(browser.find_elements(By.CSS_SELECTOR, "#recent-games tbody tr")) == 4
    _screenshot(browser, "bot")

    # A game's page (from the tournament's games): the move log with cards in their colours.
    browser.get(f"{base}/admin/games/game/{world.games[2].pk}/change/")
    moves = browser.find_elements(By.CSS_SELECTOR, "#move-log tbody tr")
    assert len(moves) == world.games[2].moves.count()
    players = {r.find_elements(By.TAG_NAME, "td")[2].text for r in moves}
    assert players == {"bot:heuristic", "bot:greedy"}
    shown = 0
    for colour, rgb in COLOURS.items():  # the stylesheet is served and paints each chip
        for chip in browser.find_elements(By.CSS_SELECTOR, f".uno-card.uno-{colour}")[:3]:
            assert chip.value_of_css_property("background-color") == rgb
            title = chip.get_attribute("title")  # its name, as text too: a card's or a chosen
            assert title.startswith((colour, f"colour {colour}"))  # colour's ("colour blue")
            shown += 1
    assert shown, "a finished game plays coloured cards"
    assert browser.find_element(By.ID, "replay-download").get_attribute("href").endswith(
        f"/admin/games/game/{world.games[2].pk}/replay.json")
    _screenshot(browser, "game")


def test_staff_add_a_tournament_from_the_list_and_land_on_its_page(
    browser: Any, live_server: Any, world: World
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from arena.models import Tournament

    base = live_server.url
    _sign_in(browser, base)
    browser.get(f"{base}/admin/arena/tournament/")
    browser.find_element(By.CSS_SELECTOR, "a.addlink").click()
    WebDriverWait(browser, 30).until(lambda b: b.current_url.endswith("/add/"))
    assert "Add tournament" in browser.find_element(By.TAG_NAME, "h1").text
    browser.find_element(By.NAME, "name").send_keys("Friday cup")
    options = browser.find_element(By.NAME, "options")
    options.clear()
    options.send_keys('{"stacking": true}')
    games = browser.find_element(By.NAME, "games_per_pairing")
    games.clear()
    games.send_keys("4")
    _screenshot(browser, "tournament-add")
    browser.find_element(By.NAME, "_save").click()
    # The click only sends the form: wait for the page it lands on before reading the table.
    WebDriverWait(browser, 30).until(lambda b: b.current_url.endswith("/change/"))

    added = Tournament.objects.get(name="Friday cup")
    assert browser.current_url.endswith(f"/admin/arena/tournament/{added.pk}/change/")
    assert "Created Friday cup" in browser.find_element(By.CSS_SELECTOR, "ul.messagelist").text
    assert browser.find_element(By.ID, "tournament-start").is_displayed()  # a draft
    assert added.options["stacking"] is True and added.games_per_pairing == 4
