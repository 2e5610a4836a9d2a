"""Pictures of the table (``render_mode="rgb_array"``): an ``H x W x 3`` ``uint8`` array drawn with Pillow.

Two views, one drawing:

* :func:`render_state` draws a **spectator** view from the engine's
  :class:`~pcr_env.engine.GameState`: seat 0 at the bottom, the other seats
  clockwise around the table (R1.3: seat 1 on the left, seat 2 opposite, seat 3
  on the right; six players around an oval), and **every hand face up**, as the
  text render (:func:`pcr_env.render.render_text`) shows them. The seat to act
  is outlined in gold and its illegal cards are dimmed. This is what the AEC
  env (:mod:`pcr_env.pass_cut_run_v0`) returns: it is the whole table, not one
  player's, and a fixed orientation keeps a video of a game steady.
* :func:`render_observation` draws **one player's view** from its observation
  (:func:`pcr_env.decode_observation`), never from the engine: that seat at the
  bottom with its own hand face up (legal cards raised, the others dimmed when
  it is to act), its passed / received / discarded cards, and every other hand
  face down as a count. This is what the Gymnasium view
  (:class:`pcr_env.gym_env.PassCutRunEnv`) returns for the learner's seat to
  act, so a recorded video shows exactly what the learner could see
  (RULES.md, "What no player sees").

Both show the public table: round, dealer, pass direction, phase, every bid,
the contract and trump, the current trick, tricks won by each team, the
current run (R7.1) with its bonus so far (R7.2), and the scores with the target
(R8.4). Red suits are red, black suits black; suit symbols are drawn as shapes,
so no system font with card symbols is needed (text uses Pillow's bundled font).

The picture is :data:`SIZE` (width 960, height 720: a multiple of 16 both
ways, which video encoders want) and deterministic: the same state gives the
same array.

>>> import numpy as np
>>> from pcr_env import RulesConfig, engine
>>> game = engine.new_game(RulesConfig(first_dealer=0), np.random.default_rng(0))
>>> image = render_state(game)
>>> image.shape, image.dtype
((720, 960, 3), dtype('uint8'))
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from . import engine as E
from .cards import NUM_CARDS, RANKS, SUIT_MASKS, cards_of, rank_of, suit_of
from .config import RulesConfig
from .engine import PassDirection, Phase
from .observation import ObservationView, decode_observation

WIDTH, HEIGHT = 960, 720
SIZE = (WIDTH, HEIGHT)
"""``(width, height)`` of every picture; arrays are ``(HEIGHT, WIDTH, 3)``."""

_SS = 2  # drawn at twice the size, then downsampled: anti-aliased shapes and text

# Colours.
_FELT = (24, 98, 60)
_FELT_DARK = (16, 72, 44)
_TABLE = (31, 116, 72)
_RIM = (86, 58, 36)
_PANEL = (14, 60, 37)
_PANEL_EDGE = (70, 140, 100)
_GOLD = (246, 196, 64)
_TEXT = (242, 242, 236)
_MUTED = (178, 206, 188)
_CARD = (252, 251, 246)
_CARD_DIM = (178, 182, 178)
_CARD_EDGE = (96, 96, 96)
_RED = (204, 28, 44)
_BLACK = (24, 24, 30)
_RED_DIM = (176, 120, 124)
_BLACK_DIM = (110, 112, 116)
_BACK = (38, 66, 148)
_BACK_LINE = (150, 176, 236)
_TEAM = ((122, 186, 255), (255, 172, 92))  # team 0 (even seats), team 1 (odd seats)

_DIRECTION = {PassDirection.PARTNER: "partner", PassDirection.LEFT: "left", PassDirection.RIGHT: "right",
              PassDirection.NONE: "none"}
_PHASE = {Phase.PASS: "passing", Phase.BID: "bidding", Phase.TRUMP: "naming trump", Phase.DISCARD: "discarding",
          Phase.PLAY: "play", Phase.ROUND_END: "round over", Phase.GAME_OVER: "game over"}


@dataclass
class TableScene:
    """Everything one picture shows, in absolute seats (team of seat ``s`` is ``s % 2``).

    ``hands[s]`` is ``None`` for a hand the viewer may not see; ``hand_counts``
    are public. Built by :meth:`from_state` (spectator) or :meth:`from_observation`.
    """

    players: int
    viewer: int  # seat drawn at the bottom
    phase: Phase
    dealer: int
    pass_direction: PassDirection
    target: int
    scores: tuple[int, int]
    team_tricks: tuple[int, int]
    run: tuple[int | None, int]  # (team or None, length)
    bids: list[int | None]  # None: not yet spoken, 0: passed, k: latest bid
    contract: int | None
    declarer: int | None
    trump: int | None
    trick: list[int | None]  # per seat: the card it has on the current trick
    trick_leader: int | None
    tricks_played: int
    num_tricks: int
    hands: list[list[int] | None]
    hand_counts: list[int]
    current: int  # seat to act, -1 for nobody
    legal: list[int]  # legal actions of the seat to act (empty when unknown)
    passed: list[int] = field(default_factory=list)  # the viewer's own passed / received / discarded cards
    received: list[int] = field(default_factory=list)
    discarded: list[int] = field(default_factory=list)
    round_number: int | None = None
    redeals: int = 0
    double_run_bonus: bool = False
    winner: int | None = None  # once the game is over
    truncated: bool = False

    @classmethod
    def from_state(cls, state: E.GameState, viewer: int = 0) -> "TableScene":
        """Spectator scene from the engine state: every hand is shown."""
        n, config = state.n_players, state.config
        phase = state.phase
        trick: list[int | None] = [None] * n
        for seat, card in state.trick:
            trick[seat] = card
        hands = [cards_of(h) for h in state.hands]
        counts = [len(h) + (state.passed[s].bit_count() if phase == Phase.PASS else 0) for s, h in enumerate(hands)]
        legal = E.legal_actions(state) if state.current >= 0 else []
        return cls(
            players=n, viewer=viewer, phase=phase, dealer=state.dealer, pass_direction=state.pass_direction,
            target=config.target_score, scores=(state.scores[0], state.scores[1]),
            team_tricks=(state.team_tricks[0], state.team_tricks[1]),
            run=(None if state.run_team < 0 else state.run_team, state.run_length),
            bids=[None if b == E.NOT_YET else b for b in state.bids],
            contract=state.high_bid or None, declarer=None if state.declarer < 0 else state.declarer,
            trump=None if state.trump < 0 else state.trump, trick=trick,
            trick_leader=state.trick[0][0] if state.trick else None,
            tricks_played=len(state.trick_winners), num_tricks=config.num_tricks,
            hands=hands, hand_counts=counts, current=state.current, legal=legal,
            passed=cards_of(state.passed[viewer]), received=cards_of(state.received[viewer]),
            discarded=cards_of(state.discards) if viewer == state.declarer else [],
            round_number=state.round_number, redeals=state.redeals, double_run_bonus=config.double_run_bonus,
            winner=state.winner, truncated=state.truncated,
        )

    @classmethod
    def from_observation(cls, obs, seat: int, *, rules: RulesConfig | None = None,
                         round_number: int | None = None) -> "TableScene":
        """``seat``'s own view from its observation (dict with ``action_mask``, or the vector).

        Only the observation is read, so nothing hidden can appear. ``rules``
        (public) sets the run bonus doubling; ``round_number`` (public) is shown
        when given (the observation does not carry it).
        """
        view: ObservationView = decode_observation(obs)
        n = view.players
        rules = rules if rules is not None else RulesConfig(players=n)

        def absolute(k: int | None) -> int | None:
            return None if k is None else (seat + k) % n

        mine = seat % 2
        by_team = lambda pair: (pair[0], pair[1]) if mine == 0 else (pair[1], pair[0])  # noqa: E731
        run_team, run_len = view.run
        trick: list[int | None] = [None] * n
        for k in range(n):
            trick[(seat + k) % n] = view.trick[k]
        bids: list[int | None] = [None] * n
        for k in range(n):
            bids[(seat + k) % n] = view.bids[k]
        declarer = absolute(view.declarer)
        counts = []
        for s in range(n):
            k = (s - seat) % n
            count = rules.hand_size - len(view.played[k])
            if s == declarer and rules.kitty_size and view.phase in (Phase.TRUMP, Phase.DISCARD):
                count += rules.kitty_size  # R9.3: the declarer has taken the kitty
            counts.append(count)
        counts[seat] = len(view.hand)
        mask = obs.get("action_mask") if isinstance(obs, dict) else None
        legal = [] if mask is None else [int(a) for a in np.flatnonzero(mask)]
        scores = by_team(view.scores)
        winner, truncated = None, False
        if view.phase == Phase.GAME_OVER:
            if max(scores) >= view.target and scores[0] != scores[1]:
                winner = int(scores[1] > scores[0])
            else:
                truncated = True
        return cls(
            players=n, viewer=seat, phase=view.phase, dealer=absolute(view.dealer),
            pass_direction=view.pass_direction, target=view.target, scores=scores,
            team_tricks=by_team(view.team_tricks),
            run=(None if run_team is None else (run_team + mine) % 2, run_len),
            bids=bids, contract=view.contract, declarer=declarer, trump=view.trump, trick=trick,
            trick_leader=absolute(view.trick_leader), tricks_played=len(view.trick_winners),
            num_tricks=rules.num_tricks, hands=[view.hand if s == seat else None for s in range(n)],
            hand_counts=counts, current=seat if legal else -1, legal=legal, passed=list(view.passed),
            received=list(view.received), discarded=list(view.discarded), round_number=round_number,
            redeals=view.redeals, double_run_bonus=rules.double_run_bonus, winner=winner, truncated=truncated,
        )


def render_state(state: E.GameState, viewer: int = 0) -> np.ndarray:
    """Spectator picture of ``state`` (every hand face up), ``viewer``'s seat at the bottom."""
    return draw_scene(TableScene.from_state(state, viewer))


def render_observation(obs, seat: int, *, rules: RulesConfig | None = None, round_number: int | None = None) -> np.ndarray:
    """Picture of ``seat``'s own view, drawn from its observation only (see :meth:`TableScene.from_observation`)."""
    return draw_scene(TableScene.from_observation(obs, seat, rules=rules, round_number=round_number))


# ---------------------------------------------------------------------------------------------- drawing
@lru_cache(maxsize=None)
def _font(size: int) -> ImageFont.ImageFont:
    try:
        return ImageFont.load_default(size=size * _SS)  # Pillow >= 10.1 with FreeType: a scalable font
    except (TypeError, ImportError, OSError):  # pragma: no cover - Pillow without FreeType: the small bitmap font
        return ImageFont.load_default()


@lru_cache(maxsize=1)
def _background() -> Image.Image:
    """The felt and the table, drawn once."""
    img = Image.new("RGB", (WIDTH * _SS, HEIGHT * _SS), _FELT)
    d = ImageDraw.Draw(img)
    s = _SS
    d.rectangle([0, (HEIGHT - 50) * s, WIDTH * s, HEIGHT * s], fill=_FELT_DARK)
    d.ellipse([150 * s, 120 * s, 810 * s, 480 * s], fill=_RIM)
    d.ellipse([162 * s, 132 * s, 798 * s, 468 * s], fill=_TABLE)
    return img


class _Painter:
    """Drawing helpers in picture coordinates (multiplied by the supersampling factor here)."""

    def __init__(self) -> None:
        self.img = _background().copy()
        self.d = ImageDraw.Draw(self.img)

    # -- primitives
    def text(self, x: float, y: float, text: str, size: int = 15, fill=_TEXT, anchor: str = "la") -> float:
        """Draw text; returns its width (picture coordinates)."""
        font = _font(size)
        self.d.text((x * _SS, y * _SS), text, font=font, fill=fill, anchor=anchor)
        return self.d.textlength(text, font=font) / _SS

    def box(self, x0, y0, x1, y1, fill=_PANEL, outline=_PANEL_EDGE, width: int = 1, radius: int = 8) -> None:
        self.d.rounded_rectangle([x0 * _SS, y0 * _SS, x1 * _SS, y1 * _SS], radius=radius * _SS, fill=fill,
                                 outline=outline, width=width * _SS)

    def suit(self, cx: float, cy: float, h: float, suit: int, fill) -> None:
        """Suit symbol (0..3 = clubs, diamonds, hearts, spades) of height ``h`` centred on (cx, cy)."""
        d, s = self.d, _SS
        cx, cy, h = cx * s, cy * s, h * s

        def disc(x, y, r):
            d.ellipse([x - r, y - r, x + r, y + r], fill=fill)

        if suit == 1:  # diamond
            w = 0.4 * h
            d.polygon([(cx, cy - h / 2), (cx + w, cy), (cx, cy + h / 2), (cx - w, cy)], fill=fill)
        elif suit == 2:  # heart
            r = 0.25 * h
            disc(cx - 0.22 * h, cy - 0.2 * h, r)
            disc(cx + 0.22 * h, cy - 0.2 * h, r)
            d.polygon([(cx - 0.465 * h, cy - 0.12 * h), (cx + 0.465 * h, cy - 0.12 * h), (cx, cy + 0.48 * h)], fill=fill)
        elif suit == 3:  # spade
            r = 0.235 * h
            disc(cx - 0.21 * h, cy + 0.07 * h, r)
            disc(cx + 0.21 * h, cy + 0.07 * h, r)
            d.polygon([(cx - 0.44 * h, cy - 0.01 * h), (cx + 0.44 * h, cy - 0.01 * h), (cx, cy - 0.5 * h)], fill=fill)
            d.polygon([(cx, cy + 0.05 * h), (cx - 0.17 * h, cy + 0.5 * h), (cx + 0.17 * h, cy + 0.5 * h)], fill=fill)
        else:  # club
            r = 0.2 * h
            disc(cx, cy - 0.26 * h, r)
            disc(cx - 0.24 * h, cy + 0.07 * h, r)
            disc(cx + 0.24 * h, cy + 0.07 * h, r)
            disc(cx, cy - 0.02 * h, 0.12 * h)
            d.polygon([(cx, cy - 0.05 * h), (cx - 0.16 * h, cy + 0.5 * h), (cx + 0.16 * h, cy + 0.5 * h)], fill=fill)

    # -- cards
    def card(self, x: float, y: float, card: int, w: float = 60, h: float = 86, dim: bool = False,
             glow: bool = False) -> None:
        """A face-up card with its top-left corner at (x, y)."""
        red = suit_of(card) in (1, 2)
        ink = (_RED_DIM if red else _BLACK_DIM) if dim else (_RED if red else _BLACK)
        if glow:
            self.box(x - 3, y - 3, x + w + 3, y + h + 3, fill=_GOLD, outline=_GOLD, radius=9)
        self.box(x, y, x + w, y + h, fill=_CARD_DIM if dim else _CARD, outline=_CARD_EDGE, radius=6)
        rank = RANKS[rank_of(card)]
        size = max(10, int(h * 0.24))
        self.text(x + w * 0.09, y + h * 0.05, rank, size=size, fill=ink)
        self.suit(x + w * 0.09 + size * 0.32, y + h * 0.05 + size * 1.35, size * 0.62, suit_of(card), ink)
        self.suit(x + w * 0.6, y + h * 0.64, h * 0.38, suit_of(card), ink)

    def back(self, x: float, y: float, w: float = 22, h: float = 32) -> None:
        self.box(x, y, x + w, y + h, fill=_BACK, outline=(230, 230, 240), radius=3)
        self.box(x + 3, y + 3, x + w - 3, y + h - 3, fill=_BACK, outline=_BACK_LINE, radius=2)

    def cards_inline(self, x: float, y: float, cards: list[int], size: int = 15, fill_black=_TEXT,
                     dim: set[int] | frozenset = frozenset()) -> float:
        """``A♠ 10♥ ...`` as text and drawn suit symbols; returns the end x."""
        for c in cards:
            red = suit_of(c) in (1, 2)
            colour = ((230, 120, 130) if red else fill_black)
            if c in dim:
                colour = (120, 150, 132)
            x += self.text(x, y, RANKS[rank_of(c)], size=size, fill=colour)
            self.suit(x + size * 0.38, y + size * 0.62, size * 0.72, suit_of(c), (255, 96, 110) if red and c not in dim else colour)
            x += size * 0.95
        return x

    def image(self) -> np.ndarray:
        small = self.img.reduce(_SS)
        return np.asarray(small, dtype=np.uint8).copy()


def _seat_anchor(scene: TableScene, seat: int) -> tuple[float, float]:
    """Direction (unit vector, screen coordinates) from the table's centre towards ``seat``."""
    k = (seat - scene.viewer) % scene.players
    phi = math.pi / 2 + k * 2 * math.pi / scene.players
    return math.cos(phi), math.sin(phi)


# Panel top-left corners of the other seats, by relative seat (panel 232 x 124).
_PANELS = {
    4: {1: (14, 238), 2: (364, 10), 3: (714, 238)},
    6: {1: (14, 326), 2: (14, 184), 3: (364, 10), 4: (714, 184), 5: (714, 326)},
}
_PANEL_W, _PANEL_H = 232, 124


def _relative_name(scene: TableScene, seat: int) -> str:
    """``left``, ``partner`` ... of ``seat`` as the viewer sees it (R1.3)."""
    if scene.players == 4:
        rel = ["you", "left", "partner", "right"]
    else:
        rel = ["you", "left", "left partner", "across", "right partner", "right"]
    return rel[(seat - scene.viewer) % scene.players]


def _own_view(scene: TableScene) -> bool:
    """True for one player's view (only the viewer's hand is known)."""
    return all(h is None for s, h in enumerate(scene.hands) if s != scene.viewer)


def _bid_text(scene: TableScene, seat: int) -> tuple[str, tuple[int, int, int]]:
    """The seat's bid (or its contract, for the declarer once bidding is over) and its colour."""
    b = scene.bids[seat]
    if seat == scene.declarer and scene.phase not in (Phase.PASS, Phase.BID):
        return f"declarer, bid {scene.contract}", _GOLD
    return ("" if b is None else "no bid" if b == 0 else f"bid {b}"), _MUTED


def _legal_cards(scene: TableScene, seat: int) -> set[int] | None:
    """Legal cards of ``seat`` when it is to act in a card phase, else None (nothing to dim)."""
    if seat != scene.current or scene.phase not in (Phase.PASS, Phase.DISCARD, Phase.PLAY) or not scene.legal:
        return None
    return {a for a in scene.legal if a < NUM_CARDS}


def _draw_seat_tags(p: _Painter, scene: TableScene, seat: int, x: float, y: float, size: int = 16) -> float:
    """Seat name in its team's colour and the dealer chip; returns the end x."""
    x += p.text(x, y, f"Seat {seat}", size=size, fill=_TEAM[seat % 2]) + 8
    if seat == scene.dealer:
        p.d.ellipse([x * _SS, (y + 1) * _SS, (x + 18) * _SS, (y + 19) * _SS], fill=_TEXT)
        p.text(x + 9, y + 10, "D", size=12, fill=_BLACK, anchor="mm")
        x += 24
    return x


def _draw_panel(p: _Painter, scene: TableScene, seat: int, x: float, y: float) -> None:
    acting = seat == scene.current
    p.box(x, y, x + _PANEL_W, y + _PANEL_H, outline=_GOLD if acting else _PANEL_EDGE, width=3 if acting else 1)
    _draw_seat_tags(p, scene, seat, x + 10, y + 7)
    bid, colour = _bid_text(scene, seat)
    p.text(x + _PANEL_W - 10, y + 9, bid, size=14, fill=colour, anchor="ra")
    hand = scene.hands[seat]
    if hand is None:
        count = scene.hand_counts[seat]
        for i in range(count):
            p.back(x + 12 + i * 11, y + 44)
        p.text(x + 12, y + 92, f"{count} card{'s' if count != 1 else ''}  ·  {_relative_name(scene, seat)}", size=14,
               fill=_MUTED)
        if acting:
            p.text(x + _PANEL_W - 10, y + 92, "to act", size=14, fill=_GOLD, anchor="ra")
        return
    legal = _legal_cards(scene, seat)
    dim = frozenset(c for c in hand if c not in legal) if legal is not None else frozenset()
    for row, s in enumerate((3, 2, 1, 0)):  # spades first, as in the text render
        yy = y + 32 + row * 22
        red = s in (1, 2)
        p.suit(x + 19, yy + 10, 15, s, (255, 96, 110) if red else _TEXT)
        ranks = [c for c in reversed(cards_of(_mask(hand) & SUIT_MASKS[s]))]
        xx = x + 34
        if not ranks:
            p.text(xx, yy, "-", size=15, fill=_MUTED)
        for c in ranks:
            colour = (120, 150, 132) if c in dim else _TEXT
            xx += p.text(xx, yy, RANKS[rank_of(c)], size=15, fill=colour) + 6


def _mask(cards: list[int]) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def _draw_info(p: _Painter, scene: TableScene) -> None:
    # Top left: the round and the contract.
    p.box(14, 10, 340, 150)
    y = 18
    head = f"Round {scene.round_number}" if scene.round_number is not None else "Round"
    p.text(26, y, head, size=18)
    p.text(330, y + 2, f"pass: {_DIRECTION[scene.pass_direction]}", size=14, fill=_MUTED, anchor="ra")
    y += 28
    p.text(26, y, f"Phase: {_PHASE[scene.phase]}" + (f"  (redeal {scene.redeals})" if scene.redeals else ""),
           size=15, fill=_MUTED)
    y += 24
    if scene.contract is None:
        p.text(26, y, "Contract: -", size=15)
    else:
        word = "High bid" if scene.phase == Phase.BID else "Contract"
        x = 26 + p.text(26, y, f"{word}: {scene.contract} by ", size=15)
        p.text(x, y, f"seat {scene.declarer}", size=15, fill=_TEAM[scene.declarer % 2])
    y += 24
    x = 26 + p.text(26, y, "Trump: ", size=15)
    if scene.trump is None:
        p.text(x, y, "-", size=15)
    else:
        p.box(x, y - 3, x + 30, y + 23, fill=_CARD, outline=_CARD_EDGE, radius=4)
        p.suit(x + 15, y + 10, 19, scene.trump, _RED if scene.trump in (1, 2) else _BLACK)
    y += 28
    if scene.phase == Phase.PLAY or scene.tricks_played:
        p.text(26, y - 2, f"Trick {min(scene.tricks_played + 1, scene.num_tricks)} of {scene.num_tricks}", size=14,
               fill=_MUTED)

    # Top right: scores, tricks, the run.
    p.box(620, 10, WIDTH - 14, 150)
    seats = [", ".join(str(s) for s in range(t, scene.players, 2)) for t in (0, 1)]
    p.text(632, 18, "Scores", size=18)
    p.text(WIDTH - 26, 20, f"target {scene.target}", size=14, fill=_MUTED, anchor="ra")
    p.text(800, 46, "score", size=13, fill=_MUTED, anchor="ra")
    p.text(WIDTH - 26, 46, "tricks", size=13, fill=_MUTED, anchor="ra")
    for t in (0, 1):
        y = 64 + t * 26
        p.text(632, y, f"Team {t} ({seats[t]})", size=16, fill=_TEAM[t])
        p.text(800, y, str(scene.scores[t]), size=17, anchor="ra")
        p.text(WIDTH - 26, y, str(scene.team_tricks[t]), size=17, anchor="ra")
    team, length = scene.run
    if team is None or length == 0:
        p.text(632, 120, "Run: -", size=15, fill=_MUTED)
    else:
        bonus = E.run_bonus(length, scene.double_run_bonus)
        x = 632 + p.text(632, 120, "Run: ", size=15, fill=_MUTED)
        x += p.text(x, 120, f"team {team}", size=15, fill=_TEAM[team])
        p.text(x, 120, f" x {length}  (bonus {bonus})", size=15, fill=_MUTED)


def _draw_trick(p: _Painter, scene: TableScene) -> None:
    cx, cy = WIDTH / 2, 300
    w, h = 58, 84
    rx, ry = (78, 64) if scene.players == 4 else (112, 100)
    for seat in range(scene.players):
        card = scene.trick[seat]
        if card is None:
            continue
        ux, uy = _seat_anchor(scene, seat)
        x, y = cx + ux * rx - w / 2, cy + uy * ry - h / 2
        p.card(x, y, card, w, h, glow=seat == scene.trick_leader)
    if not any(c is not None for c in scene.trick):
        if scene.phase == Phase.PLAY:
            p.text(cx, cy, "lead a card" if scene.tricks_played == 0 else "next trick", size=15, fill=_MUTED, anchor="mm")
        elif scene.phase in (Phase.PASS, Phase.BID, Phase.TRUMP, Phase.DISCARD):
            p.text(cx, cy, _PHASE[scene.phase], size=20, fill=_MUTED, anchor="mm")


def _draw_viewer(p: _Painter, scene: TableScene) -> None:
    seat = scene.viewer
    acting = seat == scene.current
    hand = scene.hands[seat] or []
    y0 = 462
    x = _draw_seat_tags(p, scene, seat, 24, y0)
    if _own_view(scene):
        x += p.text(x, y0 + 1, "(you)", size=15, fill=_MUTED) + 10
    bid, colour = _bid_text(scene, seat)
    p.text(x, y0 + 1, bid, size=15, fill=colour)
    if acting:
        p.text(WIDTH - 24, y0 + 1, "to act", size=16, fill=_GOLD, anchor="ra")
    # The hand, strongest suit first as in the text render: spades, hearts, diamonds, clubs.
    order = sorted(hand, key=lambda c: (-suit_of(c), -rank_of(c)))
    legal = _legal_cards(scene, seat)
    w, h = 62, 90
    n = max(len(order), 1)
    step = min(w + 6, (WIDTH - 48 - w) / max(n - 1, 1))
    total = step * (n - 1) + w
    x = (WIDTH - total) / 2
    for i, c in enumerate(order):
        raised = legal is not None and c in legal
        p.card(x + i * step, y0 + 40 - (12 if raised else 0), c, w, h, dim=legal is not None and not raised)
    if not order:
        p.text(WIDTH / 2, y0 + 80, "no cards", size=15, fill=_MUTED, anchor="mm")
    # Private knowledge of the viewer (R3.3, R9.3).
    y = y0 + 140
    x = 24
    for label, cards in (("passed", scene.passed), ("received", scene.received), ("discarded", scene.discarded)):
        if cards:
            x += p.text(x, y, f"{label}: ", size=14, fill=_MUTED)
            x = p.cards_inline(x, y, sorted(cards, key=lambda c: (-suit_of(c), -rank_of(c))), size=14) + 14


def _status(scene: TableScene) -> str:
    who = f"Seat {scene.current}"
    phase = scene.phase
    if phase == Phase.GAME_OVER:
        totals = f"(team 0: {scene.scores[0]}, team 1: {scene.scores[1]})"
        if scene.truncated or scene.winner is None:
            return f"Game over, truncated {totals}"
        return f"Game over: team {scene.winner} wins {totals}"
    if phase == Phase.ROUND_END:
        return f"Round over: tricks {scene.team_tricks[0]} to {scene.team_tricks[1]} (team 0: {scene.scores[0]}, team 1: {scene.scores[1]})"
    if scene.current < 0:
        return ""
    if phase == Phase.PASS:
        return f"{who} to choose 3 cards to pass ({_DIRECTION[scene.pass_direction]})"
    if phase == Phase.BID:
        bids = [a - 51 for a in scene.legal if 52 <= a <= 64]
        if bids:
            return f"{who} to bid {bids[0]}-{bids[-1]} or pass"
        return f"{who} to bid or pass"
    if phase == Phase.TRUMP:
        return f"{who} (declarer) to name trump"
    if phase == Phase.DISCARD:
        return f"{who} (declarer) to discard"
    if phase == Phase.PLAY:
        on = [c for c in scene.trick if c is not None]
        if not on:
            return f"{who} to lead"
        return f"{who} to play"
    return ""


def draw_scene(scene: TableScene) -> np.ndarray:
    """The picture of a :class:`TableScene` as a ``(720, 960, 3)`` ``uint8`` array."""
    p = _Painter()
    _draw_info(p, scene)
    for k, (x, y) in _PANELS[scene.players].items():
        _draw_panel(p, scene, (scene.viewer + k) % scene.players, x, y)
    _draw_trick(p, scene)
    _draw_viewer(p, scene)
    status = _status(scene)
    x = 24 + p.text(24, HEIGHT - 36, status, size=17, fill=_GOLD if scene.current >= 0 else _TEXT)
    if scene.phase == Phase.PLAY and scene.trick_leader is not None:
        led = scene.trick[scene.trick_leader]
        x += p.text(x + 12, HEIGHT - 36, "· led", size=17, fill=_MUTED) + 12
        p.suit(x + 16, HEIGHT - 25, 17, suit_of(led), (255, 96, 110) if suit_of(led) in (1, 2) else _TEXT)
    return p.image()


__all__ = ["SIZE", "WIDTH", "HEIGHT", "TableScene", "render_state", "render_observation", "draw_scene"]
