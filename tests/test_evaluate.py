"""The duplicate evaluation harness (agents.evaluation) and its command line (evaluate.py)."""

from __future__ import annotations

import csv
import json
import time
from pathlib import Path

import numpy as np
import pytest

import evaluate as cli
from agents import evaluation as ev
from agents import registry as agent_registry
from agents.base import BaseAgent
from agents.evaluation import duplicate
from agents.registry import register_agent
from agents.scripted.heuristic import HeuristicAgent
from agents.scripted.random_agent import RandomAgent
from pcr_env import engine as E
from pcr_env.actions import PASS_BID
from pcr_env.config import RulesConfig
from pcr_env.observation import decode_observation, encode_observation


@pytest.fixture(scope="module")
def heuristic_vs_random() -> ev.EvaluationResult:
    return ev.evaluate(["heuristic", "random"], deals=40, seed=0, progress=False)


class _FirstLegal(BaseAgent):
    """Deterministic and weak: always the lowest legal action id."""

    def act(self, obs):
        return int(np.flatnonzero(obs["action_mask"])[0])


class _SeatLogger(BaseAgent):
    """Records, per table (one ``reset`` each), the absolute seats it played; plays the lowest legal action."""

    def __init__(self, seed=None, rules=None):
        super().__init__(seed)
        self.tables: list[set[int]] = []
        self.dealers: list[int] = []

    def reset(self, seed=None):
        super().reset(seed)
        self.tables.append(set())

    def act(self, obs):
        view = decode_observation(obs)
        # The observation shows the dealer relative to me; the deal fixes the dealer's absolute seat.
        self.tables[-1].add(view.dealer)
        return int(np.flatnonzero(obs["action_mask"])[0])


@pytest.fixture
def registered():
    """Register test-only agent kinds and remove them afterwards."""
    added = []

    def add(kind, factory):
        register_agent(kind, factory)
        added.append(kind)

    yield add
    for kind in added:
        agent_registry._REGISTRY.pop(kind, None)
        for key in [k for k in duplicate._AGENT_CACHE if k[0] == kind]:
            duplicate._AGENT_CACHE.pop(key)


# ------------------------------------------------------------------- the method
def test_a_deterministic_agent_against_itself_scores_exactly_zero_on_every_deal():
    result = ev.evaluate(["heuristic"], deals=16, seed=3, progress=False)
    pair = result.pair("heuristic", "heuristic#2")
    assert pair.diffs == [0.0] * 16
    assert pair.mean_diff == 0.0 and pair.ci95 == (0.0, 0.0) and pair.tie_rate == 1.0
    assert pair.a == pair.b  # both sides played the same cards the same way


def test_random_against_random_has_an_interval_covering_zero():
    pair = ev.evaluate(["random", "random"], deals=400, seed=0, progress=False).pairs[0]
    assert pair.agent_a == "random" and pair.agent_b == "random#2"
    assert pair.ci95[0] <= 0.0 <= pair.ci95[1], pair.ci95
    assert pair.sd > 0  # different seeds per side: the games differ


def test_heuristic_beats_random_by_a_wide_margin(heuristic_vs_random):
    pair = heuristic_vs_random.pair("heuristic", "random")
    # Measured: about +30 points per deal with all deals won; the bound is far below that.
    assert pair.ci95[0] > 10.0, pair
    assert pair.win_rate > 0.8
    assert pair.a["tricks_per_round"] > pair.b["tricks_per_round"]
    assert 0 <= pair.a["bid_rate"] <= 1 and 0 <= pair.b["make_rate"] <= 1


def test_heuristic_beats_the_greedy_bot():
    # Both are deterministic, so this is one fixed result; measured +5.7 per deal (CI [3.8, 7.7]), 67% of deals won.
    pair = ev.evaluate(["heuristic", "greedy"], deals=100, seed=0, progress=False).pairs[0]
    assert pair.mean_diff > 1.5 and pair.score_share > 0.55, pair


def test_ratings_anchor_random_at_zero(heuristic_vs_random):
    ratings = {r.agent: r for r in heuristic_vs_random.ratings}
    assert ratings["random"].elo == 0.0 and ratings["random"].se == 0.0
    assert ratings["heuristic"].elo > 400


def test_same_seed_gives_identical_results_whatever_the_number_of_workers():
    one = ev.evaluate(["heuristic", "random"], deals=30, seed=5, progress=False, workers=1)
    two = ev.evaluate(["heuristic", "random"], deals=30, seed=5, progress=False, workers=2)
    again = ev.evaluate(["heuristic", "random"], deals=30, seed=5, progress=False, workers=1)
    def strip(r):
        return ({k: v for k, v in r.to_dict().items() if k not in ("seconds", "timing")}  # wall times
                | {"config": {**r.config, "workers": 0}})
    assert strip(one) == strip(two) == strip(again)
    other = ev.evaluate(["heuristic", "random"], deals=30, seed=6, progress=False)
    assert other.pairs[0].diffs != one.pairs[0].diffs


def test_each_agent_is_timed_over_every_decision_it_makes(tmp_path):
    class Slow(RandomAgent):
        name = "slow"

        def act(self, obs):
            time.sleep(0.002)
            return super().act(obs)

    result = ev.evaluate([Slow(seed=0), "random"], deals=3, seed=1, progress=False)
    timing = {t.agent: t for t in result.timing}
    # every decision of both tables: each side holds two seats per table, and each seat plays 13 cards
    assert min(timing["slow"].decisions, timing["random"].decisions) >= 3 * 2 * 2 * 13
    assert timing["slow"].ms_per_decision >= 2.0 > timing["random"].ms_per_decision
    assert "ms/decision" in result.table()
    paths = ev.write_outputs(result, tmp_path)
    rows = {r["agent"]: r for r in csv.DictReader(paths["ratings"].read_text().splitlines())}
    assert float(rows["slow"]["ms_per_decision"]) >= 2.0 and int(rows["slow"]["decisions"]) == timing["slow"].decisions


def test_deals_are_seeded_cover_the_deck_and_balance_the_pass_directions():  # R2.2, R3.2
    rules = RulesConfig()
    deals = [ev.make_deal(rules, 9, i) for i in range(8)]
    assert deals == [ev.make_deal(rules, 9, i) for i in range(8)]
    assert [d.round_number for d in deals] == [1, 2, 3, 4, 1, 2, 3, 4]
    for d in deals:
        cards = sorted(c for h in d.hands for c in h)
        assert cards == list(range(52)) and all(len(h) == 13 for h in d.hands)
    assert deals[0].hands != ev.make_deal(rules, 10, 0).hands
    six = ev.make_deal(RulesConfig(players=6), 9, 0)
    assert [len(h) for h in six.hands] == [8] * 6 and len(six.kitty) == 4  # R9.3


def test_tables_swap_the_teams(registered):
    """Table A seats agent X at the even seats, table B at the odd seats (R1.2)."""
    registered("test-seat-x", lambda seed=None, rules=None: _SeatLogger(seed))
    registered("test-seat-y", lambda seed=None, rules=None: _SeatLogger(seed))
    ev.evaluate(["test-seat-x", "test-seat-y"], deals=3, seed=2, progress=False)
    x, y = duplicate._AGENT_CACHE[("test-seat-x", 0, RulesConfig())], duplicate._AGENT_CACHE[("test-seat-y", 1, RulesConfig())]
    rules = RulesConfig()
    for i in range(3):
        dealer = ev.make_deal(rules, 2, i).dealer
        for table, x_team in ((0, 0), (1, 1)):
            x_seats = {(dealer - rel) % 4 for rel in x.tables[2 * i + table]}
            y_seats = {(dealer - rel) % 4 for rel in y.tables[2 * i + table]}
            assert {s % 2 for s in x_seats} == {x_team} and {s % 2 for s in y_seats} == {1 - x_team}


def test_score_difference_is_the_mean_of_both_tables_margins(registered):
    """Recomputed here on the engine, independently of the harness."""
    registered("test-first", lambda seed=None, rules=None: _FirstLegal(seed))
    result = ev.evaluate(["heuristic", "test-first"], deals=4, seed=1, progress=False)
    rules = RulesConfig()
    x, y = HeuristicAgent(), _FirstLegal()
    for i in range(4):
        deal = ev.make_deal(rules, 1, i)
        margins = []
        for x_team in (0, 1):
            rng = np.random.default_rng(deal.redeal_seed)
            state = E.new_game(rules, rng, dealer=deal.dealer, round_number=deal.round_number,
                               hands=[list(h) for h in deal.hands])
            result_round = None
            while state.phase < E.Phase.ROUND_END:
                agent = x if state.current % 2 == x_team else y
                obs = {"observation": encode_observation(state, state.current), "action_mask": E.legal_mask(state)}
                result_round = E.apply_action(state, agent.act(obs), rng)
            margins.append(result_round.scores[x_team] - result_round.scores[1 - x_team])
        assert result.pairs[0].diffs[i] == sum(margins) / 2


def test_both_tables_get_the_same_redeal_after_a_throw_in():  # R4.4
    rules = RulesConfig(max_redeals=3)
    deal = ev.make_deal(rules, 4, 0)
    hands_seen = []
    for _ in range(2):
        rng = np.random.default_rng(deal.redeal_seed)
        state = E.new_game(rules, rng, dealer=deal.dealer, round_number=4, hands=[list(h) for h in deal.hands])
        for _ in range(4):
            E.apply_action(state, PASS_BID, rng)
        assert state.redeals == 1
        hands_seen.append(list(state.hands))
    assert hands_seen[0] == hands_seen[1] and hands_seen[0] != [E.mask_of(h) for h in deal.hands]


def test_tables_where_everyone_always_passes_are_truncated_and_counted(registered):
    class AlwaysPass(BaseAgent):
        def act(self, obs):
            mask = obs["action_mask"]
            return PASS_BID if mask[PASS_BID] else int(np.flatnonzero(mask)[0])

    registered("test-pass", lambda seed=None, rules=None: AlwaysPass(seed))
    pair = ev.evaluate(["test-pass"], deals=2, seed=0, progress=False, rules={"max_redeals": 2}).pairs[0]
    assert pair.truncated_tables == 4 and pair.diffs == [0.0, 0.0]
    assert pair.throw_ins_per_deal == 2 * 3  # two tables, each thrown in max_redeals + 1 times


def test_an_illegal_action_stops_the_evaluation_and_names_the_agent(registered):
    class Cheater(BaseAgent):
        def act(self, obs):
            return 69  # "trump S" whatever the phase

    registered("test-cheater", lambda seed=None, rules=None: Cheater(seed))
    with pytest.raises(RuntimeError, match="agent test-cheater at seat .* illegal action 69"):
        ev.evaluate(["test-cheater", "random"], deals=1, progress=False)


# --------------------------------------------------------------- variants, games
def test_full_games_report_game_wins():  # R8.4
    result = ev.evaluate(["heuristic", "random"], deals=3, seed=0, episode="game", progress=False,
                         rules={"target_score": 40})
    pair = result.pairs[0]
    assert pair.game_win_rate is not None and pair.game_win_rate >= 0.5
    assert pair.mean_diff > 0
    assert "game wins" in result.table()
    # A game nobody finishes within max_rounds is truncated: counted, and won by nobody.
    capped = ev.evaluate(["heuristic", "random"], deals=2, seed=0, episode="game", progress=False,
                         rules={"target_score": 1000, "max_rounds": 2}).pairs[0]
    assert capped.truncated_tables == 4 and capped.game_win_rate == 0.0 and capped.mean_diff > 0


@pytest.mark.parametrize("rules", [{"players": 6}, {"passing": False, "bidding": "auction"},
                                   {"double_run_bonus": True, "min_bid": 8}])
def test_variants_evaluate_and_the_heuristic_still_wins(rules):
    pair = ev.evaluate(["heuristic", "random"], deals=6, seed=0, progress=False, rules=rules).pairs[0]
    assert pair.mean_diff > 5


def test_bad_arguments_are_value_errors_naming_the_field():
    with pytest.raises(ValueError, match="unknown agent spec 'nobody'"):
        ev.evaluate(["heuristic", "nobody"], deals=1, progress=False)
    with pytest.raises(ValueError, match="deals 0"):
        ev.evaluate(["random"], deals=0, progress=False)
    with pytest.raises(ValueError, match="episode 'match'"):
        ev.evaluate(["random"], deals=1, episode="match", progress=False)
    with pytest.raises(ValueError, match="workers 0"):
        ev.evaluate(["random"], deals=1, workers=0, progress=False)
    with pytest.raises(ValueError, match="rules field 'players' = 5"):
        ev.evaluate(["random"], deals=1, rules={"players": 5}, progress=False)


# ---------------------------------------------------------------------- ratings
def test_bradley_terry_recovers_known_strengths():
    r = ev.bradley_terry(["a", "b"], np.array([[0, 75], [25, 0]]), prior=0)
    assert r[0].elo == 0 and abs(r[1].elo + 400 * np.log10(3)) < 1e-6
    # Three agents with win rates generated from strengths 1 : 2 : 4 are recovered in order.
    strengths = np.array([1.0, 2.0, 4.0])
    wins = np.array([[0 if i == j else 1000 * s / (s + strengths[j]) for j in range(3)] for i, s in enumerate(strengths)])
    fit = {x.agent: x.elo for x in ev.bradley_terry(["r", "m", "s"], wins, prior=0)}
    assert abs(fit["m"] - 400 * np.log10(2)) < 0.5 and abs(fit["s"] - 400 * np.log10(4)) < 0.5
    # A clean sweep stays finite thanks to the pseudo-draw.
    sweep = ev.bradley_terry(["x", "y"], np.array([[0, 50], [0, 0]]))
    assert np.isfinite(sweep[1].elo) and sweep[1].elo < 0


def test_over_seeds_means_each_seed_and_the_spread_between_them():
    s = ev.over_seeds([[1.0, 3.0], [3.0, 5.0], [2.0, 4.0]])
    assert s.means == [2.0, 4.0, 3.0] and s.mean == 3.0 and s.sd == 1.0
    # t over seeds (2 degrees of freedom: 4.303 sd/sqrt(3)) is far wider than the deals' interval of the average.
    assert abs(s.high - 3.0 - 4.3027 / np.sqrt(3)) < 1e-3 and s.paired[0] == 3.0
    assert ev.over_seeds([[1.0], [2.0, 3.0]]).paired is None  # different deals: no per-deal average
    with pytest.raises(ValueError, match="diffs has 1 seed"):
        ev.over_seeds([[1.0, 2.0]])


def test_over_seeds_study_reads_evaluate_outputs_and_signs_each_pair_against_the_opponent(tmp_path: Path):
    """benchmarks/studies/over_seeds.py: each seed's figure is its pair's mean, whichever side the opponent was."""
    import importlib.util

    script = Path(__file__).resolve().parents[1] / "benchmarks" / "studies" / "over_seeds.py"
    spec = importlib.util.spec_from_file_location("over_seeds_study", script)
    study = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(study)
    first = ev.evaluate(["heuristic", "random"], deals=6, seed=3, workers=1)
    second = ev.evaluate(["random", "greedy"], deals=6, seed=3, workers=1)  # the opponent as agent_a: the sign flips
    ev.write_outputs(first, tmp_path / "s1")
    ev.write_outputs(second, tmp_path / "s2")
    text = study.report([tmp_path / "s1", tmp_path / "s2" / "results.json"], "random")
    means = [first.pairs[0].mean_diff, -second.pairs[0].mean_diff]
    shown = [study._signed(m) for m in (*means, np.mean(means))]
    assert f"| `heuristic` | 6, seed 3 | {shown[0]} |" in text and f"| `greedy` | 6, seed 3 | {shown[1]} |" in text
    assert f"Mean over 2 seeds: **{shown[2]}" in text and "same 6 deals of seed 3" in text
    assert study._signed(-1.234) == "\N{MINUS SIGN}1.23" and study._signed(0.5) == "+0.50"
    with pytest.raises(ValueError, match="'pimc' played no pair"):
        study.report([tmp_path / "s1", tmp_path / "s2"], "pimc")
    # Three agents: the seed's network is the first one given, never the pair of the other two.
    three = {"config": {"deals": 1, "seed": 0}, "pairs": [
        {"agent_a": "net", "agent_b": "heuristic", "diffs": [2.0]}, {"agent_a": "net", "agent_b": "random", "diffs": [30.0]},
        {"agent_a": "heuristic", "agent_b": "random", "diffs": [28.0]}]}
    (tmp_path / "three.json").write_text(json.dumps(three))
    assert study.seed_row(tmp_path / "three.json", "random") == ("net", 1, 0, [30.0])
    assert study.seed_row(tmp_path / "three.json", "net") == ("heuristic", 1, 0, [-2.0])


# -------------------------------------------------------------- files and CLI
def test_cli_prints_the_table_and_writes_json_csv(tmp_path: Path, capsys):
    out = tmp_path / "eval"
    code = cli.main(["--agents", "heuristic", "random", "--deals", "4", "--seed", "2", "--out", str(out), "--no-progress"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "| heuristic | random" in printed and "Bradley-Terry" in printed
    data = json.loads((out / "results.json").read_text())
    assert data["config"]["deals"] == 4 and data["config"]["seed"] == 2
    assert len(data["pairs"]) == 1 and len(data["pairs"][0]["diffs"]) == 4
    rows = list(csv.DictReader((out / "results.csv").read_text().splitlines()))
    assert len(rows) == 1 and rows[0]["agent_a"] == "heuristic" and float(rows[0]["mean_diff"]) > 0
    assert (out / "table.md").read_text().startswith("Duplicate evaluation")
    assert [r["agent"] for r in csv.DictReader((out / "ratings.csv").read_text().splitlines())] == ["heuristic", "random"]


def test_cli_rules_options_reach_the_engine(tmp_path: Path):
    out = tmp_path / "six"
    code = cli.main(["--agents", "heuristic", "random", "--deals", "2", "--players", "6", "--passing", "false",
                     "--double-run-bonus", "--bidding", "auction", "--min-bid", "6", "--out", str(out), "--no-progress"])
    assert code == 0
    rules = json.loads((out / "results.json").read_text())["config"]["rules"]
    assert rules == {**RulesConfig().to_dict(), "players": 6, "passing": False, "double_run_bonus": True,
                     "bidding": "auction", "min_bid": 6}


def test_cli_rejects_a_bad_spec_naming_it_and_the_valid_ones(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--agents", "heuristic", "champion", "--deals", "1"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "unknown agent spec 'champion'" in err and "'random'" in err and "'ppo:PATH'" in err


def test_cli_reports_bad_rules_as_an_error(capsys):
    assert cli.main(["--agents", "random", "--deals", "1", "--min-bid", "14", "--no-progress"]) == 2
    assert "rules field 'min_bid' = 14" in capsys.readouterr().err


def test_shipped_ppo_checkpoint_plays_through_the_harness():
    ppo = pytest.importorskip("agents.ppo")
    if not Path(ppo.PRETRAINED_PATH).exists():
        pytest.skip("no shipped checkpoint in this checkout")
    pair = ev.evaluate(["ppo:pretrained", "random"], deals=2, seed=0, progress=False).pairs[0]
    assert pair.deals == 2 and np.isfinite(pair.mean_diff)


def test_cli_with_one_agent_says_it_is_a_self_play_match(capsys):
    assert cli.main(["--agents", "heuristic", "--deals", "2", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("one agent given: heuristic plays a copy of itself")


# ------------------------------------------------------------------ agent objects
def _figures(result: ev.EvaluationResult) -> str:
    """Every figure of every pair but the names, as text (NaN == NaN there)."""
    return repr([{k: v for k, v in vars(p).items() if k not in ("agent_a", "agent_b")} for p in result.pairs])


def test_agent_objects_give_the_same_results_as_their_specs():
    from agents import RandomAgent, make_agent

    by_spec = ev.evaluate(["heuristic", "random", "greedy"], deals=12, seed=4, progress=False)
    objects = [make_agent("heuristic", seed=123), RandomAgent(seed=99), "greedy"]
    by_object = ev.evaluate(objects, deals=12, seed=4, progress=False)
    assert _figures(by_object) == _figures(by_spec)  # re-seeded before every table: their own seeds do not matter
    assert [(p.agent_a, p.agent_b) for p in by_object.pairs] == [(p.agent_a, p.agent_b) for p in by_spec.pairs]
    assert by_object.config["specs"] == ["heuristic", "random", "greedy"]  # labels: JSON-safe
    assert [(r.agent, round(r.elo, 6)) for r in by_object.ratings] == [(r.agent, round(r.elo, 6)) for r in by_spec.ratings]


def test_one_object_against_itself_is_two_copies_seeded_apart():
    from agents import RandomAgent

    by_spec = ev.evaluate(["random"], deals=20, seed=1, progress=False).pairs[0]
    by_object = ev.evaluate([RandomAgent()], deals=20, seed=1, progress=False).pairs[0]
    assert (by_object.agent_a, by_object.agent_b) == ("random", "random#2")
    assert by_object.diffs == by_spec.diffs and by_object.sd > 0


def test_agent_objects_travel_to_worker_processes():
    from agents import HeuristicAgent

    one = ev.evaluate([HeuristicAgent(), "random"], deals=30, seed=5, progress=False, workers=1)
    two = ev.evaluate([HeuristicAgent(), "random"], deals=30, seed=5, progress=False, workers=2)
    assert _figures(one) == _figures(two)


def test_a_live_ppo_agent_evaluates_like_its_checkpoint():
    """What the trainer does: a PPOAgent built from the weights in memory, no checkpoint file."""
    ppo = pytest.importorskip("agents.ppo")
    if not Path(ppo.PRETRAINED_PATH).exists():
        pytest.skip("no shipped checkpoint in this checkout")
    ckpt = ppo.read_checkpoint("pretrained")
    live = ppo.PPOAgent.from_checkpoint(ckpt, source="live")
    cached = dict(duplicate._AGENT_CACHE)
    by_object = ev.evaluate([live, "heuristic"], deals=4, seed=0, progress=False, rules=ckpt["rules"])
    assert duplicate._AGENT_CACHE.keys() - cached.keys() <= {("heuristic", 1, RulesConfig.from_kwargs(ckpt["rules"]))}
    by_spec = ev.evaluate(["ppo:pretrained", "heuristic"], deals=4, seed=0, progress=False, rules=ckpt["rules"])
    assert _figures(by_object) == _figures(by_spec)
    assert by_object.pairs[0].agent_a == "ppo"


def test_a_bad_agent_entry_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match=r"agents\[1\] = 3 is not allowed"):
        ev.evaluate(["random", 3], deals=2, progress=False)
