"""The web table in a real browser: headless Chromium driven by Selenium plays a whole game
of each game as a person would, by clicking legal actions against bots, checks the final
table against the engine's result (the game's moves replayed on a fresh simulator), opens
the page again midway (the game continues), watches bots step by step and live, reopens a
saved game log and replays it, and takes a screenshot of each table.

Needs the ``selenium`` package (the ``dev`` extra) and Chromium with its driver (Debian:
``apt-get install chromium chromium-driver``; .ci/run installs them where it can); skipped
with the reason otherwise. ``STARTUPS_WEB_SCREENSHOTS=DIR`` also writes the screenshots
of the README there (``web_<game>.png``)."""

from __future__ import annotations

import json
import os
import shutil
import threading

import numpy as np
import pytest

from startups_env.agents.play import web_bot_names
from startups_env.agents.registry import make_agent
from startups_env.tools.web import WebTable, make_server

webdriver = pytest.importorskip("selenium.webdriver", reason="the browser tests need selenium (the dev extra)")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

CHROMIUM = next((path for name in ("chromium", "chromium-browser", "google-chrome") if (path := shutil.which(name))),
                None)
CHROMEDRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(CHROMIUM is None or CHROMEDRIVER is None,
                                reason="the browser tests need Chromium and chromedriver on PATH "
                                       "(Debian: apt-get install chromium chromium-driver)")
#: Each game's table for the test: its fastest bots, three seats.
TABLES = {"startups": ("greedy", 3), "startap": ("random", 3)}
TIMEOUT = 30


@pytest.fixture(scope="module")
def server():
    table = WebTable(make_bot=lambda spec, seed, game, players: make_agent(spec, seed=seed, game=game),
                     bot_names=web_bot_names)
    httpd = make_server(table, "127.0.0.1", 0)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield table, f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--window-size=1280,900"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path=CHROMEDRIVER), options=options)
    yield driver
    driver.quit()


def _moves(driver) -> int:
    return int(driver.find_element(By.TAG_NAME, "body").get_attribute("data-moves"))


def _settled(driver, before: int | None = None):
    """Wait until no request is in flight (and the moves shown changed from ``before``)."""
    def ready(d):
        body = d.find_element(By.TAG_NAME, "body")
        error = d.find_element(By.ID, "error")
        assert not error.is_displayed(), error.text
        return body.get_attribute("data-busy") == "0" and (before is None or _moves(d) != before)
    WebDriverWait(driver, TIMEOUT, poll_frequency=0.02).until(ready)


def _start(driver, url, game: str, seat: str, bots: str, players: int, seed: int):
    driver.get(url)
    _settled(driver)
    if driver.find_element(By.ID, "setup").get_attribute("hidden") is not None:
        driver.find_element(By.ID, "new-game").click()
    Select(driver.find_element(By.ID, "game")).select_by_value(game)
    driver.execute_script("const p = document.getElementById('players'); p.value = arguments[0];"
                          "p.dispatchEvent(new Event('change'))", players)
    Select(driver.find_element(By.ID, "seat")).select_by_value(seat)
    for field, value in (("bots", bots), ("seed", str(seed))):
        box = driver.find_element(By.ID, field)
        box.clear()
        box.send_keys(value)
    driver.find_element(By.ID, "start").click()
    _settled(driver, -1)


def _click_a_legal_action(driver, rng) -> None:
    buttons = driver.find_elements(By.CSS_SELECTOR, "#actions button.action")
    assert buttons, "the person's turn shows no legal action"
    quick = [b for b in buttons if b.text in ("done", "pass / refuse")]
    choice = quick[0] if quick and rng.random() < 0.7 else buttons[int(rng.integers(len(buttons)))]
    before = _moves(driver)
    choice.click()
    _settled(driver, before)


def _engine_result(table: WebTable, session: str) -> tuple[dict, str]:
    """The game's moves replayed on a fresh simulator: the engine's result and the final
    table as the person's seat sees it."""
    web = table.sessions[session][0]
    sim = web.game.make_simulator(web.rules, 1, None, web.decks)
    for action in web.actions:
        sim.step(np.array([action]))
    assert sim.done[0]
    out = web.game.outcome(sim.state)
    n = web.players
    return ({"scores": out["scores"][0, :n].tolist(), "ranks": out["ranks"][0, :n].tolist()},
            web.game.render_text(sim.state, 0, web.seat))


def _screenshot(driver, tmp_path, name: str) -> None:
    path = tmp_path / name
    assert driver.save_screenshot(str(path)) and path.stat().st_size > 10_000
    folder = os.environ.get("STARTUPS_WEB_SCREENSHOTS")
    if folder:
        shutil.copyfile(path, os.path.join(folder, name))


@pytest.mark.parametrize("game", sorted(TABLES))
def test_a_person_plays_a_whole_game_in_the_browser(server, browser, game, tmp_path):
    table, url = server
    bots, players = TABLES[game]
    rng = np.random.default_rng(7)
    _start(browser, url, game, "0", bots, players, seed=11)
    clicks = 0
    while browser.find_element(By.ID, "result").get_attribute("hidden") is not None:
        _click_a_legal_action(browser, rng)
        clicks += 1
        if clicks == 4:  # the page closed and opened again: the same game goes on
            shown = _moves(browser)
            _screenshot(browser, tmp_path, f"web_{game}.png")
            browser.get(url)
            _settled(browser)
            assert _moves(browser) == shown and browser.find_elements(By.CSS_SELECTOR, "#actions button.action")
            assert not browser.find_element(By.ID, "save").is_displayed()  # a log holds every hand
    session = browser.execute_script("return localStorage.getItem('startups-web-session')")
    result, final_table = _engine_result(table, session)
    rows = browser.find_elements(By.CSS_SELECTOR, "#result-table tr[data-seat]")
    assert [int(r.get_attribute("data-score")) for r in rows] == result["scores"]
    assert [int(r.get_attribute("data-rank")) for r in rows] == result["ranks"]
    assert browser.find_element(By.ID, "table").text == final_table.rstrip("\n")
    assert clicks > 4 and browser.find_element(By.ID, "save").is_displayed()
    _screenshot(browser, tmp_path, f"web_{game}_over.png")


def test_bots_are_watched_step_by_step_and_live(server, browser):
    _table, url = server
    _start(browser, url, "startap", "watch", "random,builder,random", 3, seed=4)
    assert _moves(browser) == 0 and browser.find_element(By.ID, "watch").is_displayed()
    for expected in (1, 2):
        browser.find_element(By.ID, "step").click()
        _settled(browser, expected - 1)
        assert _moves(browser) == expected
    browser.execute_script("const s = document.getElementById('speed'); s.value = 50;"
                           "s.dispatchEvent(new Event('input'))")
    browser.find_element(By.ID, "live").click()
    WebDriverWait(browser, TIMEOUT, poll_frequency=0.05).until(lambda d: _moves(d) >= 12)
    browser.find_element(By.ID, "live").click()  # pause
    _settled(browser)
    paused = _moves(browser)
    WebDriverWait(browser, 1, poll_frequency=0.2).until(lambda d: True)
    assert _moves(browser) == paused
    log = browser.find_elements(By.CSS_SELECTOR, "#log li")
    assert len(log) == min(paused, 40) and "P" in log[0].text


def test_a_saved_game_reopens_on_the_page_and_replays(server, browser, tmp_path):
    table, url = server
    _start(browser, url, "startap", "watch", "random", 3, seed=9)
    session = browser.execute_script("return localStorage.getItem('startups-web-session')")
    web = table.sessions[session][0]
    web.advance(20000)
    path = tmp_path / "game.json"
    path.write_text(json.dumps(web.record()))
    browser.find_element(By.ID, "new-game").click()
    browser.find_element(By.ID, "open-log").send_keys(str(path))
    _settled(browser, -1)
    assert _moves(browser) == 0 and "replay" in browser.find_element(By.ID, "title").text
    for expected in (1, 2):
        browser.find_element(By.ID, "step").click()
        _settled(browser, expected - 1)
    lines = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#log li")]
    assert lines == [f"P{m['seat']} random: {m['move']}" for m in web.moves[:2]]
