"""Agents: the spec registry, the random agent and the heuristic's rules and legality.

Play situations are built as engine states and encoded for the acting seat, so
the agents see exactly what the environment would show them. Rules of record
are cited as R-numbers (RULES.md).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from conftest import RULE_VARIANTS

from agents import Agent, GreedyAgent, HeuristicAgent, RandomAgent, list_agents, make_agent, parse_spec, register_agent
from agents.scripted.heuristic import PARAMS_4, best_trump, choose_discards, choose_pass, declare_value, estimate_tricks
from pcr_env import engine as E
from pcr_env.actions import BID_BASE, PASS_BID, bid_action, trump_action
from pcr_env.cards import card_str, mask_of, parse_card, parse_cards
from pcr_env.config import RulesConfig
from pcr_env.engine import legal_mask
from pcr_env.observation import encode_observation

C, D, H, S = range(4)


def obs_of(state: E.GameState) -> dict[str, np.ndarray]:
    """The acting seat's observation dict, as the environment builds it."""
    return {"observation": encode_observation(state, state.current), "action_mask": legal_mask(state)}


def play_state(my_hand: str, trick: list[tuple[int, str]], trump: int, declarer: int, *,
               played: dict[int, str] | None = None, seat: int = 0, tricks_done: int = 0) -> E.GameState:
    """Seat ``seat`` to play in the PLAY phase, with ``trick`` = (seat, card) already on the table.

    Other seats' hands do not enter the acting seat's observation, so they are left empty.
    """
    state = E.new_game(RulesConfig(first_dealer=3), np.random.default_rng(0), round_number=4)
    n = state.n_players
    state.phase = E.Phase.PLAY
    state.hands = [0] * n
    state.hands[seat] = mask_of(parse_cards(my_hand))
    state.trump, state.declarer, state.high_bid = trump, declarer, 7
    state.bids = [7 if s == declarer else E.PASSED for s in range(n)]
    state.trick = [(s, parse_card(c)) for s, c in trick]
    state.played = [0] * n
    for s, c in trick:
        state.played[s] |= 1 << parse_card(c)
    for s, cards in (played or {}).items():
        state.played[s] |= mask_of(parse_cards(cards))
    state.trick_winners = [declarer] * tricks_done
    state.current = seat
    return state


def bid_state(hand: str, bids_before: list[int] | None = None) -> E.GameState:
    """Seat 0 to bid (dealer 3, so seat 0 speaks first unless ``bids_before`` come from seats 1..)."""
    cards = parse_cards(hand)
    rest = [c for c in range(52) if c not in cards]
    hands = [cards, rest[:13], rest[13:26], rest[26:39]]
    dealer = 3 if not bids_before else 3 - len(bids_before)
    state = E.new_game(RulesConfig(), np.random.default_rng(0), dealer=dealer % 4, round_number=4, hands=hands)
    for action in bids_before or []:
        E.apply_action(state, action, np.random.default_rng(0))
    assert state.current == 0 and state.phase == E.Phase.BID
    return state


# ------------------------------------------------------------------------- registry
def test_make_agent_builds_every_pinned_name_and_they_follow_the_protocol():
    assert set(list_agents()) >= {"random", "greedy", "heuristic", "ppo:PATH"}
    for spec, cls in (("random", RandomAgent), ("greedy", GreedyAgent), ("heuristic", HeuristicAgent)):
        agent = make_agent(spec, seed=3)
        assert isinstance(agent, cls) and isinstance(agent, Agent)


@pytest.mark.parametrize("spec, expected", [
    ("magic", "unknown agent spec 'magic'"),
    ("", "agent spec '' is not a non-empty string"),
    ("random:7", "agent spec 'random:7' takes no argument"),
    ("heuristic:strong", "agent spec 'heuristic:strong' takes no argument"),
    ("ppo", "agent spec 'ppo' needs an argument"),
    ("ppo:", "agent spec 'ppo:' needs an argument"),
])
def test_bad_specs_name_the_spec_and_list_the_valid_ones(spec, expected):
    with pytest.raises(ValueError) as err:
        make_agent(spec)
    message = str(err.value)
    assert expected in message
    for valid in ("'random'", "'heuristic'", "'ppo:PATH'"):
        assert valid in message


def test_ppo_spec_with_a_missing_checkpoint_names_the_path():
    with pytest.raises(ValueError, match="missing-checkpoint.pt"):
        make_agent("ppo:missing-checkpoint.pt")


def test_register_agent_adds_a_spec_every_tool_accepts():
    register_agent("test-always-first", lambda seed=None, rules=None: _FirstLegal())
    try:
        agent = make_agent("test-always-first")
        mask = np.zeros(70, np.int8)
        mask[[5, 9]] = 1
        assert agent.act({"observation": np.zeros(797, np.float32), "action_mask": mask}) == 5
        assert parse_spec("test-always-first")[0].kind == "test-always-first"
    finally:
        from agents import registry

        registry._REGISTRY.pop("test-always-first")
    with pytest.raises(ValueError, match="agent kind 'bad:kind' is not allowed"):
        register_agent("bad:kind", lambda seed=None: _FirstLegal())


def test_the_registry_passes_rules_only_to_factories_that_declare_them():
    from agents import registry

    got = {}

    def plain(seed=None):
        got["plain"] = seed
        return _FirstLegal()

    def with_rules(seed=None, rules=None):
        got["rules"] = rules
        return _FirstLegal()

    register_agent("test-no-rules", plain)
    register_agent("test-rules", with_rules)
    try:
        make_agent("test-no-rules", seed=4, rules=RulesConfig(players=6))
        make_agent("test-rules", seed=4, rules=RulesConfig(players=6))
    finally:
        registry._REGISTRY.pop("test-no-rules")
        registry._REGISTRY.pop("test-rules")
    assert got == {"plain": 4, "rules": RulesConfig(players=6)}
    assert isinstance(make_agent("random", rules=RulesConfig()), RandomAgent)  # RandomAgent(seed) takes no rules


def test_make_agents_normalises_seats_and_seeds_each_from_the_seed_and_the_seat():
    from agents import make_agents
    from pcr_env.seating import derive_seed

    built = make_agents(["random", "heuristic", "random"], seats=(1, 2, 3), seed=9)
    assert [type(built[s]) for s in (1, 2, 3)] == [RandomAgent, HeuristicAgent, RandomAgent]
    assert built[1] is not built[3] and built[1].seed == derive_seed(9, 1) and built[3].seed == derive_seed(9, 3)
    mine = RandomAgent(seed=0)
    assert make_agents({1: mine, 3: "greedy"}, seats=(1, 3), seed=2)[1] is mine and mine.seed == derive_seed(2, 1)
    with pytest.raises(ValueError, match="agents has 2 entries: expected one per other seat"):
        make_agents(["random"] * 2, seats=(1, 2, 3))
    with pytest.raises(ValueError, match=r"agents\[2\] = 5 is not allowed"):
        make_agents(5, seats=(2,))
    with pytest.raises(ValueError, match="unknown agent spec 'wizard'"):
        make_agents("wizard", seats=(1,))


@pytest.mark.parametrize("spec", ["random", "greedy", "heuristic"])
def test_get_state_and_set_state_restore_the_random_streams(spec):
    import pickle

    agent = make_agent(spec, seed=5)
    agent.rng.random(3)
    state = agent.get_state()
    assert set(state) == {"rng"} and pickle.loads(pickle.dumps(state)) == state  # plain data
    first = agent.rng.random(10)
    agent.set_state(state)
    assert np.array_equal(agent.rng.random(10), first)
    agent.set_state({})  # nothing to restore: nothing changes
    assert isinstance(agent, Agent)
    if spec == "random":  # and the actions follow the stream
        rng = np.random.default_rng(0)
        masks = (rng.random((40, 70)) < 0.2).astype(np.int8)
        masks[:, 52] = 1
        obs = np.zeros((40, 797), np.float32)
        state = agent.get_state()
        played = agent.act_batch(obs, masks)
        agent.set_state(state)
        assert np.array_equal(agent.act_batch(obs, masks), played)


class _FirstLegal:
    def act(self, obs: dict[str, np.ndarray]) -> int:
        return int(np.flatnonzero(obs["action_mask"])[0])

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return np.array([int(np.flatnonzero(m)[0]) for m in masks])


# ------------------------------------------------------------------------- random
def test_random_agent_is_uniform_over_the_legal_actions_and_seeded():
    mask = np.zeros(70, np.int8)
    mask[[3, 40, 65]] = 1
    obs = {"observation": np.zeros(797, np.float32), "action_mask": mask}
    agent = RandomAgent(seed=7)
    counts = Counter(agent.act(obs) for _ in range(3000))
    assert set(counts) == {3, 40, 65}
    # 3000 draws, p = 1/3: sd ~ 26, so +-150 is ~6 sd (and the seed is fixed).
    assert all(abs(n - 1000) < 150 for n in counts.values()), counts
    a, b = RandomAgent(seed=11), RandomAgent(seed=11)
    assert [a.act(obs) for _ in range(50)] == [b.act(obs) for _ in range(50)]
    a.reset(5)
    b.reset(5)
    assert [a.act(obs) for _ in range(20)] == [b.act(obs) for _ in range(20)]
    assert [RandomAgent(seed=1).act(obs) for _ in range(30)] != [RandomAgent(seed=2).act(obs) for _ in range(30)]


def test_random_act_batch_returns_legal_actions_for_every_row():
    rng = np.random.default_rng(0)
    masks = (rng.random((500, 70)) < 0.1).astype(np.int8)
    masks[np.arange(500), rng.integers(0, 70, 500)] = 1
    actions = RandomAgent(seed=0).act_batch(np.zeros((500, 797), np.float32), masks)
    assert actions.shape == (500,) and masks[np.arange(500), actions].all()
    with pytest.raises(ValueError, match="have no legal action"):
        RandomAgent(seed=0).act_batch(np.zeros((2, 797)), np.zeros((2, 70), np.int8))


def test_agents_refuse_a_mask_without_legal_actions():
    for spec in ("random", "heuristic"):
        with pytest.raises(ValueError, match="no legal action"):
            make_agent(spec).act({"observation": np.zeros(797, np.float32), "action_mask": np.zeros(70, np.int8)})


# --------------------------------------------------------------- heuristic: legality
def _decisions(config: RulesConfig, seed: int, rounds: int, heuristic_share: float):
    """Play rounds with a mix of the tested agent's and random actions; yield (phase, obs) before each action."""
    rng = np.random.default_rng(seed)
    rand = RandomAgent(seed=seed)
    for r in range(rounds):
        state = E.new_game(config, rng, round_number=1 + r % 4)
        while state.phase < E.Phase.ROUND_END:
            obs = obs_of(state)
            choice = yield state.phase, obs  # the tested agent's decision, sent back by the test
            action = choice if rng.random() < heuristic_share else rand.act(obs)
            E.apply_action(state, action, rng)


VARIANT_IDS = [",".join(f"{k}={x}" for k, x in v.items()) or "default" for v in RULE_VARIANTS + [{"min_bid": 9}]]


@pytest.mark.parametrize("rules", RULE_VARIANTS + [{"min_bid": 9}], ids=VARIANT_IDS)
@pytest.mark.parametrize("spec", ["heuristic", "greedy"])
def test_scripted_agents_never_pick_a_masked_action_in_any_phase(rules, spec):
    """Thousands of decisions per variant, in states reached by random play, by the agent's own play, and mixed."""
    config = RulesConfig(**rules)
    heuristic = make_agent(spec, rules=config)
    per_phase: Counter = Counter()
    for i, share in enumerate((0.0, 0.6, 1.0)):
        gen = _decisions(config, seed=100 + i, rounds=12, heuristic_share=share)
        try:
            phase, obs = next(gen)
            while True:
                action = heuristic.act(obs)
                assert obs["action_mask"][action] == 1, (phase, action)
                per_phase[phase] += 1
                phase, obs = gen.send(action)
        except StopIteration:
            pass
    assert sum(per_phase.values()) >= 2000
    expected = {E.Phase.BID, E.Phase.TRUMP, E.Phase.PLAY}
    if config.passing:
        expected.add(E.Phase.PASS)
    if config.players == 6:
        expected.add(E.Phase.DISCARD)
    assert set(per_phase) == expected, per_phase
    assert min(per_phase.values()) >= 30, per_phase


def test_heuristic_is_deterministic_whatever_the_seed():
    config = RulesConfig()
    rng = np.random.default_rng(4)
    state = E.new_game(config, rng)
    agents = [HeuristicAgent(seed=s) for s in (None, 0, 99)]
    while state.phase < E.Phase.ROUND_END:
        obs = obs_of(state)
        choices = {a.act(obs) for a in agents}
        assert len(choices) == 1
        E.apply_action(state, choices.pop(), rng)


def test_heuristic_act_batch_matches_act():
    config = RulesConfig()
    rng = np.random.default_rng(8)
    state = E.new_game(config, rng)
    rows, masks = [], []
    agent = HeuristicAgent()
    while state.phase < E.Phase.ROUND_END:
        obs = obs_of(state)
        rows.append(obs["observation"])
        masks.append(obs["action_mask"])
        E.apply_action(state, agent.act(obs), rng)
    batch = agent.act_batch(np.stack(rows), np.stack(masks))
    assert batch.tolist() == [agent.act({"observation": o, "action_mask": m}) for o, m in zip(rows, masks)]


# ------------------------------------------------------------ heuristic: valuation
def test_valuation_counts_aces_guarded_kings_and_trump_length():
    strong = parse_cards("AS KS QS JS 10S 9S AH KH AD KD AC 2C 3C")
    weak = parse_cards("2S 3S 4H 5H 6H 7D 8D 9D 2C 3C 4C 5C 6C")
    assert estimate_tricks(strong, S) > 10 > 2 > estimate_tricks(weak, S)
    # A guarded king is worth more than a bare one; trump length adds tricks.
    assert estimate_tricks(parse_cards("KH 2H"), S) > estimate_tricks(parse_cards("KH"), S)
    assert estimate_tricks(parse_cards("2S 3S 4S 5S 6S 7S"), S) > estimate_tricks(parse_cards("2S 3S 4S"), S)
    # A void in a side suit adds cutting value once trumps are long enough.
    assert estimate_tricks(parse_cards("AS 9S 8S 7S 2H 3H"), S) > estimate_tricks(parse_cards("AS 9S 8S 2H 3H 2D"), S)


def test_trump_goes_to_the_longest_strongest_suit():  # R5.1
    hand = parse_cards("AH KH QH 9H 7H 4H KS 2S 9D 3D 5C 4C 2C")
    assert best_trump(hand)[0] == H
    state = E.new_game(RulesConfig(first_dealer=0), np.random.default_rng(0), round_number=4,
                       hands=[hand] + [[c for c in range(52) if c not in hand][i * 13:(i + 1) * 13] for i in range(3)])
    rng = np.random.default_rng(0)
    for action in (PASS_BID, PASS_BID, PASS_BID, bid_action(7)):  # seat 1, 2, 3 pass; seat 0 (dealer) bids
        E.apply_action(state, action, rng)
    assert state.phase == E.Phase.TRUMP and state.current == 0
    assert HeuristicAgent().act(obs_of(state)) == trump_action("H")


# ---------------------------------------------------------------- heuristic: passing
def test_pass_to_partner_builds_a_void_and_keeps_the_trump_suit():  # R3.1, seed strategy notes
    hand = tuple(sorted(parse_cards("AS KS QS 9S 7S 5S 3S AH KH 8H 6D 4D 2C")))
    chosen = {card_str(c) for c in choose_pass(hand, to_partner=True)}
    assert {"6D", "4D", "2C"} == chosen  # both short weak side suits go: two voids
    assert not any(c.endswith("S") for c in chosen)


def test_pass_to_an_opponent_keeps_honours():
    hand = tuple(sorted(parse_cards("AS KS QS 9S 7S AH KH 8H 6H AD 4D KC 2C")))
    chosen = [card_str(c) for c in choose_pass(hand, to_partner=False)]
    assert not any(c[:-1] in ("A", "K", "Q") for c in chosen), chosen
    assert len(chosen) == 3


def test_pass_picks_come_one_at_a_time_from_one_plan():
    """R3.1: three single-card actions; each pick is recomputed from hand + picks so far."""
    state = E.new_game(RulesConfig(first_dealer=3), np.random.default_rng(2), round_number=1)
    agent = HeuristicAgent()
    seat = state.current
    full = tuple(sorted(E.cards_of(state.hands[seat])))
    plan = set(choose_pass(full, to_partner=True))
    picks = set()
    for _ in range(3):
        assert state.current == seat
        card = agent.act(obs_of(state))
        picks.add(card)
        E.apply_action(state, card, np.random.default_rng(0))
    assert picks == plan


def test_six_player_declarer_discards_low_side_cards_and_keeps_trumps():  # R9.3
    hand = tuple(sorted(parse_cards("AS KS 9S 5S 3S AH 7H 4H 2D 5D 6C 3C")))
    thrown = {card_str(c) for c in choose_discards(hand, S, 4)}
    assert not thrown & {"AS", "KS", "9S", "5S", "3S", "AH"}
    assert thrown == {"2D", "5D", "3C", "6C"}  # two voids


# ---------------------------------------------------------------- heuristic: bidding
def test_bids_a_strong_hand_and_passes_a_weak_one():  # R4.1, R4.2
    strong = bid_state("AS KS QS JS 10S 9S AH KH AD KD AC 2C 3C")
    action = HeuristicAgent().act(obs_of(strong))
    assert BID_BASE + 6 <= action < PASS_BID  # some bid of 7 or more
    weak = bid_state("2S 3S 4H 5H 6H 7D 8D 9D 2C 3C 4C 5C 6C")
    assert HeuristicAgent().act(obs_of(weak)) == PASS_BID


def test_bidding_weighs_the_minimum_bid_against_sure_tricks():
    # The value of declaring rises with the hand and falls with the level.
    values = [declare_value(PARAMS_4, t, 7, 4) for t in range(0, 11)]
    assert values == sorted(values)
    assert declare_value(PARAMS_4, 6.0, 7, 4) > declare_value(PARAMS_4, 6.0, 9, 4)
    # A middling hand overcalls an opponent's 7 but not partner's 7.
    hand = "AS QS 9S 7S 5S 3S 9H 8H 6D 4D KC 5C 2C"
    opp = bid_state(hand, [bid_action(7)])  # seat 3 (right-hand opponent) bid 7
    partner = bid_state(hand, [bid_action(7), PASS_BID])  # seat 2 (partner) bid 7, seat 3 passed
    agent = HeuristicAgent()
    assert agent.act(obs_of(opp)) == bid_action(8)
    assert agent.act(obs_of(partner)) == PASS_BID


# ------------------------------------------------------------------- heuristic: play
@pytest.mark.parametrize("name, state, expected", [
    # Partner (seat 2) wins with the ace and I play last: do not overtake, play low.
    ("partner winning", lambda: play_state("KH 3H 5C 6C", [(1, "2H"), (2, "AH"), (3, "5H")], S, 1), "3H"),
    # Last to play behind an opponent's card: win as cheaply as possible.
    ("fourth hand cheapest", lambda: play_state("AH KH QH 4H 2C", [(1, "10H"), (2, "2H"), (3, "3H")], S, 1), "QH"),
    # Void in the led suit with an opponent winning: cut with the cheapest trump (R6.3).
    ("cut when void", lambda: play_state("2H 9H 5C 6C", [(1, "AS"), (2, "3S"), (3, "4S")], H, 1), "2H"),
    # An opponent has cut already: overcut.
    ("overcut", lambda: play_state("2H 9H 5C 6C", [(1, "AS"), (2, "3S"), (3, "5H")], H, 1), "9H"),
    # Void, partner's ace of the led suit is safe: keep trumps, throw a low card.
    ("no cut of partner", lambda: play_state("2H 9H 5C 6C", [(1, "2S"), (2, "AS"), (3, "4S")], H, 1), "5C"),
    # Second hand low: an opponent leads a small card, partner still to play.
    ("second hand low", lambda: play_state("KD QD 2D 5C", [(3, "5D")], S, 1), "2D"),
    # Third hand high: partner led low, the opponent on my right played a 9: the cheaper of K-Q.
    ("third hand high", lambda: play_state("KC QC 4C 5D", [(2, "3C"), (3, "9C")], S, 1), "QC"),
    # Declarer with length and the top trumps draws trumps (the lowest of equal top cards).
    ("draw trumps", lambda: play_state("AS KS QS 5S 4S 2H 3H 4D 5D 6D 7C 8C 9C", [], S, 0), "QS"),
    # Cash a boss card the opponents cannot cut before anything else (defending, no trumps in hand).
    ("cash boss", lambda: play_state("AD 4D 2H 3C", [], S, 1), "AD"),
    # Defending after the opponents showed out of hearts: do not lead a suit they can cut.
    ("avoid their cut", lambda: play_state("9H 8H 7H 6C 5C", [], S, 1, played={1: "2S", 3: "3S"}), "5C"),
])
def test_play_rules(name, state, expected):  # R6.1-R6.4
    s = state()
    if name == "avoid their cut":
        s.voids[1] |= 1 << H
        s.voids[3] |= 1 << H
    action = HeuristicAgent().act(obs_of(s))
    assert card_str(action) == expected, name


def test_breaks_an_opponent_run_from_second_hand():  # R7.1: runs are team-based
    # Opponents (odd seats) took the last two tricks; second hand holds the boss ace.
    s = play_state("AD 2D 5C 6C 7C", [(3, "5D")], S, 1, tricks_done=2)
    s.trick_winners = [1, 3]
    s.run_team, s.run_length = 1, 2
    s.team_tricks = [0, 2]
    assert card_str(HeuristicAgent().act(obs_of(s))) == "AD"
    s.trick_winners, s.run_team, s.run_length, s.team_tricks = [0, 2], 0, 2, [2, 0]
    assert card_str(HeuristicAgent().act(obs_of(s))) == "2D"


def test_heuristic_reads_only_the_observation():
    """Two states that differ only in hidden cards give the same decision."""
    rng = np.random.default_rng(5)
    state = E.new_game(RulesConfig(), rng)
    agent = HeuristicAgent()
    while state.phase < E.Phase.ROUND_END:
        seat = state.current
        other = state.copy()
        a, b = (seat + 1) % 4, (seat + 3) % 4
        other.hands[a], other.hands[b] = state.hands[b], state.hands[a]  # the opponents' hidden hands swapped
        assert agent.act(obs_of(state)) == agent.act({"observation": encode_observation(other, seat),
                                                      "action_mask": legal_mask(state)})
        E.apply_action(state, agent.act(obs_of(state)), rng)
