"""The browser table's server (python -m agents.serve) over HTTP, with Starlette's TestClient: no browser, no socket.

Every bad input gets a clear 4xx JSON answer and leaves the table (and its record on disk) as it was;
a restarted server continues a table; two tables do not see each other; an agent that raises is a
clear message with the record intact; a non-loopback bind needs --host.
"""

from __future__ import annotations

import json

import pytest
from conftest import IN_CI

if not IN_CI:  # CI installs the web extra (make test: the `all` extra), so there a missing one fails
    pytest.importorskip("starlette", reason="the web extra (pip install -e '.[web]')")
    pytest.importorskip("httpx2", reason="the web extra (pip install -e '.[web]')")
from starlette.testclient import TestClient  # noqa: E402

import evaluate  # noqa: E402
from agents import serve  # noqa: E402
from agents.registry import register_agent  # noqa: E402
from agents.scripted.heuristic import HeuristicAgent  # noqa: E402
from agents.web.app import MAX_BODY, ServeConfig, create_app  # noqa: E402
from pcr_env.replay import load_replays, validate_record  # noqa: E402

AGENTS = ["you", "heuristic", "heuristic", "heuristic"]


def make_client(tmp_path, **kw) -> TestClient:
    config = ServeConfig(agents=kw.pop("agents", AGENTS), seed=kw.pop("seed", 3), tables_dir=tmp_path / "tables",
                         records_dir=tmp_path / "records", **kw)
    return TestClient(create_app(config), base_url="http://127.0.0.1", raise_server_exceptions=False)


def new_table(client, episode="round"):
    r = client.post("/api/tables", json={"episode": episode})
    assert r.status_code == 201, r.text
    body = r.json()
    return body["id"], {"X-PCR-Token": body["token"]}


def until_my_turn(client, tid, headers) -> dict:
    s = client.get(f"/api/tables/{tid}", headers=headers).json()
    while not s["over"] and s["turn"] != s["seat"]:
        r = client.post(f"/api/tables/{tid}/advance", json={}, headers=headers)
        assert r.status_code == 200, r.text
        s = r.json()
    return s


def play_round(client, tid, headers) -> dict:
    s = until_my_turn(client, tid, headers)
    while not s["over"]:
        r = client.post(f"/api/tables/{tid}/move", json={"action": s["legal"][-1]}, headers=headers)
        assert r.status_code == 200, r.text
        s = until_my_turn(client, tid, headers)
    return s


def table_file(tmp_path, tid) -> dict:
    return json.loads((tmp_path / "tables" / f"{tid}.json").read_text())


@pytest.fixture
def client(tmp_path):
    with make_client(tmp_path) as c:
        yield c


def test_a_round_is_recorded_action_by_action_and_archived(client, tmp_path):
    tid, h = new_table(client)
    s = until_my_turn(client, tid, h)
    before = table_file(tmp_path, tid)["meta"]["table"]["actions"]
    r = client.post(f"/api/tables/{tid}/move", json={"action": s["legal"][0]}, headers=h)
    after = table_file(tmp_path, tid)["meta"]["table"]["actions"]
    assert after == before + [s["legal"][0]] and r.json()["moves"] == len(after)  # on disk before the answer
    assert "token" not in json.dumps(table_file(tmp_path, tid)["meta"]["table"]).replace("token_sha256", "")
    end = play_round(client, tid, h)
    assert end["over"] and end["archived"]
    [(name, record)] = load_replays(tmp_path / "records")
    validate_record(record)
    assert record["meta"]["agents"] == {"1": "heuristic", "2": "heuristic", "3": "heuristic"}
    assert record["meta"]["seed"] == 3 and record["meta"]["human_seat"] == 0
    assert "token_sha256" not in record["meta"]["table"]
    res = record["rounds"][0]["result"]
    assert end["rounds"][0]["result"] == res  # the page's scoring is the record's
    assert [t["winner"] for t in end["tricks"]] == [t["winner"] for t in record["rounds"][0]["tricks"]]
    assert (tmp_path / "records" / "index.html").is_file()
    replay = client.get(f"/api/tables/{tid}/replay", headers=h)
    assert replay.status_code == 200 and "pcr-data" in replay.text
    assert client.post(f"/api/tables/{tid}/move", json={"action": 0}, headers=h).status_code == 409  # game over


def test_the_view_shows_only_what_the_seat_may_see(client):
    tid, h = new_table(client)
    s = until_my_turn(client, tid, h)
    assert len(s["hand"]) == 13 and s["phase"] == "pass"
    text = json.dumps(s)
    assert "hands" not in text and "kitty" not in text
    assert client.get(f"/api/tables/{tid}/replay", headers=h).status_code == 409  # every hand: only after the game


@pytest.mark.parametrize("case", ["no token", "wrong token", "unknown table", "malformed id", "not JSON", "bad JSON",
                                  "not an object", "no action", "action a string", "action a bool", "out of range",
                                  "illegal", "too large", "wrong method", "unknown path", "advance on my turn",
                                  "bad episode", "hint with a wrong token"])
def test_every_bad_input_is_a_clear_4xx_and_changes_nothing(client, tmp_path, case):
    tid, h = new_table(client)
    s = until_my_turn(client, tid, h)
    illegal = next(a for a in range(70) if a not in s["legal"])
    url = f"/api/tables/{tid}/move"
    on_disk = (tmp_path / "tables" / f"{tid}.json").read_bytes()
    requests = {
        "no token": (401, lambda: client.post(url, json={"action": s["legal"][0]})),
        "wrong token": (403, lambda: client.post(url, json={"action": s["legal"][0]}, headers={"X-PCR-Token": "x" * 43})),
        "unknown table": (404, lambda: client.post("/api/tables/" + "A" * 22 + "/move", json={"action": 0}, headers=h)),
        "malformed id": (404, lambda: client.get("/api/tables/../../etc", headers=h)),
        "not JSON": (415, lambda: client.post(url, content=b"action=3", headers={**h, "Content-Type": "text/plain"})),
        "bad JSON": (400, lambda: client.post(url, content=b"{action", headers={**h, "Content-Type": "application/json"})),
        "not an object": (400, lambda: client.post(url, json=[1], headers=h)),
        "no action": (400, lambda: client.post(url, json={}, headers=h)),
        "action a string": (400, lambda: client.post(url, json={"action": "QS"}, headers=h)),
        "action a bool": (400, lambda: client.post(url, json={"action": True}, headers=h)),
        "out of range": (422, lambda: client.post(url, json={"action": 70}, headers=h)),
        "illegal": (422, lambda: client.post(url, json={"action": illegal}, headers=h)),
        "too large": (413, lambda: client.post(url, json={"action": 0, "pad": "x" * MAX_BODY}, headers=h)),
        "wrong method": (405, lambda: client.delete(url, headers=h)),
        "unknown path": (404, lambda: client.get("/api/nothing")),
        "advance on my turn": (409, lambda: client.post(f"/api/tables/{tid}/advance", json={}, headers=h)),
        "bad episode": (400, lambda: client.post("/api/tables", json={"episode": "forever"})),
        "hint with a wrong token": (403, lambda: client.get(f"/api/tables/{tid}/hint", headers={"X-PCR-Token": "nope"})),
    }
    status, send = requests[case]
    r = send()
    assert r.status_code == status, r.text
    body = r.json()
    assert body["status"] == status and isinstance(body["error"], str) and body["error"]
    assert "Traceback" not in r.text
    assert (tmp_path / "tables" / f"{tid}.json").read_bytes() == on_disk  # nothing changed
    assert client.get(f"/api/tables/{tid}", headers=h).json()["moves"] == len(table_file(tmp_path, tid)["meta"]["table"]["actions"])


def test_the_status_of_a_refused_move_follows_its_type_not_its_words(client, monkeypatch):
    from agents.web.table import IllegalMove, MoveError, Table, TableSettings

    table = Table(TableSettings(agents=AGENTS, seed=3, episode="round"))
    illegal = next(a for a in range(70) if not table.mask()[a])
    for action in (illegal, 70, "QS"):
        with pytest.raises(IllegalMove):
            table.apply(action)
    tid, h = new_table(client)
    s = until_my_turn(client, tid, h)
    for refusal, status in ((IllegalMove("no such card"), 422), (MoveError("that is not legal now"), 409)):
        def refuse(self, action, refusal=refusal):
            raise refusal
        monkeypatch.setattr(Table, "apply", refuse)
        r = client.post(f"/api/tables/{tid}/move", json={"action": s["legal"][0]}, headers=h)
        assert r.status_code == status and r.json()["error"] == str(refusal)


def test_a_restarted_server_continues_the_table(tmp_path):
    with make_client(tmp_path) as first:
        tid, h = new_table(first, episode="game")
        s = until_my_turn(first, tid, h)
        for _ in range(3):
            s = first.post(f"/api/tables/{tid}/move", json={"action": s["legal"][0]}, headers=h).json()
            s = until_my_turn(first, tid, h)
        before = first.get(f"/api/tables/{tid}", headers=h).json()
    with make_client(tmp_path) as second:  # a new process would read the same folder
        after = second.get(f"/api/tables/{tid}", headers=h).json()
        assert after == before
        r = second.post(f"/api/tables/{tid}/move", json={"action": after["legal"][0]}, headers=h)
        assert r.status_code == 200 and r.json()["moves"] == before["moves"] + 1


def test_two_tables_are_isolated(client, tmp_path):
    a, ha = new_table(client)
    b, hb = new_table(client)
    assert a != b and ha != hb
    assert client.get(f"/api/tables/{b}", headers=ha).status_code == 403  # a's token opens only a
    sa = until_my_turn(client, a, ha)
    client.post(f"/api/tables/{a}/move", json={"action": sa["legal"][0]}, headers=ha)
    sb = client.get(f"/api/tables/{b}", headers=hb).json()
    assert sb["moves"] == 0 and len(table_file(tmp_path, b)["meta"]["table"]["actions"]) == 0


class Exploding(HeuristicAgent):
    def act(self, obs):
        raise RuntimeError("boom")


def test_an_agent_that_raises_is_a_clear_message_and_the_record_stays(tmp_path):
    register_agent("test-exploding", lambda seed=None: Exploding(seed), description="raises (tests/test_serve.py)")
    with make_client(tmp_path, agents=["you", "test-exploding", "heuristic", "heuristic"], hint=None) as c:
        tid, h = new_table(c)
        s = c.get(f"/api/tables/{tid}", headers=h).json()
        while s["turn"] != 1:
            s = c.post(f"/api/tables/{tid}/move" if s["turn"] == 0 else f"/api/tables/{tid}/advance",
                       json={"action": s["legal"][0]} if s["turn"] == 0 else {}, headers=h).json()
        on_disk = (tmp_path / "tables" / f"{tid}.json").read_bytes()
        r = c.post(f"/api/tables/{tid}/advance", json={}, headers=h)
        assert r.status_code == 500 and "seat 1 (test-exploding) failed: RuntimeError: boom" in r.json()["error"]
        assert "Traceback" not in r.text
        assert (tmp_path / "tables" / f"{tid}.json").read_bytes() == on_disk
        assert c.get(f"/api/tables/{tid}", headers=h).json()["error"].endswith("boom")
        assert c.get(f"/api/tables/{tid}/hint", headers=h).status_code == 409  # --hint none


def test_the_hint_and_the_pages(client):
    tid, h = new_table(client)
    s = until_my_turn(client, tid, h)
    hint = client.get(f"/api/tables/{tid}/hint", headers=h).json()
    assert hint["agent"] == "heuristic" and hint["action"] in s["legal"] and hint["probabilities"] is None
    page = client.get(f"/t/{tid}")
    assert page.status_code == 200 and "pcr-boot" in page.text and h["X-PCR-Token"] not in page.text
    assert client.get("/").status_code == 200
    assert client.get("/t/" + "B" * 22).status_code == 404
    r = TestClient(client.app, base_url="http://evil.example").get("/")  # DNS rebinding: another Host is refused
    assert r.status_code == 400


def test_binding_another_address_needs_host(monkeypatch, capsys, tmp_path):
    assert serve.check_bind("127.0.0.1") is None and serve.check_bind("localhost") is None
    with pytest.raises(serve.BindRefused, match="--host 0.0.0.0"):
        serve.check_bind("0.0.0.0")
    with pytest.raises(serve.BindRefused):
        serve.serve(ServeConfig(agents=AGENTS), host="192.168.1.5")
    assert "WARNING" in serve.check_bind("0.0.0.0", allow_remote=True)
    ran, dirs = {}, ["--tables", str(tmp_path / "t"), "--records", str(tmp_path / "r")]
    import uvicorn
    monkeypatch.setattr(uvicorn, "run", lambda app, host, port, **kw: ran.update(host=host, port=port))
    assert serve.main(["--host", "0.0.0.0", "--port", "9999", *dirs]) == 0
    assert ran == {"host": "0.0.0.0", "port": 9999} and "WARNING" in capsys.readouterr().err
    ran.clear()
    assert serve.main([*dirs]) == 0
    assert ran["host"] == "127.0.0.1"
    assert serve.main(["--agents", "magic"]) == 2


def test_evaluate_summarises_the_persons_games(client, tmp_path, capsys):
    """``evaluate.py --people DIR``: the person's results against each agent spec, with the seeds kept."""
    tids = []
    for _ in range(2):
        tid, h = new_table(client)
        play_round(client, tid, h)
        tids.append(tid)
    assert evaluate.main(["--people", str(tmp_path / "records"), "--out", str(tmp_path / "eval")]) == 0
    assert "| heuristic | heuristic | 2 " in capsys.readouterr().out
    [row] = json.loads((tmp_path / "eval" / "people.json").read_text())
    assert (row["opponents"], row["partner"], row["games"], row["rounds"]) == ("heuristic", "heuristic", 2, 2)
    seeds = sorted(table_file(tmp_path, t)["meta"]["seed"] for t in tids)
    assert sorted(row["seeds"]) == seeds
    assert evaluate.main(["--people", str(tmp_path / "tables-none")]) == 2


def test_each_scored_round_is_shown_once_and_matches_the_record(client, tmp_path):
    tid, h = new_table(client, episode="game")
    s = until_my_turn(client, tid, h)
    while len(s["rounds"]) < 2:
        s = client.post(f"/api/tables/{tid}/move", json={"action": s["legal"][-1]}, headers=h).json()
        s = until_my_turn(client, tid, h)
    record = table_file(tmp_path, tid)
    assert [r["result"] for r in s["rounds"]] == [r["result"] for r in record["rounds"]]
    assert all("hands" not in r and "passes" not in r for r in s["rounds"])  # nobody's hidden cards
    assert s["scores"] == record["rounds"][-1]["result"]["totals"]


@pytest.mark.slow
def test_a_search_agent_at_the_table_and_the_ppo_hint_with_probabilities(tmp_path):
    """Any spec sits at the table (``search:ppo:pretrained``); a ``ppo:`` hint gives a probability for each legal move."""
    with make_client(tmp_path, agents=["you", "search:ppo:pretrained", "heuristic", "heuristic"], hint="ppo:pretrained") as c:
        tid, h = new_table(c)
        s = until_my_turn(c, tid, h)
        hint = c.get(f"/api/tables/{tid}/hint", headers=h).json()
        probs = hint["probabilities"]
        assert hint["agent"] == "ppo:pretrained" and sorted(p["action"] for p in probs) == s["legal"]
        assert abs(sum(p["p"] for p in probs) - 1) < 1e-3 and hint["action"] in s["legal"]
        mine = 0
        while s["moves"] == mine:  # until the agents (seat 1's search agent among them) have acted
            s = c.post(f"/api/tables/{tid}/move", json={"action": s["legal"][0]}, headers=h).json()
            mine += 1
            s = until_my_turn(c, tid, h)
        assert table_file(tmp_path, tid)["meta"]["table"]["settings"]["agents"][1] == "search:ppo:pretrained"
        assert s["moves"] > mine and s["error"] is None
