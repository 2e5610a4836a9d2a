"""The world sampler (pcr_env.worlds): consistent, exactly uniform, blind to hidden information.

* property: over seeded random games of every rules variant, each sampled world agrees with
  everything the observer knows (own cards, public record, hand sizes, voids R6.2, passed
  cards R3.3, kitty/discards R9.3, every card once), re-encodes to the very same observation,
  agrees with the action mask and can be played on to the end of the round;
* uniformity: on small late positions (four players; six players with a hidden discard pile
  and observer-passed cards that the declarer may have discarded) the empirical distribution
  matches a brute-force enumeration (chi-square), and the count matches it exactly;
* leaks: changing only hidden information leaves the samples of a fixed seed unchanged;
* six players: kitty and discards for the declarer and for the other seats.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest
from conftest import RULE_VARIANTS, random_game
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from pcr_env import engine as E
from pcr_env.cards import FULL_DECK, NUM_RANKS, SUIT_MASKS, cards_of
from pcr_env.config import RulesConfig
from pcr_env.engine import PassDirection, Phase
from pcr_env.observation import encode_observation
from pcr_env.worlds import WorldSampler, count_worlds, sample_world, sample_worlds

TAKEN = (Phase.TRUMP, Phase.DISCARD, Phase.PLAY, Phase.ROUND_END, Phase.GAME_OVER)


def obs_of(state: E.GameState, seat: int) -> dict:
    """What the env gives ``seat``: its observation and its action mask (all zeros when it is not to act)."""
    mask = E.legal_mask(state) if state.current == seat else np.zeros(E.NUM_ACTIONS, np.int8)
    return {"observation": encode_observation(state, seat), "action_mask": mask}


def options_of(state: E.GameState, seat: int) -> dict:
    """The public facts the observation does not carry, for an observer that is not to act."""
    opts = {"seat": seat}
    if state.phase == Phase.PASS and state.current != seat:
        opts["current"] = state.current
        opts["current_picks"] = state.passed[state.current].bit_count()
    if state.phase == Phase.DISCARD and seat != state.declarer:
        opts["discards_done"] = state.discards.bit_count()
    return opts


def holdings(state: E.GameState, s: int) -> int:
    h = state.hands[s] | state.played[s]
    if s == state.declarer and state.config.kitty_size and state.phase in TAKEN:
        h |= state.discards
    return h


def check_world(world: E.GameState, truth: E.GameState, seat: int, obs: dict) -> None:  # noqa: C901
    """Every fact ``seat`` knows holds in ``world`` (``truth`` supplies only public facts and ``seat``'s own)."""
    rules, n = truth.config, truth.config.players
    assert np.array_equal(encode_observation(world, seat), obs["observation"])
    # public record and own cards
    for name in ("phase", "dealer", "redeals", "bids", "out", "high_bid", "declarer", "trump", "trick", "played",
                 "voids", "trick_winners", "team_tricks", "scores", "run_team", "run_length", "pass_direction"):
        assert getattr(world, name) == getattr(truth, name), name
    if rules.passing:
        assert (world.round_number - truth.round_number) % 4 == 0
    assert world.hands[seat] == truth.hands[seat]
    assert world.passed[seat] == truth.passed[seat] and world.received[seat] == truth.received[seat]
    # hand sizes, voids (R6.2)
    for s in range(n):
        assert world.hands[s].bit_count() == truth.hands[s].bit_count(), s
        for j in range(4):
            if world.voids[s] >> j & 1:
                assert not world.hands[s] & SUIT_MASKS[j], (s, j)
    # every card exactly once
    taken = rules.kitty_size and truth.phase in TAKEN and truth.high_bid
    parts = list(world.hands) + list(world.played) + [world.discards]
    if world.phase == Phase.PASS:
        parts += list(world.passed)
    if rules.kitty_size and not taken:
        parts.append(world.kitty)
    union = 0
    for p in parts:
        assert not union & p
        union |= p
    assert union == FULL_DECK
    assert world.kitty.bit_count() == rules.kitty_size
    assert world.discards.bit_count() == truth.discards.bit_count()
    if seat == truth.declarer:
        assert world.discards == truth.discards
    # passing (R3.1-R3.3)
    if world.phase == Phase.PASS:
        assert world.pass_done == truth.pass_done
        assert all(world.received[s] == 0 for s in range(n))
        assert [world.passed[s].bit_count() for s in range(n)] == [truth.passed[s].bit_count() for s in range(n)]
    elif truth.pass_direction != PassDirection.NONE:
        off = E.PASS_OFFSET[truth.pass_direction]
        for s in range(n):
            r = (s + off) % n
            assert world.passed[s].bit_count() == 3 and world.received[r] == world.passed[s]
            assert world.passed[s] & ~holdings(world, r) == 0  # what s passed is with its receiver
        R = (seat + off) % n
        where = holdings(world, R)
        assert truth.passed[seat] & ~where == 0
        if not (R == truth.declarer and rules.kitty_size):
            assert truth.passed[seat] & ~(world.hands[R] | world.played[R]) == 0  # still in R's hand until played
    else:
        assert all(p == 0 for p in world.passed) and all(r == 0 for r in world.received)
    if taken:  # R9.3: the kitty went into the declarer's hand, none of it received in the exchange
        d = truth.declarer
        assert world.kitty & ~holdings(world, d) == 0 and not world.kitty & world.received[d]
    # the seat to act and its legal actions
    assert world.current == truth.current
    if truth.current == seat:
        assert E.legal_actions(world) == np.flatnonzero(obs["action_mask"]).tolist()


def play_out(world: E.GameState, rng: np.random.Generator) -> None:
    """Random legal moves from ``world`` until the round is scored (or thrown in, R4.4)."""
    state = world.copy()
    redeals, steps = state.redeals, 0
    while state.phase not in (Phase.ROUND_END, Phase.GAME_OVER) and state.redeals == redeals:
        legal = E.legal_actions(state)
        assert legal
        E.apply_action(state, legal[rng.integers(len(legal))], rng)
        steps += 1
        assert steps < 200


@pytest.mark.parametrize("rules", RULE_VARIANTS, ids=[str(v) for v in RULE_VARIANTS])
def test_every_world_is_consistent_with_the_observer(rules):
    config = RulesConfig(target_score=40, **rules)
    rng = np.random.default_rng(7)
    seen = Counter()
    for game in range(3):
        for i, (state, _, _, _) in enumerate(random_game(config, 100 + game, max_rounds=2, pass_bid_prob=0.3)):
            if state.phase == Phase.GAME_OVER and state.truncated:
                continue
            seats = [state.current] if state.current >= 0 else []
            seats.append(int(rng.integers(config.players)))  # and someone who may not be to act
            for seat in seats:
                obs = obs_of(state, seat)
                worlds = sample_worlds(obs, config, rng, 4, **options_of(state, seat))
                for w in worlds:
                    check_world(w, state, seat, obs)
                if i % 3 == 0 and state.phase not in (Phase.ROUND_END, Phase.GAME_OVER):
                    play_out(worlds[0], rng)
                seen[state.phase] += 1
    assert {Phase.PASS if config.passing else Phase.BID, Phase.BID, Phase.TRUMP, Phase.PLAY} <= set(seen)
    if config.kitty_size:
        assert seen[Phase.DISCARD]


@settings(max_examples=15)
@given(variant=st.sampled_from(RULE_VARIANTS), seed=st.integers(0, 10**6), cut=st.integers(0, 120))
def test_worlds_at_a_random_position_hypothesis(variant, seed, cut):
    config = RulesConfig(**variant)
    for i, (state, _, _, _) in enumerate(random_game(config, seed, max_rounds=1)):
        if i == cut or state.phase == Phase.ROUND_END:
            break
    if state.phase in (Phase.ROUND_END, Phase.GAME_OVER):
        return
    seat = state.current
    obs = obs_of(state, seat)
    for w in sample_worlds(obs, config, seed, 3, seat=seat):
        check_world(w, state, seat, obs)
        play_out(w, np.random.default_rng(seed))


def test_seed_and_generator_reproduce_and_a_single_world_matches():
    config = RulesConfig()
    state = next(s for s, *_ in random_game(config, 3) if s.phase == Phase.PLAY and len(s.trick_winners) == 4)
    obs = obs_of(state, state.current)
    a = sample_worlds(obs, config, 11, 5, seat=state.current)
    b = sample_worlds(obs, config, np.random.default_rng(11), 5, seat=state.current)
    assert [w.hands for w in a] == [w.hands for w in b]
    one = sample_world(obs, config, 11, seat=state.current)
    assert one.hands == sample_world(obs, config, 11, seat=state.current).hands
    check_world(one, state, state.current, obs)
    assert len({tuple(w.hands) for w in sample_worlds(obs, 4, 1, 50, seat=state.current)}) > 1
    with pytest.raises(ValueError):
        sample_worlds(obs, RulesConfig(players=6), 0, 1)


# ================================================================= exact uniformity
def enumerate_worlds(truth: E.GameState, seat: int) -> list[tuple]:
    """Every placement of the cards ``seat`` cannot see, by brute force: ``(hands of the others, discards)``."""
    rules, n = truth.config, truth.config.players
    d = truth.declarer
    pile = rules.kitty_size and seat != d and truth.discards
    others = [s for s in range(n) if s != seat]
    hidden = 0
    for s in others:
        hidden |= truth.hands[s]
    if pile:
        hidden |= truth.discards
    off = E.PASS_OFFSET.get(truth.pass_direction)
    R = None if off is None else (seat + off) % n
    mine = truth.passed[seat] & hidden  # my passes, still unplayed: in R's hand (or R's discards, R9.3)
    bins = others + (["pile"] if pile else [])
    size = {s: truth.hands[s].bit_count() for s in others} | {"pile": truth.discards.bit_count()}

    def may_hold(b, c):
        if mine >> c & 1 and b != R and not (b == "pile" and R == d):
            return False
        return b == "pile" or not truth.voids[b] >> (c // NUM_RANKS) & 1

    cards = cards_of(hidden)
    out = []

    def rec(k, left, acc):
        if k == len(bins):
            if not left:
                hands = {b: m for b, m in zip(bins, acc)}
                out.append((tuple(hands[s] for s in others), hands.get("pile", truth.discards if seat == d else 0)))
            return
        b = bins[k]
        ok = [c for c in left if may_hold(b, c)]
        for combo in itertools.combinations(ok, size[b]):
            m = sum(1 << c for c in combo)
            rec(k + 1, [c for c in left if not m >> c & 1], acc + [m])

    rec(0, cards, [])
    return out


def find_position(config: RulesConfig, want, seeds=range(400)) -> tuple[E.GameState, int]:
    for seed in seeds:
        for state, _, _, _ in random_game(config, seed, max_rounds=1):
            if state.phase == Phase.PLAY and want(state):
                return state.copy(), state.current
    raise AssertionError("no such position")


def assert_uniform(state: E.GameState, seat: int, samples: int, seed: int) -> int:
    config = state.config
    exact = enumerate_worlds(state, seat)
    obs = obs_of(state, seat)
    assert count_worlds(obs, config, seat=seat) == pytest.approx(len(exact), rel=1e-12)
    others = [s for s in range(config.players) if s != seat]
    worlds = sample_worlds(obs, config, seed, samples, seat=seat)
    counts = Counter((tuple(w.hands[s] for s in others), w.discards) for w in worlds)
    support = set(exact)
    assert set(counts) <= support
    observed = np.array([counts.get(x, 0) for x in exact], float)
    stat, p = chisquare(observed)  # expected: uniform over the enumeration
    tv = 0.5 * np.abs(observed / samples - 1 / len(exact)).sum()
    assert p > 1e-3, (p, len(exact), tv)
    return len(exact)


def test_uniform_over_the_exact_enumeration_four_players():
    config = RulesConfig(passing=False)

    def want(s):  # late, with another seat void in a suit whose cards are still hidden: uneven constraints
        hidden = sum(s.hands[p] for p in range(4) if p != s.current)
        return len(s.trick_winners) == 10 and not s.trick and any(
            s.voids[p] >> j & 1 and hidden & SUIT_MASKS[j] for p in range(4) if p != s.current for j in range(4))

    state, seat = find_position(config, want)
    cells = assert_uniform(state, seat, 20000, seed=1)
    assert 10 < cells < math.factorial(9) // math.factorial(3) ** 3  # the voids cut the 1680 free deals


def test_uniform_with_passed_cards_four_players():
    config = RulesConfig()  # round 1: partner passing; my passes pinned in my partner's hand

    def want(s):
        seat = s.current
        return len(s.trick_winners) == 10 and s.passed[seat] & s.hands[(seat + 2) % 4]

    state, seat = find_position(config, want)
    assert_uniform(state, seat, 20000, seed=2)


def test_uniform_six_players_hidden_discards_and_passes_the_declarer_may_have_discarded():
    config = RulesConfig(players=6)  # round 1: partner passing, seat + 2

    def want(s):
        seat = s.current
        R = (seat + 2) % 6
        return (len(s.trick_winners) == 7 and R == s.declarer and s.passed[seat] & s.discards
                and s.passed[seat] & ~s.played[R] & ~s.discards)

    state, seat = find_position(config, want, seeds=range(3000))
    assert_uniform(state, seat, 30000, seed=3)


# ================================================================= no leaks
def relabel(state: E.GameState, x: int, y: int) -> E.GameState:
    """Swap cards ``x`` and ``y`` in every hidden field (hands, passes, kitty, discards)."""
    def sw(m):
        bx, by = m >> x & 1, m >> y & 1
        return m & ~((1 << x) | (1 << y)) | (bx << y) | (by << x)

    twin = state.copy()
    twin.hands = [sw(m) for m in state.hands]
    twin.passed = [sw(m) for m in state.passed]
    twin.received = [sw(m) for m in state.received]
    twin.kitty, twin.discards = sw(state.kitty), sw(state.discards)
    return twin


@pytest.mark.parametrize("rules", RULE_VARIANTS, ids=[str(v) for v in RULE_VARIANTS])
def test_hidden_information_does_not_change_the_samples(rules):
    config = RulesConfig(**rules)
    rng = np.random.default_rng(5)
    changed = picked = 0
    for state, _, _, _ in random_game(config, 21, max_rounds=1):
        if state.phase in (Phase.ROUND_END, Phase.GAME_OVER) or rng.random() < 0.7:
            continue
        seat, n = state.current, config.players
        # two unknown cards in the hands of two other seats that may hold each other's suit
        mine = state.passed[seat] | state.received[seat]
        cand = [(s, c) for s in range(n) if s != seat for c in cards_of(state.hands[s] & ~mine)]
        twins = []
        for (s1, x), (s2, y) in itertools.combinations(cand, 2):
            if s1 != s2 and not state.voids[s1] >> (y // NUM_RANKS) & 1 and not state.voids[s2] >> (x // NUM_RANKS) & 1:
                twins.append(relabel(state, x, y))
                break
        pickers = [s for s in range(n) if s != seat and state.phase == Phase.PASS and state.passed[s]]
        for s in pickers[:1]:  # another pick by a seat that already picked
            twin = state.copy()
            x, y = cards_of(state.passed[s])[0], cards_of(state.hands[s])[0]
            twin.passed[s] ^= (1 << x) | (1 << y)
            twin.hands[s] ^= (1 << x) | (1 << y)
            twins.append(twin)
            picked += 1
        base = sample_worlds(obs_of(state, seat), config, 99, 6, seat=seat)
        for twin in twins:
            assert np.array_equal(encode_observation(twin, seat), encode_observation(state, seat))
            again = sample_worlds(obs_of(twin, seat), config, 99, 6, seat=seat)
            assert [(w.hands, w.passed, w.received, w.kitty, w.discards) for w in again] == \
                [(w.hands, w.passed, w.received, w.kitty, w.discards) for w in base]
            assert twin.hands != state.hands or twin.passed != state.passed
            changed += 1
    assert changed >= 5 and (picked >= 1 or not config.passing)
    # positive control: a visible change (the observer's own hand) does change the samples
    state = E.new_game(config, np.random.default_rng(0))
    seat = state.current
    other = (seat + 1) % config.players
    x, y = cards_of(state.hands[seat])[0], cards_of(state.hands[other])[0]
    twin = relabel(state, x, y)
    a = sample_worlds(obs_of(state, seat), config, 99, 3, seat=seat)
    b = sample_worlds(obs_of(twin, seat), config, 99, 3, seat=seat)
    assert [w.hands for w in a] != [w.hands for w in b]


# ================================================================= six players: kitty and discards (R9.3)
def six_player_state(phase: Phase, seed: int = 0) -> E.GameState:
    config = RulesConfig(players=6)
    for s in range(seed, seed + 200):
        for state, _, _, _ in random_game(config, s, max_rounds=1):
            if state.phase == phase and (phase != Phase.DISCARD or state.discards.bit_count() == 2):
                return state.copy()
    raise AssertionError(phase)


@pytest.mark.parametrize("phase", [Phase.PASS, Phase.BID, Phase.TRUMP, Phase.DISCARD, Phase.PLAY])
def test_six_players_kitty_and_discards(phase):
    state = six_player_state(phase)
    config, d = state.config, state.declarer
    for seat in range(6):
        obs = obs_of(state, seat)
        opts = options_of(state, seat)
        worlds = sample_worlds(obs, config, seat, 40, **opts)
        for w in worlds:
            check_world(w, state, seat, obs)
        kitties = {w.kitty for w in worlds}
        if phase in (Phase.PASS, Phase.BID):  # nobody has seen the kitty: a hidden pile, in no hand
            assert len(kitties) > 1
            assert all(not w.kitty & (w.hands[s] | w.passed[s]) for w in worlds for s in range(6))
            continue
        if seat == d:  # the declarer's own discards; the kitty (not in the observation) among its holdings
            assert all(w.discards == state.discards for w in worlds)
            fixed = sample_worlds(obs, config, 1, 5, kitty=state.kitty, **opts)
            assert all(w.kitty == state.kitty for w in fixed)
            for w in fixed:
                check_world(w, state, seat, obs)
        else:  # a hidden pile of as many cards, in no hand; the kitty among the declarer's holdings
            if state.discards:
                assert len({w.discards for w in worlds}) > 1
            for w in worlds:
                assert not w.discards & (w.hands[d] | w.played[d])
                assert w.kitty & ~(w.hands[d] | w.played[d] | w.discards) == 0


def test_six_players_a_pass_to_the_declarer_may_be_in_its_discards():
    config = RulesConfig(players=6)

    def want(s):
        seat = s.current
        R = (seat + 2) % 6
        return R == s.declarer and s.passed[seat] & ~s.played[R] and not s.trick_winners

    state, seat = find_position(config, want, seeds=range(3000))
    d = state.declarer
    worlds = sample_worlds(obs_of(state, seat), config, 4, 400, seat=seat)
    mine = state.passed[seat] & ~state.played[d]
    in_pile = [bool(w.discards & mine) for w in worlds]
    assert any(in_pile) and not all(in_pile)
    assert all(mine & ~(w.hands[d] | w.discards) == 0 for w in worlds)


def test_world_sampler_reuses_its_tables():
    config = RulesConfig()
    state = E.new_game(config, np.random.default_rng(4))
    sampler = WorldSampler(obs_of(state, state.current), config, seat=state.current)
    assert sampler.count == pytest.approx(math.comb(39, 13) * math.comb(26, 13), rel=1e-12)
    a, b = sampler.sample(0, 3), sampler.sample(0, 3)
    assert [w.hands for w in a] == [w.hands for w in b]
