"""Property tests (hypothesis) over random full games of random rule variants.

Every game is played to its end with random legal actions; after every action
the engine is checked against a reference written here from RULES.md alone
(it uses none of the engine's rule helpers):

* cards are conserved: every card is in exactly one place (R1.4, R2.2, R3.1, R9.3);
* the legal actions are exactly the rules' legal set (R3-R6, R9.3), and ``is_legal`` agrees;
* tricks are won per R6.4, sum to the tricks played, and a round has 13 (8) of them (R6.5);
* round scores follow R7-R8.3 and accumulate (R8.4);
* the game ends exactly when R8.4 (or the R4.4/R8.4 truncations) says so.

The environment-level property checks the action mask against the same
reference and the rewards against the scores.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pcr_env import engine as E
from pcr_env import pass_cut_run_v0
from pcr_env.actions import NUM_ACTIONS, PASS_BID
from pcr_env.cards import FULL_DECK, NUM_CARDS
from pcr_env.config import RulesConfig
from pcr_env.engine import Phase

BID_BASE, TRUMP_BASE = 52, 66


@st.composite
def rules_configs(draw) -> RulesConfig:
    players = draw(st.sampled_from([4, 6]))
    tricks = 13 if players == 4 else 8
    return RulesConfig(
        players=players,
        passing=draw(st.booleans()),
        double_run_bonus=draw(st.booleans()),
        bidding=draw(st.sampled_from(["single", "auction"])),
        min_bid=draw(st.one_of(st.none(), st.integers(1, tricks))),
        target_score=draw(st.one_of(st.just(100), st.integers(10, 120))),
        max_rounds=draw(st.one_of(st.just(30), st.integers(1, 12))),
        max_redeals=draw(st.integers(0, 4)),
        first_dealer=draw(st.one_of(st.just("random"), st.integers(0, players - 1))),
    )


# ----------------------------------------------------------------------------- reference rules (RULES.md)

def suit(card: int) -> int:
    return card // 13


def cards(mask: int) -> list[int]:
    return [c for c in range(NUM_CARDS) if mask >> c & 1]


def ref_legal(state: E.GameState) -> set[int]:
    cfg, seat = state.config, state.current
    tricks = 13 if cfg.players == 4 else 8
    if state.phase in (Phase.PASS, Phase.DISCARD):
        return set(cards(state.hands[seat]))
    if state.phase == Phase.BID:
        low = max(cfg.min_bid if cfg.min_bid is not None else tricks // 2 + 1, state.high_bid + 1)
        return {BID_BASE + k - 1 for k in range(low, tricks + 1)} | {PASS_BID}
    if state.phase == Phase.TRUMP:
        return set(range(TRUMP_BASE, TRUMP_BASE + 4))
    if state.phase == Phase.PLAY:
        hand = cards(state.hands[seat])
        if state.trick:
            led = suit(state.trick[0][1])
            follow = [c for c in hand if suit(c) == led]
            return set(follow or hand)  # R6.2
        return set(hand)
    return set()


def ref_trick_winner(trick: list[tuple[int, int]], trump: int) -> int:
    trumps = [(c, s) for s, c in trick if suit(c) == trump]
    if trumps:
        return max(trumps)[1]
    led = suit(trick[0][1])
    return max((c, s) for s, c in trick if suit(c) == led)[1]


def ref_bonus(length: int, double: bool) -> int:
    b = {0: 0, 1: 0, 2: 0, 3: 3, 4: 5}.get(length, 2 * length - 1)
    return 2 * b if double else b


def ref_score(cfg: RulesConfig, declarer: int, bid: int, winners: list[int]):
    teams = [w % 2 for w in winners]
    tricks = [teams.count(0), teams.count(1)]
    bonus = [0, 0]
    i = 0
    while i < len(teams):
        j = i
        while j < len(teams) and teams[j] == teams[i]:
            j += 1
        bonus[teams[i]] += ref_bonus(j - i, cfg.double_run_bonus)
        i = j
    bidders = declarer % 2
    made = tricks[bidders] >= bid
    scores = [tricks[t] + bonus[t] for t in (0, 1)]
    if not made:
        scores[bidders] = -bid
    winner = None if tricks[0] == tricks[1] else (0 if tricks[0] > tricks[1] else 1)
    return tuple(tricks), tuple(bonus), tuple(scores), made, winner


def check_cards_conserved(state: E.GameState) -> None:
    """Every card in exactly one place."""
    n = state.config.players
    places = list(state.hands) + list(state.played)
    if state.phase == Phase.PASS:
        places += list(state.passed)  # picked cards are face down in transit
    if state.phase in (Phase.PASS, Phase.BID):
        places.append(state.kitty)
    else:
        places.append(state.discards)  # the kitty has joined the declarer's hand
    union = 0
    for m in places:
        assert union & m == 0, "a card is in two places"
        union |= m
    assert union == FULL_DECK, "a card is missing"
    played = sum(p.bit_count() for p in state.played)
    assert played == n * len(state.trick_winners) + len(state.trick)
    assert sum(state.team_tricks) == len(state.trick_winners) <= state.config.num_tricks


def check_legal(state: E.GameState) -> None:
    expected = ref_legal(state)
    assert set(E.legal_actions(state)) == expected
    assert {a for a in range(-2, NUM_ACTIONS + 2) if E.is_legal(state, a)} == expected


def check_game_end(state: E.GameState, cfg: RulesConfig) -> None:
    decided = max(state.scores) >= cfg.target_score and state.scores[0] != state.scores[1]
    if state.phase == Phase.GAME_OVER and not state.truncated:
        assert decided and state.winner == (0 if state.scores[0] > state.scores[1] else 1)
    elif state.phase == Phase.GAME_OVER:
        assert not decided and state.winner is None and state.round_number >= cfg.max_rounds
    else:
        assert state.phase == Phase.ROUND_END and not decided and state.round_number < cfg.max_rounds


def check_bidding_step(before: E.GameState, action: int, after: E.GameState, cfg: RulesConfig) -> None:
    """R4.1-R4.5 for one bidding action, from the state before it."""
    n, seat, tricks = cfg.players, before.current, cfg.num_tricks
    bid = 0 if action == PASS_BID else action - BID_BASE + 1
    high = max(before.high_bid, bid)
    declarer = seat if bid else before.declarer
    spoken = [b != E.NOT_YET for b in before.bids]
    spoken[seat] = True
    out = list(before.out)
    out[seat] = out[seat] or bid == 0
    if high == tricks:
        ends = True  # nobody can outbid the maximum
    elif cfg.bidding == "single":
        ends = all(spoken)
    else:
        still_in = [s for s in range(n) if not out[s]]
        ends = not still_in or still_in == [declarer]
    if not ends:
        assert after.phase == Phase.BID and (after.high_bid, after.declarer) == (high, declarer)
        nxt = (seat + 1) % n
        while cfg.bidding == "auction" and out[nxt]:
            nxt = (nxt + 1) % n
        assert after.current == nxt
    elif high == 0:  # R4.4: thrown in
        if before.redeals + 1 > cfg.max_redeals:
            assert after.phase == Phase.GAME_OVER and after.truncated and after.winner is None
        else:
            assert after.redeals == before.redeals + 1
            assert (after.dealer, after.round_number, after.pass_direction) == \
                (before.dealer, before.round_number, before.pass_direction)
            assert after.phase == (Phase.BID if after.pass_direction == E.PassDirection.NONE else Phase.PASS)
            assert after.current == (before.dealer + 1) % n and after.high_bid == 0
    else:  # R4.5, R5.1
        assert after.phase == Phase.TRUMP and (after.current, after.declarer, after.high_bid) == (declarer, declarer, high)


def play_checked_game(cfg: RulesConfig, seed: int, pass_bid_prob: float) -> int:
    rng = np.random.default_rng(seed)
    state = E.new_game(cfg, rng)
    totals = [0, 0]
    actions = 0
    while True:
        check_cards_conserved(state)
        check_legal(state)
        legal = sorted(ref_legal(state))
        if state.phase == Phase.BID and rng.random() < pass_bid_prob:
            action = PASS_BID
        else:
            action = legal[rng.integers(len(legal))]
        before = state.copy()
        result = E.apply_action(state, action, rng)
        actions += 1
        if before.phase == Phase.PLAY and len(before.trick) == cfg.players - 1:
            trick = before.trick + [(before.current, action)]
            winner = ref_trick_winner(trick, before.trump)
            assert state.trick_winners[len(before.trick_winners)] == winner if result is None else \
                result.trick_winners[-1] == winner
            if result is None:
                assert state.current == winner  # R6.1
        if before.phase == Phase.BID:
            check_bidding_step(before, action, state, cfg)
            if state.phase == Phase.GAME_OVER:
                return actions
        if state.phase == Phase.GAME_OVER and result is None:
            assert state.truncated and state.redeals > cfg.max_redeals
            return actions
        if result is None:
            continue
        # A round was scored.
        assert len(result.trick_winners) == cfg.num_tricks
        tricks, bonus, scores, made, winner = ref_score(cfg, before.declarer, before.high_bid, list(result.trick_winners))
        assert (result.tricks, result.run_bonus, result.scores, result.made, result.winner) == \
            (tricks, bonus, scores, made, winner)
        assert (result.declarer, result.bid, result.trump) == (before.declarer, before.high_bid, before.trump)
        totals = [totals[t] + scores[t] for t in (0, 1)]
        assert list(result.total_scores) == totals == state.scores
        check_game_end(state, cfg)
        if state.phase == Phase.GAME_OVER:
            return actions
        dealer, round_number = state.dealer, state.round_number
        E.start_next_round(state, rng)
        assert (state.dealer, state.round_number, state.redeals) == ((dealer + 1) % cfg.players, round_number + 1, 0)


@settings(max_examples=40)
@given(cfg=rules_configs(), seed=st.integers(0, 2**32 - 1), pass_bid_prob=st.sampled_from([0.0, 0.3, 0.8]))
def test_random_full_games_follow_the_rules(cfg, seed, pass_bid_prob):
    assert play_checked_game(cfg, seed, pass_bid_prob) > 0


@settings(max_examples=15)
@given(cfg=rules_configs(), seed=st.integers(0, 2**32 - 1), episode=st.sampled_from(["game", "round"]),
       reward=st.sampled_from(["score_diff", "win"]))
def test_environment_mask_rewards_and_episode_end(cfg, seed, episode, reward):
    env = pass_cut_run_v0.raw_env(episode=episode, reward=reward, **cfg.to_dict())
    env.reset(seed=seed % 1000)
    rng = np.random.default_rng(seed)
    n = cfg.players
    totals = {a: 0.0 for a in env.possible_agents}
    round_scores = []
    for agent in env.agent_iter():
        obs, rew, term, trunc, info = env.last()
        totals[agent] += rew
        if term or trunc:
            env.step(None)
            continue
        seat = env.possible_agents.index(agent)
        assert env.game.current == seat
        mask = obs["action_mask"]
        assert set(np.flatnonzero(mask).tolist()) == ref_legal(env.game)
        for other in env.possible_agents:
            if other != agent:
                assert not env.observe(other)["action_mask"].any()
        ends_round = (env.game.phase == Phase.PLAY and len(env.game.trick) == n - 1
                      and len(env.game.trick_winners) == cfg.num_tricks - 1)
        legal = np.flatnonzero(mask)
        env.step(int(legal[rng.integers(len(legal))]))
        # Per-step rewards are zero-sum between the teams and equal within a team.
        team_rewards = [{env.rewards[a] for a in env.rewards if env.possible_agents.index(a) % 2 == t} for t in (0, 1)]
        assert len(team_rewards[0]) <= 1 and len(team_rewards[1]) <= 1
        if team_rewards[0]:
            assert team_rewards[0].pop() == -team_rewards[1].pop()
        if ends_round:
            round_scores.append(env.infos[agent]["round_result"]["scores"])
    game = env.game
    team0 = totals[env.possible_agents[0]]
    assert all(totals[a] == (team0 if i % 2 == 0 else -team0) for i, a in enumerate(env.possible_agents))
    if episode == "round":
        assert len(round_scores) <= 1
    if reward == "score_diff":
        assert team0 == sum(s[0] - s[1] for s in round_scores)
    elif episode == "round":
        assert team0 == (int(np.sign(round_scores[0][0] - round_scores[0][1])) if round_scores else 0)
    else:
        assert team0 == (0 if game.winner is None else (1 if game.winner == 0 else -1))
