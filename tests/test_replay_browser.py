"""The replay viewer (pcr_env/replay_viewer.html) in a real browser: headless Chromium driven by Selenium.

Records come from a short duplicate evaluation; the page is opened from ``file://`` (no server),
stepped forwards and backwards with the buttons and the arrow keys, and what it shows (the trick on
the table, its winner, the hands, the score) is compared with the JSON record. Screenshots are
saved to ``$PCR_ARTIFACTS`` (default ``artifacts/`` at the repository root) for CI to keep.

Needs Debian's ``chromium`` and ``chromium-driver`` (``/usr/bin/chromium``, ``/usr/bin/chromedriver``;
other paths via ``PCR_CHROMIUM`` / ``PCR_CHROMEDRIVER``) and the ``browser`` extra (selenium).
Without them the tests skip with the reason, except in CI (``CI=true``), where they fail: CI
cannot pass by silently skipping the browser.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import IN_CI

from agents import evaluation as ev
from pcr_env import replay as R

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("PCR_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("PCR_CHROMEDRIVER", "/usr/bin/chromedriver")
# Flags for a closed network, as root, with no display: nothing is fetched, nothing is synced.
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage", "--window-size=1280,860", "--hide-scrollbars"]


def artifacts_dir() -> Path:
    path = Path(os.environ.get("PCR_ARTIFACTS") or ROOT / "artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path


def _missing() -> list[str]:
    missing = []
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("the Python package selenium (pip install -e '.[browser]')")
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            missing.append(f"{path} (apt-get install -y {package})")
    return missing


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    missing = _missing()
    if missing:
        reason = "browser test needs " + "; ".join(missing)
        if IN_CI:
            pytest.fail(reason + " -- CI=true, so this is a failure, not a skip (see .ci/run)", pytrace=False)
        pytest.skip(reason)
    drv = start_chromium(tmp_path_factory)
    yield drv
    drv.quit()


def start_chromium(tmp_path_factory):
    """Headless Debian chromium through its own chromedriver, browser console kept, 30 s page and script limits."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # An explicit chromedriver: Selenium Manager then has nothing to download.
    service = Service(executable_path=CHROMEDRIVER, log_output=str(tmp_path_factory.mktemp("chromedriver") / "log.txt"))
    drv = webdriver.Chrome(service=service, options=options)
    drv.set_page_load_timeout(30)
    drv.set_script_timeout(30)
    return drv


@pytest.fixture(scope="module")
def replays(tmp_path_factory):
    """Both tables of one duplicate deal (heuristic vs random) plus a six-player deal, written as a replay directory."""
    four = ev.evaluate(["heuristic", "random"], deals=1, seed=3, progress=False, record_deals=1)
    six = ev.evaluate(["heuristic", "greedy"], deals=1, seed=5, progress=False, record_deals=1, rules={"players": 6})
    records = four.replays + six.replays[:1]
    out = tmp_path_factory.mktemp("replays")
    R.write_replays(records, out, names=["four-A", "four-B", "six-A"])
    return out, records


# ------------------------------------------------------------------- helpers
def step_index(record: dict, rnd: int, trick: int, pos: int) -> int:
    """0-based viewer step at which card ``pos`` of ``trick`` is on the table (the viewer's step order:
    deal, a pass per seat and the exchange, each bid, trump, the discards, each card, the result)."""
    r = record["rounds"][rnd]
    k = 1 + (len(r["passes"]["picks"]) + 1 if r["passes"] else 0) + len(r["bids"]) + 1 + (1 if r["discards"] else 0)
    return k + trick * record["players"] + pos


def result_step(record: dict, rnd: int = 0) -> int:
    return step_index(record, rnd, len(record["rounds"][rnd]["tricks"]), 0)


def current_step(driver) -> int:
    label = driver.find_element("id", "step-label").text  # "step k / N"
    return int(label.split()[1]) - 1


def press(driver, key: str, times: int = 1) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    chain = ActionChains(driver)
    for _ in range(times):
        chain.send_keys(key)
    chain.perform()


def table_cards(driver) -> dict[int, str]:
    return {int(el.get_attribute("data-seat")): el.get_attribute("data-card")
            for el in driver.find_elements("css selector", "#table .card")}


def winner_seat(driver) -> int | None:
    found = driver.find_elements("css selector", "#table .card.winner")
    assert len(found) <= 1
    return int(found[0].get_attribute("data-seat")) if found else None


def hand(driver, seat: int) -> set[str]:
    return {el.get_attribute("data-card")
            for el in driver.find_elements("css selector", f'.seat[data-seat="{seat}"] [data-card]')}


def no_js_errors(driver) -> None:
    errors = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
    assert not errors, errors


def screenshot(driver, name: str) -> Path:
    path = artifacts_dir() / name
    driver.save_screenshot(str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return path


def check_trick(driver, record: dict, trick: int) -> None:
    """The table shows every card of ``trick`` by seat, the winner highlighted; score and run agree."""
    t = record["rounds"][0]["tricks"][trick]
    assert table_cards(driver) == {p["seat"]: p["card"] for p in t["plays"]}
    assert winner_seat(driver) == t["winner"]
    assert f"Seat {t['winner']} wins the trick" in driver.find_element("id", "caption").text
    won = [0, 0]
    for done in record["rounds"][0]["tricks"][:trick + 1]:
        won[done["team"]] += 1
    assert [int(driver.find_element("id", f"tricks-{k}").text) for k in (0, 1)] == won
    run = 0
    for done in reversed(record["rounds"][0]["tricks"][:trick + 1]):
        if done["team"] != t["team"]:
            break
        run += 1
    box = driver.find_element("id", "run")
    assert (int(box.get_attribute("data-team")), int(box.get_attribute("data-length"))) == (t["team"], run)
    for p in t["plays"]:  # played cards have left the hands
        assert p["card"] not in hand(driver, p["seat"])


# --------------------------------------------------------------------- tests
def test_step_through_a_deal_forwards_and_backwards(driver, replays):
    out, records = replays
    record = records[0]
    driver.get((out / "index.html").as_uri())
    assert current_step(driver) == 0
    assert "deals" in driver.find_element("id", "caption").text
    r0 = record["rounds"][0]
    for seat in range(4):  # the dealt hands, before passing
        assert hand(driver, seat) == set(r0["hands"][seat])
    assert table_cards(driver) == {}

    # Forwards with the arrow key to the end of trick 3.
    target = step_index(record, 0, 2, 3)
    press(driver, "\ue014", target)  # ArrowRight
    assert current_step(driver) == target
    check_trick(driver, record, 2)
    shot = screenshot(driver, "replay_viewer_trick.png")
    # One more card: trick 4 has begun, only its lead is on the table and nobody has won it yet.
    driver.find_element("id", "next").click()
    lead = r0["tricks"][3]["plays"][0]
    assert table_cards(driver) == {lead["seat"]: lead["card"]} and winner_seat(driver) is None
    # Backwards (key, then button and forwards again): the finished trick 3 is back.
    press(driver, "\ue012")  # ArrowLeft
    check_trick(driver, record, 2)
    driver.find_element("id", "prev").click()
    assert current_step(driver) == target - 1 and winner_seat(driver) is None
    driver.find_element("id", "next").click()
    check_trick(driver, record, 2)

    # The last step: the round's score as recorded.
    driver.find_element("id", "last").click()
    res = r0["result"]
    assert current_step(driver) == result_step(record)
    for k in (0, 1):
        assert int(driver.find_element("id", f"round-{k}").text) == res["scores"][k]
        assert int(driver.find_element("id", f"total-{k}").text) == res["totals"][k]
        assert int(driver.find_element("id", f"tricks-{k}").text) == res["tricks"][k]
    caption = driver.find_element("id", "caption").text
    assert ("contract made" if res["made"] else "contract failed") in caption
    assert f"bid {r0['contract']}" in caption
    assert driver.find_element("id", "next").get_attribute("disabled") is not None
    screenshot(driver, "replay_viewer_result.png")
    # Back one step: the last trick, winner highlighted.
    press(driver, "\ue012")
    check_trick(driver, record, len(r0["tricks"]) - 1)
    # Home: the deal again.
    press(driver, "\ue011")  # Home
    assert current_step(driver) == 0 and table_cards(driver) == {}
    no_js_errors(driver)
    assert shot.stat().st_size > 10_000


def test_passing_bidding_and_the_duplicate_table(driver, replays):
    out, records = replays
    driver.get((out / "index.html").as_uri())
    r0 = records[0]["rounds"][0]
    passes = r0["passes"]
    assert passes is not None  # deal 0 is round 1: passing to the partner
    first = (r0["dealer"] + 1) % 4
    press(driver, "\ue014")  # the first seat to pass picks its cards
    picked = {el.get_attribute("data-card") for el in
              driver.find_elements("css selector", f'.seat[data-seat="{first}"] .picked')}
    assert picked == set(passes["picks"][first])
    press(driver, "\ue014", 4)  # the exchange: received cards are in the hands
    for seat in range(4):
        assert hand(driver, seat) == (set(r0["hands"][seat]) - set(passes["picks"][seat])) | set(passes["received"][seat])
        received = {el.get_attribute("data-card") for el in driver.find_elements("css selector", f'.seat[data-seat="{seat}"] .recv')}
        assert received == set(passes["received"][seat])
    press(driver, "\ue014", len(r0["bids"]) + 1)  # every bid, then trump
    assert f"Contract {r0['contract']}" in driver.find_element("id", "contract").text
    assert {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}[r0["trump"]] in driver.find_element("id", "trump-chip").text

    # Down arrow: table B of the same deal, the other agent at the even seats, the same cards.
    press(driver, "\ue015")  # ArrowDown
    assert driver.find_element("id", "game-select").get_attribute("value") == "1"
    assert current_step(driver) == 0
    b = records[1]
    assert b["seats"][0]["agent"] == records[0]["seats"][1]["agent"]
    for seat in range(4):
        assert hand(driver, seat) == set(b["rounds"][0]["hands"][seat])
    no_js_errors(driver)


def test_six_player_table(driver, replays):
    out, records = replays
    record = records[2]
    driver.get((out / "index.html").as_uri() + "#g=2&r=0&s=0")
    assert driver.find_element("id", "game-select").get_attribute("value") == "2"
    assert len(driver.find_elements("css selector", ".seat")) == 6
    target = step_index(record, 0, 0, 5)
    press(driver, "\ue014", target)
    check_trick(driver, record, 0)
    screenshot(driver, "replay_viewer_six_players.png")
    no_js_errors(driver)


def test_the_page_fetches_nothing(driver, replays):
    """Everything the page uses is inline: the browser loads the one file and nothing else."""
    out, _ = replays
    driver.get((out / "index.html").as_uri())
    urls = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert urls == []
    # The page still works when the records are opened from a copy elsewhere (no sibling files needed).
    lone = out.parent / "lone"
    lone.mkdir(exist_ok=True)
    shutil.copy(out / "index.html", lone / "viewer.html")
    driver.get((lone / "viewer.html").as_uri())
    assert len(json.loads(driver.execute_script("return document.getElementById('pcr-data').textContent"))["records"]) == 3
    assert current_step(driver) == 0
    no_js_errors(driver)
