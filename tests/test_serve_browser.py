"""The browser table (python -m agents.serve) in headless Chromium: a person plays a full round by clicking.

A real uvicorn server on a free loopback port, three heuristic agents. The test opens the lobby,
starts a one-round table, clicks legal moves (three pass picks, a bid, trump if it wins the
bidding, every card), reloads the page mid-round and goes on, tries an illegal click and an
illegal move sent with the page's own token (both refused, nothing changed), and checks what the
page shows against the table's record on disk. Screenshots go to ``$PCR_ARTIFACTS``. It needs
what tests/test_replay_browser.py needs (chromium, chromium-driver, selenium: skipped without
them, failed under ``CI=true``) and the ``web`` extra.
"""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest
from conftest import IN_CI
from test_replay_browser import driver, no_js_errors, screenshot  # noqa: F401 (driver is a fixture)

if not IN_CI:  # CI installs the web extra, so there a missing one fails
    pytest.importorskip("uvicorn", reason="the web extra (pip install -e '.[web]')")
    pytest.importorskip("starlette", reason="the web extra (pip install -e '.[web]')")
import uvicorn  # noqa: E402

from agents.web.app import ServeConfig, create_app  # noqa: E402
from pcr_env.replay import validate_record  # noqa: E402

STATE = "const s = window.pcrTable && window.pcrTable.state; return s ? Object.assign({busy: window.pcrTable.busy}, s) : null"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("serve")
    config = ServeConfig(agents=["you", "heuristic", "heuristic", "heuristic"], seed=21, episode="round",
                         tables_dir=root / "tables", records_dir=root / "records")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(create_app(config), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.time() + 20
    while not srv.started:
        assert time.time() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}", root
    srv.should_exit = True
    thread.join(10)


def wait_for(drv, what, timeout=20.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        out = what()
        if out:
            return out
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting; page state: {drv.execute_script(STATE)}")


def my_turn_or_over(drv):
    s = drv.execute_script(STATE)
    if s and not s["busy"] and (s["over"] or s["turn"] == s["seat"]) and drv.find_element("id", "result").is_displayed() == s["over"]:
        return s
    return None


def on_disk(root, tid) -> dict:
    return json.loads((root / "tables" / f"{tid}.json").read_text())


def choose(s) -> int:
    """A bid rather than a pass (so the person bids), else the first legal move."""
    bids = [a for a in s["legal"] if 52 <= a < 65]
    return bids[0] if bids else s["legal"][len(s["legal"]) // 2]


def check_page_against_the_record(drv, s, record):
    """The bids, the hand and the tricks the page shows agree with the record on disk."""
    shown = [el.text for el in drv.find_elements("css selector", "#bids span")]
    rnd = record["rounds"][0] if record["rounds"] else record["unfinished"]
    assert shown == [f"seat {b['seat']}: {'pass' if b['bid'] is None else b['bid']}" for b in rnd["bids"]]
    hand = {el.get_attribute("data-card") for el in drv.find_elements("css selector", "#hand .hcard")}
    assert hand == set(s["hand"])


def test_play_a_full_round_by_clicking(driver, server):  # noqa: F811, C901
    base, root = server
    driver.get(base + "/?delay=0")
    driver.find_element("id", "new-round").click()
    wait_for(driver, lambda: "/t/" in driver.current_url)
    tid = driver.current_url.split("/t/")[1].split("?")[0]
    s = wait_for(driver, lambda: my_turn_or_over(driver))
    record = on_disk(root, tid)
    dealt = set(record["unfinished"]["hands"][0])
    assert set(s["hand"]) == dealt  # the page shows the dealt hand before the passes
    phases, reloaded, refused = [], False, False
    while not s["over"]:
        phases.append(s["phase"])
        legal = {int(el.get_attribute("data-action")) for el in
                 driver.find_elements("css selector", "#hand .hcard:not([disabled]), #choices .choice")}
        assert legal == set(s["legal"])  # clickable exactly where the mask allows
        if s["phase"] == "play" and not refused and driver.find_elements("css selector", "#hand .hcard[disabled]"):
            refused = True
            before = (root / "tables" / f"{tid}.json").read_bytes()
            driver.find_elements("css selector", "#hand .hcard[disabled]")[0].click()  # a disabled card: nothing happens
            illegal = next(a for a in range(52) if a not in s["legal"])
            status = driver.execute_async_script(
                "const done = arguments[arguments.length - 1];"
                f"fetch('/api/tables/{tid}/move', {{method: 'POST', headers: {{'Content-Type': 'application/json',"
                f" 'X-PCR-Token': localStorage.getItem('pcr-token-{tid}')}}, body: JSON.stringify({{action: {illegal}}})}})"
                ".then((r) => done(r.status));")
            assert status == 422
            assert (root / "tables" / f"{tid}.json").read_bytes() == before
            assert driver.execute_script(STATE)["moves"] == s["moves"]
        if s["phase"] == "play" and len(s["tricks"]) == 5 and not reloaded:
            reloaded = True
            check_page_against_the_record(driver, s, on_disk(root, tid))
            screenshot(driver, "serve_table_mid_round.png")
            driver.refresh()  # a reload continues the same table
            again = wait_for(driver, lambda: my_turn_or_over(driver))
            assert again["moves"] == s["moves"] and again["hand"] == s["hand"] and again["tricks"] == s["tricks"]
            shown = [int(el.get_attribute("data-winner")) for el in driver.find_elements("css selector", "#log [data-trick]")]
            assert shown == [t["winner"] for t in s["tricks"]]
        action = choose(s)
        moves = s["moves"]
        driver.find_element("css selector", f'[data-action="{action}"]:not([disabled])').click()
        s = wait_for(driver, lambda: (lambda x: x if x and x["moves"] > moves else None)(my_turn_or_over(driver)))
        assert on_disk(root, tid)["meta"]["table"]["actions"][moves] == action  # the click is in the record
    assert phases[:3] == ["pass"] * 3 and "bid" in phases and phases.count("play") == 13 and reloaded and refused
    record = on_disk(root, tid)
    validate_record(record)
    rnd = record["rounds"][0]
    if rnd["declarer"] == 0:
        assert "trump" in phases
    # The end of the round: the scoring the page shows is the record's.
    res = rnd["result"]
    for k in (0, 1):
        assert int(driver.find_element("id", f"res-round-{k}").text) == res["scores"][k]
        assert int(driver.find_element("id", f"res-tricks-{k}").text) == res["tricks"][k]
        assert int(driver.find_element("id", f"res-total-{k}").text) == res["totals"][k]
    assert ("contract made" if res["made"] else "contract failed") in driver.find_element("id", "result-caption").text
    shown = [int(el.get_attribute("data-winner")) for el in driver.find_elements("css selector", "#log [data-trick]")]
    assert shown == [t["winner"] for t in rnd["tricks"]]
    pass_picks = set(rnd["passes"]["picks"][0])
    assert pass_picks <= dealt and len(pass_picks) == 3
    screenshot(driver, "serve_table_result.png")
    assert list((root / "records").glob("web-*.json"))
    errors = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE" and "status of 422" not in e.get("message", "")]
    assert not errors, errors


def test_keyboard_play_and_the_hint(driver, server):  # noqa: F811
    base, root = server
    driver.get(base + "/?delay=0")
    driver.find_element("id", "new-round").click()
    wait_for(driver, lambda: "/t/" in driver.current_url)
    s = wait_for(driver, lambda: my_turn_or_over(driver))
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(driver).send_keys("h").perform()
    pick = wait_for(driver, lambda: driver.find_elements("id", "hint-pick"))[0]
    assert int(pick.get_attribute("data-action")) in s["legal"] and "heuristic" in pick.text
    ActionChains(driver).send_keys("\ue014").send_keys("\ue007").perform()  # ArrowRight, Enter: the first legal move
    after = wait_for(driver, lambda: (lambda x: x if x and x["moves"] > s["moves"] else None)(my_turn_or_over(driver)))
    first = min(s["legal"], key=lambda a: ("SHCD".index("CDHS"[a // 13]), -(a % 13)))  # the hand is drawn S H C D, high first
    assert on_disk(root, after["id"])["meta"]["table"]["actions"][s["moves"]] == first
    no_js_errors(driver)


def test_a_whole_game_table_shows_each_rounds_scoring_then_deals_on(driver, server):  # noqa: F811
    base, root = server
    driver.get(base + "/?delay=0")
    driver.find_element("id", "new-game").click()
    wait_for(driver, lambda: "/t/" in driver.current_url)
    panel = driver.find_element("id", "result")
    while not panel.is_displayed():
        s = wait_for(driver, lambda: (lambda x: x if x and not x["busy"] and (x["turn"] == x["seat"] or panel.is_displayed())
                                      else None)(driver.execute_script(STATE)))
        if panel.is_displayed():
            break
        driver.find_element("css selector", f'[data-action="{choose(s)}"]:not([disabled])').click()
        wait_for(driver, lambda: (lambda x: x and x["moves"] > s["moves"])(driver.execute_script(STATE)))
    s = driver.execute_script(STATE)
    assert not s["over"] and len(s["rounds"]) == 1 and driver.find_element("id", "continue").is_displayed()
    record = on_disk(root, s["id"])
    assert int(driver.find_element("id", "res-round-0").text) == record["rounds"][0]["result"]["scores"][0]
    moves = s["moves"]
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(driver).send_keys("\ue007").perform()  # Enter: on to the next round
    s = wait_for(driver, lambda: my_turn_or_over(driver))
    assert not panel.is_displayed() and s["round"] == 2 and s["moves"] >= moves
    assert len(driver.find_elements("css selector", "#hand .hcard")) == len(s["hand"]) == 13 - len(s["passed"])
    no_js_errors(driver)
