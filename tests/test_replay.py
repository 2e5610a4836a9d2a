"""Game records (pcr_env.replay): what the recorder writes, that it matches the engine, and where
records come from (the duplicate evaluation with ``--replays``, the play CLI). The viewer page is
driven in a real browser by tests/test_replay_browser.py; here it is checked as a file."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import RULE_VARIANTS, random_action

import evaluate as cli
from agents import evaluation as ev
from agents.play import play_game
from pcr_env import engine as E
from pcr_env import replay as R
from pcr_env.actions import PASS_BID
from pcr_env.cards import SUITS, card_str, cards_of
from pcr_env.config import RulesConfig

ROOT = Path(__file__).resolve().parents[1]


def record_random_game(config: RulesConfig, seed: int, *, pass_bid_prob=None, max_rounds: int = 3):
    """Play a random game on the engine with a recorder; return (record, engine round results, final state)."""
    rng = np.random.default_rng(seed)
    state = E.new_game(config, rng)
    rec = R.GameRecorder(config, seats=[f"random#{s}" for s in range(config.players)], meta={"seed": seed})
    results = []
    deals = [list(state.hands)]
    while state.phase != E.Phase.GAME_OVER and len(results) < max_rounds:
        action = random_action(state, rng, pass_bid_prob)
        before = (state.round_number, state.redeals)
        result = rec.apply(state, action, rng)
        if result is not None:
            results.append(result)
            if state.phase == E.Phase.ROUND_END and len(results) < max_rounds:
                E.start_next_round(state, rng)
                deals.append(list(state.hands))
        elif (state.round_number, state.redeals) != before and state.phase != E.Phase.GAME_OVER:
            deals.append(list(state.hands))  # thrown in and dealt again
    return rec.finish(state), results, state, deals


@pytest.mark.parametrize("rules", RULE_VARIANTS, ids=[",".join(f"{k}={v}" for k, v in r.items()) or "default" for r in RULE_VARIANTS])
def test_record_matches_the_engine(rules):
    config = RulesConfig(**rules)
    record, results, state, _ = record_random_game(config, seed=11, pass_bid_prob=0.3)
    R.validate_record(record)  # legal play, R6.4 winners, R7-R8 scores, totals
    assert record["schema"] == R.SCHEMA and record["version"] == R.SCHEMA_VERSION == 1
    assert record["players"] == config.players and record["rules"] == config.to_dict()
    assert [s["team"] for s in record["seats"]] == [s % 2 for s in range(config.players)]
    assert len(record["rounds"]) == len(results) == 3
    for rnd, res in zip(record["rounds"], results):
        assert rnd["round"] == res.round_number and rnd["dealer"] == res.dealer
        assert (rnd["declarer"], rnd["contract"], rnd["trump"]) == (res.declarer, res.bid, SUITS[res.trump])
        assert [t["winner"] for t in rnd["tricks"]] == list(res.trick_winners)
        out = rnd["result"]
        assert out["tricks"] == list(res.tricks) and out["run_bonus"] == list(res.run_bonus)
        assert out["scores"] == list(res.scores) and out["made"] == res.made
        assert out["totals"] == list(res.total_scores) and out["winner"] == res.winner
        assert sum(r["bonus"] for r in out["runs"] if r["team"] == 0) == res.run_bonus[0]
        assert sum(r["length"] for r in out["runs"]) == config.num_tricks
        assert len(rnd["discards"]) == config.kitty_size
        if config.passing:
            assert rnd["passes"]["offset"] == {"partner": 2, "left": 1, "right": -1}[rnd["pass_direction"]]
            assert all(len(p) == 3 for p in rnd["passes"]["picks"])
        else:
            assert rnd["passes"] is None and rnd["pass_direction"] == "none"
    assert record["totals"] == list(state.scores)
    json.loads(json.dumps(record))  # plain JSON


def test_hands_are_the_deal_before_passing():
    config = RulesConfig(first_dealer=2)
    record, _, _, deals = record_random_game(config, seed=5, max_rounds=2)
    for rnd, hands in zip(record["rounds"], deals[-2:]):
        assert rnd["hands"] == [[card_str(c) for c in cards_of(h)] for h in hands]
    assert record["rounds"][0]["dealer"] == 2 and record["rounds"][1]["dealer"] == 3  # R2.1


def test_throw_ins_are_kept_with_the_deal_that_was_played():
    config = RulesConfig(first_dealer=0)
    rng = np.random.default_rng(3)
    state = E.new_game(config, rng)
    rec = R.GameRecorder(config)
    thrown_hands = []
    for _ in range(2):  # everybody passes twice (R4.4)
        thrown_hands.append([card_str(c) for c in cards_of(state.hands[1])])
        while state.phase == E.Phase.PASS:
            rec.apply(state, E.legal_actions(state)[0], rng)
        for _ in range(4):
            rec.apply(state, PASS_BID, rng)
    assert state.redeals == 2
    while state.phase != E.Phase.ROUND_END:
        rec.apply(state, E.legal_actions(state)[0], rng)
    record = rec.finish(state)
    R.validate_record(record)
    rnd = record["rounds"][0]
    assert rnd["redeals"] == 2 and len(rnd["throw_ins"]) == 2
    assert [t["hands"][1] for t in rnd["throw_ins"]] == thrown_hands
    assert all(b["bid"] is None for t in rnd["throw_ins"] for b in t["bids"])
    assert rnd["throw_ins"][0]["passes"]["received"][2] == rnd["throw_ins"][0]["passes"]["picks"][0]  # partner round
    assert record["unfinished"] is None and not record["truncated"]


def test_a_game_truncated_by_redeals_keeps_its_unfinished_deal():
    config = RulesConfig(first_dealer=0, passing=False, max_redeals=0)
    rng = np.random.default_rng(0)
    state = E.new_game(config, rng)
    rec = R.GameRecorder(config)
    for _ in range(4):
        rec.apply(state, PASS_BID, rng)
    assert state.phase == E.Phase.GAME_OVER and state.truncated
    record = rec.finish(state)
    R.validate_record(record)
    assert record["rounds"] == [] and record["truncated"]
    assert record["unfinished"]["reason"] == "redeals" and len(record["unfinished"]["bids"]) == 4


def test_recorder_refuses_to_start_mid_deal():
    config = RulesConfig()
    rng = np.random.default_rng(0)
    state = E.new_game(config, rng)
    E.apply_action(state, E.legal_actions(state)[0], rng)
    with pytest.raises(R.ReplayError, match="from its first action"):
        R.GameRecorder(config).observe(state, E.legal_actions(state)[0])
    with pytest.raises(R.ReplayError, match="one per seat"):
        R.GameRecorder(config, seats=["a", "b"])


@pytest.mark.parametrize("tamper, message", [
    (lambda r: r.update(version=2), "version 2 is not supported"),
    (lambda r: r.update(schema="other"), "schema"),
    (lambda r: r["rounds"][0]["tricks"][0].update(winner=(r["rounds"][0]["tricks"][0]["winner"] + 1) % 4), "winner"),
    (lambda r: r["rounds"][0]["result"]["scores"].__setitem__(0, 99), "result does not match"),
    (lambda r: r["rounds"][0]["tricks"][0]["plays"].reverse(), "clockwise|led by"),
    (lambda r: r["rounds"][0]["hands"][0].__setitem__(0, r["rounds"][0]["hands"][1][0]), "cover the deck"),
    (lambda r: r.update(totals=[0, 0]), "totals"),
])
def test_validate_record_names_what_is_wrong(tamper, message):
    record, *_ = record_random_game(RulesConfig(), seed=2, max_rounds=1)
    bad = copy.deepcopy(record)
    tamper(bad)
    with pytest.raises(R.ReplayError, match=message):
        R.validate_record(bad)


# ------------------------------------------------------------------------ evaluation
@pytest.fixture(scope="module")
def recorded_eval():
    return ev.evaluate(["heuristic", "random", "greedy"], deals=6, seed=4, progress=False, pairs=[(0, 1), (0, 2)],
                       record_deals=2)


def test_recording_changes_no_result_and_records_both_tables(recorded_eval):
    plain = ev.evaluate(["heuristic", "random", "greedy"], deals=6, seed=4, progress=False, pairs=[(0, 1), (0, 2)])
    assert plain.replays == []
    assert [p.diffs for p in plain.pairs] == [p.diffs for p in recorded_eval.pairs]
    assert "replays" not in recorded_eval.to_dict()
    reps = recorded_eval.replays
    assert [(r["meta"]["pair"], r["meta"]["deal"], r["meta"]["table"]) for r in reps] == [
        (pair, deal, table) for pair in ("heuristic vs random", "heuristic vs greedy") for deal in (0, 1) for table in "AB"]
    for r in reps:
        R.validate_record(r)
        x_team = r["meta"]["agent_a_team"]
        assert x_team == "AB".index(r["meta"]["table"])  # table A: agent_a at the even seats; B swaps
        assert [s["agent"] for s in r["seats"]] == [r["meta"]["agent_a"] if s % 2 == x_team else r["meta"]["agent_b"]
                                                    for s in range(4)]
    # Both tables of a deal have the same cards, dealer and pass direction (the duplicate method).
    for a, b in zip(reps[::2], reps[1::2]):
        for key in ("hands", "dealer", "pass_direction", "round"):
            assert a["rounds"][0][key] == b["rounds"][0][key]
    # The recorded margins are the evaluation's per-deal differences.
    pair = recorded_eval.pairs[0]
    for deal in (0, 1):
        a, b = reps[2 * deal], reps[2 * deal + 1]
        margin = sum((r["totals"][t] - r["totals"][1 - t]) for r, t in ((a, 0), (b, 1))) / 2
        assert margin == pair.diffs[deal]


def test_recording_works_with_workers(recorded_eval):
    par = ev.evaluate(["heuristic", "random", "greedy"], deals=6, seed=4, progress=False, pairs=[(0, 1), (0, 2)],
                      record_deals=2, workers=2)
    assert par.replays == recorded_eval.replays


def test_game_episodes_record_every_round():
    res = ev.evaluate(["heuristic", "random"], deals=1, seed=0, episode="game", progress=False, record_deals=1,
                      rules={"target_score": 30})
    assert len(res.replays) == 2
    for r in res.replays:
        R.validate_record(r)
        assert len(r["rounds"]) >= 1 and max(r["totals"]) >= 30
        assert r["winner"] in (0, 1) and not r["truncated"]
        assert [rnd["round"] for rnd in r["rounds"]] == list(range(1, len(r["rounds"]) + 1))
    with pytest.raises(ValueError, match="record_deals"):
        ev.evaluate(["random"], deals=1, record_deals=-1, progress=False)


def test_evaluate_cli_writes_records_and_a_self_contained_viewer(tmp_path, capsys):
    out = tmp_path / "replays"
    rc = cli.main(["--agents", "heuristic", "random", "--deals", "4", "--seed", "1", "--no-progress",
                   "--replays", str(out), "--replay-deals", "1", "--players", "6"])
    assert rc == 0
    assert "wrote 2 replay records" in capsys.readouterr().out
    files = sorted(p.name for p in out.glob("*.json"))
    assert files == ["pair0-deal0000-A.json", "pair0-deal0000-B.json"]
    records = [json.loads((out / f).read_text()) for f in files]
    page = (out / "index.html").read_text()
    embedded = json.loads(re.search(r'<script type="application/json" id="pcr-data">(.*?)</script>', page, re.S).group(1))
    assert embedded["records"] == records and embedded["names"] == [f[:-5] for f in files]
    # One file, nothing fetched: no external scripts, styles, images or URLs.
    assert not re.search(r"https?://|<link|<img|\bsrc=|@import|fetch\(|XMLHttpRequest", page)
    assert page.count("<script") == 3 and "<style>" in page  # the records, the shared look (table_look.js), the viewer


def test_evaluate_cli_rejects_a_bad_replay_count(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--agents", "random", "--deals", "2", "--replays", "x", "--replay-deals", "0"])
    assert "--replay-deals 0 is not allowed" in capsys.readouterr().err


def test_viewer_embedding_survives_hostile_text(tmp_path):
    record, *_ = record_random_game(RulesConfig(), seed=1, max_rounds=1)
    record["meta"]["note"] = "</script><script>alert(1)</script> <!-- &amp;"
    paths = R.write_replays([record], tmp_path, title="<b>title</b>")
    page = paths["html"].read_text()
    assert "</script><script>alert" not in page and "<b>title</b>" not in page
    data = re.search(r'id="pcr-data">(.*?)</script>', page, re.S).group(1)
    assert json.loads(data)["records"][0]["meta"]["note"] == record["meta"]["note"]


def test_module_cli_rebuilds_the_viewer(tmp_path):
    record, *_ = record_random_game(RulesConfig(), seed=1, max_rounds=1)
    R.write_replays([record, record], tmp_path, names=["one", "two"])
    (tmp_path / "index.html").unlink()
    (tmp_path / "results.json").write_text("{}")  # other JSON files are skipped
    run = subprocess.run([sys.executable, "-m", "pcr_env.replay", str(tmp_path)], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    assert "2 record(s)" in run.stdout and (tmp_path / "index.html").exists()
    bad = json.loads((tmp_path / "two.json").read_text())
    bad["rounds"][0]["result"]["made"] = not bad["rounds"][0]["result"]["made"]
    (tmp_path / "two.json").write_text(json.dumps(bad))
    run = subprocess.run([sys.executable, "-m", "pcr_env.replay", str(tmp_path)], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 2 and "two.json" in run.stderr and run.stderr.count("\n") == 1
    run = subprocess.run([sys.executable, "-m", "pcr_env.replay", str(tmp_path / "none")], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 2 and "not a directory" in run.stderr


# ---------------------------------------------------------------------- the play CLI
class LegalTyper:
    """Types the last legal move the table lists (so it bids high and plays the hand)."""

    def __init__(self):
        self.lines: list[str] = []

    def output(self, text: str) -> None:
        self.lines.extend(text.split("\n"))

    def input(self, prompt: str) -> str:
        legal = next(line for line in reversed(self.lines) if line.startswith("Legal: ")).split()[1:]
        return legal[-2] if legal[-1] == "pass" and len(legal) > 1 else legal[-1]


def test_play_cli_saves_a_replay(tmp_path):
    person = LegalTyper()
    res = play_game(1, "heuristic", episode="round", seed=8, input_fn=person.input, output_fn=person.output,
                    replays=tmp_path)
    path = Path(res["replay"])
    record = json.loads(path.read_text())
    R.validate_record(record)
    assert [s["agent"] for s in record["seats"]] == ["heuristic", "you (seat 1)", "heuristic", "heuristic"]
    assert record["meta"]["human_seat"] == 1 and len(record["rounds"]) == 1
    us, them = res["scores"]
    assert record["totals"][1] == us and record["totals"][0] == them
    assert any("Replay saved" in line for line in person.lines)
    # A second game adds a record; the viewer holds both.
    person = LegalTyper()
    play_game(1, "heuristic", episode="round", seed=9, input_fn=person.input, output_fn=person.output, replays=tmp_path)
    assert len(R.load_replays(tmp_path)) == 2
    assert (tmp_path / "index.html").read_text().count('"schema":"pcr-replay"') == 2


def test_play_cli_records_a_game_left_early(tmp_path):
    answers = iter(["quit"])
    res = play_game(0, "random", episode="game", seed=2, input_fn=lambda p: next(answers), output_fn=lambda t: None,
                    replays=tmp_path)
    record = json.loads(Path(res["replay"]).read_text())
    R.validate_record(record)
    assert res["quit"] and record["rounds"] == [] and record["unfinished"]["reason"] == "stopped"


@pytest.mark.parametrize("trump", [3, np.int64(3), "S"])
def test_round_summary_names_trump_given_as_index_or_letter(trump):
    from agents.play import _round_summary, seat_names

    result = {"round": 1, "dealer": 0, "declarer": 1, "bid": 8, "trump": trump, "tricks": [4, 9], "run_bonus": [0, 5],
              "scores": [4, 14], "made": True, "trick_winners": [1] * 13, "total_scores": [4, 14], "winner": 1}
    assert "bid 8 in S and made" in _round_summary(result, 0, seat_names(0, 4))
