"""A rule-based Pass Cut Run player built from card-play knowledge and the seed's strategy notes.

The agent reads only its own observation (through :func:`pcr_env.decode_observation`)
and the legal-action mask; it is deterministic (ties are broken by fixed orders),
so a seed changes nothing and an agent playing itself in duplicate scores exactly 0.
Relative seat ``k`` is the player ``k`` seats to the left: partners sit at even
relative seats (2 with four players; 2 and 4 with six), opponents at odd ones.

Hand valuation (used by passing, bidding, trump and discards)
    :func:`estimate_tricks` counts the tricks a hand should take as declarer with
    a given trump: side-suit honours (ace 1; king 1 behind the ace, 0.5 guarded,
    little bare; queen with length and a higher honour), capped at 3 per suit
    (2 with six players) because later rounds get cut; trump honours plus every
    trump beyond the third (second with six players) as a length trick; and
    cutting value for short side suits when holding 3+ trumps (void 0.6,
    singleton 0.3, doubleton 0.1, at most one per spare trump).

Passing (R3; each of the 3 picks recomputes the same set from hand + picks so far)
    The trump candidate is the suit that values the hand highest. Candidate
    passes take the lowest ``k`` cards of up to three suits (``k`` summing to 3,
    a whole suit when short: that builds a void). To the **partner** the set that
    keeps the highest valuation wins, with passed aces/kings credited back
    (they still win tricks for the team), so short weak side suits go and the
    trump candidate stays. To an **opponent** honours passed count against the
    set (an ace given away is a trick lost) and voids count less (the opponent
    gains length), so low cards from short side suits go and honours stay.

Bidding (R4)
    My tricks ``T`` = best valuation over the four trumps (with six players the
    fitted intercept absorbs the kitty the declarer will take). The declaring team's tricks ``t`` are
    taken as normal around ``a + b*T`` with spread ``sigma``; a made contract
    is worth ``2t - N`` plus the declaring side's mean run edge at ``t`` tricks,
    a failed one ``-bid - (N - t)`` minus the defenders' mean runs (R7, R8).
    ``a``, ``b``, ``sigma`` and the run tables were measured on forced
    contracts in heuristic self-play (:mod:`agents.scripted.calibrate`;
    doubled under the double-run-bonus variant). The expected value of
    declaring at the lowest legal bid is compared with the value of passing:
    0 when a pass throws the deal in or nobody has bid, minus the cost of
    defending when an opponent holds the contract (so an opponent is outbid
    only when that pays), and the value of partner's contract when partner
    holds it (partner is overtaken only by a clearly stronger hand). With
    opponents still to speak it bids higher while that costs at most
    ``preempt`` points of expected value, to shut them out.

Trump (R5)
    The suit with the highest valuation (ties: longer, then higher suit).

Discard (six players, R9.3)
    Keep trumps, aces and guarded kings; throw the lowest cards of the shortest
    side suits first, which builds voids for cutting.

Play (R6)
    Knowledge: cards played, my hand, cards I passed (they sit with the receiver
    until played), public voids. A card is *safe* when no opponent still to play
    can hold a card that beats it (a higher card of the led suit, or a trump
    when that opponent is void in the led suit).

    * Leading: as declarer's side with 2+ trumps while opponents may hold trumps,
      draw trumps (the top trump if I hold it, else a low one when I hold the
      majority). Otherwise cash a boss card (highest unseen of its suit) that
      no opponent can cut, longest such suit first; then lead low in a suit
      partner is void in (partner cuts); then a singleton to build a void when
      I hold trumps; else low from the longest side suit, avoiding leading away
      from a king or queen.
    * Following suit: partner winning safely -> lowest card (never overtake a
      winning partner). Opponent winning: last to play -> cheapest winner;
      second hand low unless I hold a safe winner and the trick matters
      (breaking an opponent's run, covering an honour, or the last cards);
      otherwise the cheapest *safe* winner, else third-hand high (the lowest of
      my top equal cards when it beats the current card), else lowest.
    * Void in the led suit: partner winning safely -> discard; partner winning
      but beatable -> cut with a trump no later opponent can beat, if I hold
      one. Opponent winning -> cut with the cheapest trump that wins,
      preferring one no later opponent can overcut; overcut a cut when
      possible. Discards throw the lowest non-boss card (kings and aces last),
      shortening the shortest side suit first.
    * Runs (R7): when the opponents have a run of two or more, second hand also
      takes the trick when it safely can, to break the run.

>>> import numpy as np
>>> from pcr_env import pass_cut_run_v0
>>> env = pass_cut_run_v0.raw_env(episode="round", first_dealer=0)
>>> env.reset(seed=5)
>>> agent, result = HeuristicAgent(), None
>>> for who in env.agent_iter():
...     obs, _, term, trunc, info = env.last()
...     result = info.get("round_result", result)
...     env.step(None if term or trunc else agent.act(obs))
>>> sum(result["tricks"])
13
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache, wraps
from itertools import product

import numpy as np

from agents.base import BaseAgent, legal_actions
from pcr_env.actions import BID_BASE, NUM_ACTIONS, PASS_BID, TRUMP_BASE
from pcr_env.cards import beats, rank_of
from pcr_env.config import RulesConfig
from pcr_env.engine import PASS_SIZE, PassDirection, Phase
from pcr_env.knowledge import SeatKnowledge, seat_knowledge
from pcr_env.observation import ObservationView, decode_observation

ACE, KING, QUEEN, JACK = 12, 11, 10, 9


@dataclass(frozen=True)
class HeuristicParams:
    """Numbers behind the rules: the bidding model (measured in heuristic self-play, see
    :mod:`agents.scripted.calibrate`) and switches for ablations of the play rules.

    >>> from dataclasses import replace
    >>> cautious = HeuristicAgent(params=replace(PARAMS_4, preempt=0.0, defend_cost=0.0))
    """

    team_base: float
    """``a`` in "the declaring team takes ``a + b*T`` tricks" (``T``: my valuation)."""
    team_slope: float
    """``b`` in ``a + b*T``."""
    sigma: float
    """Spread of the team's tricks around ``a + b*T``."""
    run_diff: tuple[float, ...]
    """Mean run-bonus edge of the declaring team (its bonus minus the defenders') when it takes ``t`` tricks."""
    defender_runs: tuple[float, ...]
    """Mean run bonus of the defenders when the declaring team takes ``t`` tricks."""
    kitty_tricks: float = 0.0
    """Added to ``T`` before the fit is applied (six players: the kitty; the shipped fit absorbs it in ``a``)."""
    defend_cost: float = 3.0
    """Expected loss when an opponent holds the contract (the value of passing then)."""
    partner_value: float = 5.0
    """Value of leaving the contract with partner (overtake only if declaring beats it)."""
    open_pass: float = 0.0
    """Value of passing when nobody has bid yet and others still speak."""
    second_hand_cash: bool = False
    """Second hand takes the trick with a safe winner even when the trick is not critical."""
    void_risk: int = 0
    """A player who could hold at most this many unseen cards of a suit is treated as possibly void in it."""
    preempt: float = 2.0
    """With opponents still to bid, bid higher while declaring loses at most this much expected value."""
    ruff_partner: bool = True
    """Void, with partner winning but beatable: cut with a trump no later opponent can beat."""
    third_hand_top: bool = True
    """Third hand plays the lowest of its top equal cards (else the cheapest card that beats the trick)."""


# Fitted by ``python -m agents.scripted.calibrate`` (3,000 forced contracts, 4 players; 2,000 with 6; seed 123).
PARAMS_4 = HeuristicParams(
    team_base=4.62, team_slope=0.65, sigma=2.02,
    run_diff=(-25.0, -21.7, -16.2, -13.7, -9.4, -5.7, -2.5, 1.1, 4.8, 8.5, 12.6, 16.6, 20.7, 25.0),
    defender_runs=(25.0, 21.7, 16.2, 13.9, 9.9, 6.9, 4.7, 3.0, 2.0, 1.1, 0.5, 0.0, 0.0, 0.0),
)
PARAMS_6 = HeuristicParams(
    team_base=4.38, team_slope=0.34, sigma=1.47,
    run_diff=(-15.0, -9.6, -5.8, -2.2, 0.0, 2.1, 5.4, 9.9, 15.0),
    defender_runs=(15.0, 9.6, 5.8, 2.4, 0.6, 0.2, 0.0, 0.0, 0.0),
)


# ------------------------------------------------------------------ hand valuation
def _honour_tricks(ranks: frozenset[int], length: int) -> float:
    t = 0.0
    a, k, q = ACE in ranks, KING in ranks, QUEEN in ranks
    if a:
        t += 1.0
    if k:
        t += 1.0 if a else (0.5 if length >= 2 else 0.1)
    if q and length >= 3:
        t += (0.15, 0.45, 1.0)[a + k]
    if ranks >= {ACE, KING, QUEEN, JACK} and length >= 4:
        t += 1.0
    return t


def estimate_tricks(hand: list[int] | tuple[int, ...], trump: int, players: int = 4) -> float:
    """Tricks ``hand`` should take by itself as declarer with ``trump`` (see the module docstring).

    >>> from pcr_env.cards import parse_cards
    >>> round(estimate_tricks(parse_cards("AS KS QS JS 10S 9S 8S AH KH AD 2D 3C 4C"), 3), 1)
    10.3
    """
    return _valuation(_hand_terms(hand, players), trump)


@lru_cache(maxsize=1 << 15)  # at most 2 x 8192 rank sets
def _suit_terms(ranks: tuple[int, ...], players: int) -> tuple[float, float, float, int]:
    """``(value as trump, value as a side suit, cutting value as a short side suit, length)`` of one suit.

    Each term depends on that suit's ranks only, so it is computed once per rank set
    and the four trump choices of a hand (and the many hands that share a suit) reuse it.
    """
    length = len(ranks)
    hon = _honour_tricks(frozenset(ranks), length)
    side_cap = 3 if players == 4 else 2
    long_from = 3 if players == 4 else 2
    as_trump = min(length, hon + max(0, length - long_from))
    as_side = min(hon, length, side_cap)
    short = (0.6, 0.3, 0.1)[length] if length < 3 else 0.0
    return as_trump, as_side, short, length


def _hand_terms(hand: list[int] | tuple[int, ...], players: int) -> list[tuple[float, float, float, int]]:
    """:func:`_suit_terms` of each suit of ``hand``."""
    by_suit: list[list[int]] = [[], [], [], []]
    for c in sorted(hand):
        by_suit[c // 13].append(c % 13)
    return [_suit_terms(tuple(ranks), players) for ranks in by_suit]


def _valuation(terms: list[tuple[float, float, float, int]], trump: int) -> float:
    """The hand's tricks with ``trump``, from its suits' terms.

    The float additions run suit by suit in the same order as ever, so every
    valuation (and every tie between two of them) is bit-for-bit unchanged.
    """
    total = 0.0
    shortness = 0.0
    for s in range(4):
        as_trump, as_side, short, _ = terms[s]
        if s == trump:
            total += as_trump
        else:
            total += as_side
            shortness += short
    t_len = terms[trump][3]
    if t_len >= 3:
        total += min(shortness, t_len - 2)
    return total


def best_trump(hand: list[int] | tuple[int, ...], players: int = 4) -> tuple[int, float]:
    """``(suit, valuation)`` of the trump that values ``hand`` highest; ties: longer, then higher suit."""
    # Cached on the sorted hand: bidding asks twice per decision and the trump choice asks again.
    return _best_trump(tuple(sorted(hand)), players)


@lru_cache(maxsize=1 << 14)
def _best_trump(hand: tuple[int, ...], players: int) -> tuple[int, float]:
    return _best_of_terms(_hand_terms(hand, players))


def _best_of_terms(terms: list[tuple[float, float, float, int]]) -> tuple[int, float]:
    value, _, suit = max((_valuation(terms, s), terms[s][3], s) for s in range(4))
    return suit, value


@lru_cache(maxsize=1 << 14)  # pure; bidding asks it for every legal level, and valuations repeat across hands
def declare_value(p: HeuristicParams, valuation: float, level: int, players: int, double_runs: bool = False) -> float:
    """Expected score difference (mine minus theirs) of declaring ``level`` with hand valuation ``valuation``.

    The team's tricks ``t`` are taken as normal around ``a + b*T`` (rounded to
    whole tricks); a made contract is worth ``2t - N`` plus the run edge, a
    failed one ``-level - (N - t)`` minus the defenders' runs (R7, R8).
    """
    tricks = len(p.run_diff) - 1
    mu = p.team_base + p.team_slope * (valuation + p.kitty_tricks)
    scale = 2.0 if double_runs else 1.0
    value = 0.0
    below = 0.0
    for t in range(tricks + 1):
        upper = 1.0 if t == tricks else _normal_cdf((t + 0.5 - mu) / p.sigma)
        prob, below = upper - below, upper
        if t >= level:
            value += prob * (2 * t - tricks + scale * p.run_diff[t])
        else:
            value += prob * (-level - (tricks - t) - scale * p.defender_runs[t])
    return value


def _normal_cdf(z: float) -> float:
    return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))


# ------------------------------------------------------------------------- passing
# How many of its lowest cards each suit gives to a pass (3 in all); checked against the suit lengths.
_PASS_SPLITS = [ks for ks in product(range(PASS_SIZE + 1), repeat=4) if sum(ks) == PASS_SIZE]

_GIFT_VALUE = {ACE: 1.0, KING: 0.5, QUEEN: 0.2}


@lru_cache(maxsize=1 << 14)
def choose_pass(hand: tuple[int, ...], to_partner: bool, players: int = 4) -> tuple[int, ...]:
    """The 3 cards to pass from the full ``hand`` (sorted tuple); see the module docstring.

    Candidates are the lowest ``k`` cards of up to three suits (``k`` summing to 3,
    a whole suit when short: that builds a void).
    """
    by_suit = [sorted(c for c in hand if c // 13 == s) for s in range(4)]
    # Valuation terms of what each suit keeps after giving its lowest k cards: every
    # candidate's remaining hand is made of these, so each is computed once.
    kept = [[_suit_terms(tuple(c % 13 for c in cards[k:]), players) for k in range(min(len(cards), PASS_SIZE) + 1)]
            for cards in by_suit]
    best = None
    for ks in _PASS_SPLITS:
        if any(k > len(by_suit[s]) for s, k in enumerate(ks)):
            continue
        option = tuple(sorted(c for s, k in enumerate(ks) for c in by_suit[s][:k]))
        _, value = _best_of_terms([kept[s][k] for s, k in enumerate(ks)])  # = best_trump(hand minus option)
        gift = sum(_GIFT_VALUE.get(c % 13, 0.0) for c in option)
        if to_partner:
            # Honours passed still win tricks for the team, at a discount (partner may be short of entries).
            score = value + 0.8 * gift
        else:
            score = value - 1.2 * gift - 0.01 * sum(c % 13 for c in option)
        key = (round(score, 6), tuple(-c for c in option))
        if best is None or key > best[0]:
            best = (key, option)
    assert best is not None
    return best[1]


def choose_discards(hand: tuple[int, ...], trump: int, count: int) -> tuple[int, ...]:
    """Cards the six-player declarer throws (R9.3): lowest cards of the shortest side suits, never trumps first."""
    keep = list(hand)
    out: list[int] = []
    for _ in range(count):
        lengths = [sum(1 for c in keep if c // 13 == s) for s in range(4)]

        def cost(c: int) -> tuple:
            s, r = c // 13, c % 13
            guarded_king = r == KING and lengths[s] >= 2
            return (s == trump, r == ACE, guarded_king, lengths[s], r, c)

        card = min(keep, key=cost)
        keep.remove(card)
        out.append(card)
    return tuple(out)


# ------------------------------------------------------------------------- the agent
class HeuristicAgent(BaseAgent):
    """Rule-based player; see the module docstring for every rule.

    ``rules`` (optional) tells it the variant being played (the double run
    bonus raises what a made contract and a failed one are worth); the
    minimum bid and the table size come from the mask and the observation.
    """

    name = "heuristic"

    def __init__(self, seed: int | None = None, rules: RulesConfig | None = None,
                 params: HeuristicParams | None = None, params6: HeuristicParams | None = None):
        super().__init__(seed)
        self.rules = rules
        self.params4 = params or PARAMS_4
        self.params6 = params6 or PARAMS_6
        self.double_runs = bool(rules is not None and rules.double_run_bonus)

    def act(self, obs: dict[str, np.ndarray]) -> int:
        mask = np.asarray(obs["action_mask"])
        return self._decide(obs["observation"], mask, legal_actions(mask).tolist())

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The same actions as calling :meth:`act` row by row; the legal actions of all rows come
        from one scan of the masks instead of one per row."""
        obs, masks = np.asarray(obs), np.asarray(masks)
        if obs.ndim != 2 or masks.ndim != 2 or len(obs) != len(masks):
            return super().act_batch(obs, masks)  # raises the usual error about the shapes
        rows, cols = np.nonzero(masks)  # row-major: each row's legal actions, ascending
        ends = np.searchsorted(rows, np.arange(1, len(masks) + 1)).tolist()
        cols = cols.tolist()
        actions = np.empty(len(masks), np.int64)
        start = 0
        for i, end in enumerate(ends):
            legal = cols[start:end] or legal_actions(masks[i])  # a row with no legal action raises, as in act
            actions[i] = self._decide(obs[i], masks[i], legal)
            start = end
        return actions

    def _decide(self, vec: np.ndarray, mask: np.ndarray, legal: list[int]) -> int:
        """The action for one observation vector, its mask and the mask's legal action ids (ascending)."""
        view = decode_observation(vec)
        phase = view.phase
        if phase == Phase.PLAY:  # the commonest decision first
            params = self.params4 if view.players == 4 else self.params6
            action = _Play(view, seat_knowledge(vec, view.players), legal, params).choose()
        elif phase == Phase.PASS:
            action = self._pass(view)
        elif phase == Phase.BID:
            action = self._bid(view, legal)
        elif phase == Phase.TRUMP:
            action = TRUMP_BASE + best_trump(view.hand, view.players)[0]
        elif phase == Phase.DISCARD:
            action = self._discard(view)
        else:
            raise ValueError(f"no decision to take in phase {phase.name}")
        if not (0 <= action < NUM_ACTIONS and mask[action]):
            # A rule picked an illegal action: that is a bug in the rules above, never silently patched.
            raise RuntimeError(f"heuristic chose illegal action {action} in phase {phase.name}; legal {legal}")
        return int(action)

    # -------------------------------------------------------------- pass / discard
    def _pass(self, view: ObservationView) -> int:
        full = tuple(sorted(view.hand + view.passed))
        chosen = choose_pass(full, view.pass_direction == PassDirection.PARTNER, view.players)
        remaining = [c for c in chosen if c not in view.passed]
        return remaining[0]

    def _discard(self, view: ObservationView) -> int:
        full = tuple(sorted(view.hand + view.discarded))
        count = len(full) - RulesConfig(players=view.players).hand_size
        chosen = choose_discards(full, view.trump, count)
        return [c for c in chosen if c not in view.discarded][0]

    # ------------------------------------------------------------------- bidding
    def bid_value(self, view: ObservationView, level: int) -> tuple[float, float]:
        """``(value of declaring at level, value of passing)`` in expected score difference per round."""
        n = view.players
        p = self.params4 if n == 4 else self.params6
        _, mine = best_trump(view.hand, n)
        declare = declare_value(p, mine, level, n, self.double_runs)
        holder = view.declarer
        if holder is None:
            # Nobody has bid: passing throws the deal in if everyone else has spoken.
            passing = 0.0 if all(b is not None for b in view.bids[1:]) else p.open_pass
        elif holder % 2 == 1:
            passing = -p.defend_cost
        else:
            passing = p.partner_value
        return declare, passing

    def _bid(self, view: ObservationView, legal: list[int]) -> int:
        bids = [a for a in legal if BID_BASE <= a < PASS_BID]
        if not bids:
            return PASS_BID
        level = bids[0] - BID_BASE + 1  # the lowest legal bid
        declare, passing = self.bid_value(view, level)
        if declare <= passing:
            return PASS_BID
        p = self.params4 if view.players == 4 else self.params6
        if p.preempt > 0 and any(view.bids[k] is None for k in range(1, view.players, 2)):
            # Opponents still to speak: bid higher while it costs little, to shut them out.
            _, mine = best_trump(view.hand, view.players)
            best = bids[0]
            for a in bids[1:]:
                if declare_value(p, mine, a - BID_BASE + 1, view.players, self.double_runs) >= declare - p.preempt:
                    best = a
            return best
        return bids[0]


# --------------------------------------------------------------------------- play
_SUIT_CARDS = [range(s * 13, s * 13 + 13) for s in range(4)]


def _per_decision(method):
    """Remember a :class:`_Play` question's answers for the decision: the rules ask the same
    ones repeatedly (a card's safety, an opponent's possible void), and they cannot change."""
    memo_name = f"_memo_{method.__name__}"

    @wraps(method)
    def remembered(self, *args):
        memo = self.__dict__.get(memo_name)
        if memo is None:
            memo = self.__dict__[memo_name] = {}
        answer = memo.get(args)
        if answer is None:
            answer = memo[args] = method(self, *args)
        return answer

    return remembered


class _Play:
    """One card-play decision: what is known, and the rules of the module docstring."""

    def __init__(self, view: ObservationView, known: SeatKnowledge, legal: list[int], params: HeuristicParams):
        n = self.n = view.players
        self.view = view
        self.params = params
        self.legal = sorted(legal)
        self.trump = view.trump if view.trump is not None else -1
        self.hand = view.hand
        # Ascending, which is_boss relies on.
        self.unseen_by_suit = [known.unseen_of_suit(s) for s in range(4)]
        self.may_hold = known.may_hold.tolist()
        self.voids = view.voids
        leader = view.trick_leader
        if leader is None:
            self.order: list[tuple[int, int]] = []
            after_end = n
        else:
            self.order = [(k, view.trick[k]) for k in range(leader, n)]
            after_end = leader
        self.after = list(range(1, after_end))
        self.opps_after = list(range(1, after_end, 2))  # opponents sit at odd relative seats
        self.my_suits: list[list[int]] = [[], [], [], []]  # in hand order, like the hand
        for c in view.hand:
            self.my_suits[c // 13].append(c)
        run_team, run_len = view.run
        self.opp_run = run_team == 1 and run_len >= 2
        self.tricks_left = len(view.hand)

    # ---------------------------------------------------------------- knowledge
    def could_hold(self, k: int, card: int) -> bool:
        """Seat ``k`` could hold the unseen ``card`` (:mod:`pcr_env.knowledge`)."""
        return self.may_hold[k][card] == 1

    @_per_decision
    def may_be_void(self, k: int, suit: int) -> bool:
        """Known void, or so few cards of the suit are out that ``k`` may well have none."""
        if suit in self.voids[k]:
            return True
        return sum(1 for c in self.unseen_by_suit[suit] if self.could_hold(k, c)) <= self.params.void_risk

    def can_beat(self, k: int, best: int, led: int) -> bool:
        """Could player ``k`` (not yet played) hold a legal card that beats ``best``?"""
        if led == best // 13:
            for c in self.unseen_by_suit[led]:
                if c > best and self.could_hold(k, c):
                    return True
        if led != self.trump and self.trump >= 0 and self.may_be_void(k, led):
            for c in self.unseen_by_suit[self.trump]:
                if beats(c, best, led, self.trump) and self.could_hold(k, c):
                    return True
        return False

    @_per_decision
    def safe(self, best: int, led: int) -> bool:
        """No opponent still to play can beat ``best``."""
        return not any(self.can_beat(k, best, led) for k in self.opps_after)

    def is_boss(self, card: int) -> bool:
        """No unseen card of its suit is higher (the unseen lists are ascending: check the last)."""
        unseen = self.unseen_by_suit[card // 13]
        return not unseen or unseen[-1] < card

    @_per_decision
    def opps_may_cut(self, suit: int) -> bool:
        if suit == self.trump or self.trump < 0:
            return False
        for k in range(1, self.n, 2):
            if self.may_be_void(k, suit) and any(self.could_hold(k, c) for c in self.unseen_by_suit[self.trump]):
                return True
        return False

    def opps_may_hold_trump(self) -> bool:
        return any(self.could_hold(k, c) for k in range(1, self.n, 2) for c in self.unseen_by_suit[self.trump])

    def lowest_equal_of(self, card: int) -> int:
        """Lowest of my cards equal to ``card`` (every card between them is mine or already played)."""
        s = card // 13
        unseen, mine = self.unseen_by_suit[s], self.my_suits[s]
        low = card
        for c in range(card - 1, s * 13 - 1, -1):
            if c in unseen:
                break
            if c in mine:
                low = c
        return low

    # ---------------------------------------------------------------- decisions
    def choose(self) -> int:
        if len(self.legal) == 1:
            return self.legal[0]
        if not self.order:
            return self.lead()
        return self.follow()

    def lead(self) -> int:
        """The leading rules in order (module docstring): the first that picks a card decides."""
        trump = self.trump
        we_declare = self.view.declarer is not None and self.view.declarer % 2 == 0
        my_trumps = self.my_suits[trump] if trump >= 0 else []
        side = [s for s in range(4) if s != trump and self.my_suits[s]]
        for rule in (lambda: self.lead_drawing_trumps(we_declare, my_trumps), self.lead_cashing_bosses,
                     lambda: self.lead_boss_trump(we_declare, my_trumps), self.lead_to_partner_cut,
                     lambda: self.lead_singleton(side, my_trumps), lambda: self.lead_from_long_suit(side)):
            card = rule()
            if card is not None:
                return card
        # 6. Only trumps left.
        top = max(my_trumps)
        return top if self.is_boss(top) else min(my_trumps)

    def lead_drawing_trumps(self, we_declare: bool, my_trumps: list[int]) -> int | None:
        """1. Draw trumps as the declaring side with length while opponents may still hold some."""
        unseen_trumps = self.unseen_by_suit[self.trump] if self.trump >= 0 else []
        if we_declare and len(my_trumps) >= 2 and unseen_trumps and self.opps_may_hold_trump():
            top = max(my_trumps)
            if self.is_boss(top):
                return self.lowest_equal_of(top)
            if len(my_trumps) > len(unseen_trumps):
                return min(my_trumps)
        return None

    def lead_cashing_bosses(self) -> int | None:
        """2. Cash boss cards no opponent can cut, longest run of winners first."""
        cash = []
        for s in range(4):
            if s == self.trump or not self.my_suits[s]:
                continue
            top = max(self.my_suits[s])
            if self.is_boss(top) and not self.opps_may_cut(s):
                winners = sum(1 for c in self.my_suits[s] if self.is_boss(c))
                cash.append((winners, len(self.my_suits[s]), s, top))
        return max(cash)[3] if cash else None

    def lead_boss_trump(self, we_declare: bool, my_trumps: list[int]) -> int | None:
        """2b. A boss trump when the opponents still hold trumps (it draws two of theirs)."""
        if my_trumps and self.is_boss(max(my_trumps)) and self.opps_may_hold_trump() and we_declare:
            return max(my_trumps)
        return None

    def lead_to_partner_cut(self) -> int | None:
        """3. A suit partner is void in, when partner may still cut and no opponent can overcut."""
        trump = self.trump
        for s in range(4):
            if s == trump or not self.my_suits[s] or trump < 0:
                continue
            partners = [k for k in range(2, self.n, 2)]
            if any(s in self.voids[k] and trump not in self.voids[k] for k in partners) and not self.opps_may_cut(s):
                return min(self.my_suits[s])
        return None

    def lead_singleton(self, side: list[int], my_trumps: list[int]) -> int | None:
        """4. A singleton side card, to cut that suit later, when I hold trumps."""
        if my_trumps and len(my_trumps) >= 2:
            singles = [self.my_suits[s][0] for s in side if len(self.my_suits[s]) == 1 and not self.is_boss(self.my_suits[s][0])
                       and rank_of(self.my_suits[s][0]) < KING]
            if singles:
                return min(singles, key=lambda c: (rank_of(c), c))
        return None

    def lead_from_long_suit(self, side: list[int]) -> int | None:
        """5. Low from the longest side suit the opponents cannot cut, avoiding leading away from a king or queen."""
        if not side:
            return None

        def lead_key(s: int) -> tuple:
            cards = self.my_suits[s]
            top = max(cards)
            tenace = rank_of(top) in (KING, QUEEN) and not self.is_boss(top) and len(cards) >= 2
            return (not self.opps_may_cut(s), not tenace, len(cards), -s)

        return min(self.my_suits[max(side, key=lead_key)])

    def current_winner(self) -> tuple[int, int]:
        led = self.order[0][1] // 13
        wk, wc = self.order[0]
        for k, c in self.order[1:]:
            if beats(c, wc, led, self.trump):
                wk, wc = k, c
        return wk, wc

    def follow(self) -> int:
        led = self.order[0][1] // 13
        wk, wc = self.current_winner()
        partner_winning = wk % 2 == 0
        legal = self.legal
        following = legal[0] // 13 == led
        last = not self.after
        if partner_winning and (last or self.safe(wc, led)):
            return self.throw(legal, following)
        winners = [c for c in legal if beats(c, wc, led, self.trump)]
        safe_winners = [c for c in winners if self.safe(c, led)]
        if following:
            if partner_winning:
                # Partner may be overtaken by someone after me: secure the trick only with a safe card.
                return min(safe_winners) if safe_winners else min(legal)
            if last:
                return min(winners) if winners else min(legal)
            second_hand = len(self.order) == 1 and any(k % 2 == 0 for k in self.after)
            if second_hand:
                led_card = self.order[0][1]
                critical = self.params.second_hand_cash or self.opp_run or rank_of(led_card) >= JACK \
                    or self.tricks_left <= 3
                if safe_winners and critical:
                    return min(safe_winners)
                return min(legal)
            if safe_winners:
                return min(safe_winners)
            if winners:
                # Third hand high: the cheapest of my top equal cards, to force the opponents' honours.
                return self.lowest_equal_of(max(winners)) if self.params.third_hand_top else min(winners)
            return min(legal)
        # Void in the led suit.
        trumps = [c for c in winners if c // 13 == self.trump]
        if partner_winning:
            if trumps and safe_winners and self.params.ruff_partner:
                return min(c for c in safe_winners)
            return self.throw(legal, following)
        if trumps:
            safe_trumps = [c for c in trumps if self.safe(c, led)]
            return min(safe_trumps) if safe_trumps else min(trumps)
        return self.throw(legal, following)

    def throw(self, legal: list[int], following: bool) -> int:
        """Lowest-value card: lowest of the led suit when following, else a discard."""
        if following:
            return min(legal)
        non_trump = [c for c in legal if c // 13 != self.trump] or legal
        lengths = [len(cards) for cards in self.my_suits]

        def cost(c: int) -> tuple:
            s = c // 13
            return (self.is_boss(c), rank_of(c) >= KING, rank_of(c), lengths[s], c)

        return min(non_trump, key=cost)


__all__ = ["HeuristicAgent", "HeuristicParams", "PARAMS_4", "PARAMS_6", "estimate_tricks", "best_trump",
           "choose_pass", "choose_discards"]
