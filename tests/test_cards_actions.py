"""Card names and the action space (pinned helpers of pcr_env.cards and pcr_env.actions)."""

from __future__ import annotations

import pytest

import pcr_env
from pcr_env import actions as A
from pcr_env.actions import NUM_ACTIONS, PASS_BID, bid_action, card_action, describe_action, trump_action
from pcr_env.cards import (
    FULL_DECK,
    NUM_CARDS,
    SUIT_MASKS,
    card_str,
    cards_of,
    hand_str,
    highest,
    lowest,
    make_card,
    mask_of,
    parse_card,
    parse_cards,
    rank_of,
    suit_of,
)


def test_pinned_helpers_are_exported_from_the_package():
    for name in ("parse_card", "parse_cards", "card_str", "card_action", "bid_action", "PASS_BID", "trump_action",
                 "NUM_ACTIONS", "describe_action", "decode_observation"):
        assert hasattr(pcr_env, name), name


@pytest.mark.parametrize("text, expected", [
    ("AS", make_card(3, 12)), ("as", make_card(3, 12)), ("10H", make_card(2, 8)), ("th", make_card(2, 8)),
    ("TH", make_card(2, 8)), ("10h", make_card(2, 8)), ("2C", 0), ("2c", 0), ("KD", make_card(1, 11)),
    ("qs", make_card(3, 10)), ("jC", make_card(0, 9)), (" 9d ", make_card(1, 7)),
])
def test_parse_card_accepts_ten_as_10_or_t_in_any_case(text, expected):
    assert parse_card(text) == expected


@pytest.mark.parametrize("bad", ["", "A", "S", "1H", "11H", "AX", "ZS", "10", "HA", "AS S", "0H"])
def test_parse_card_rejects_non_cards_with_the_name_in_the_message(bad):
    with pytest.raises(ValueError, match="is not a card name"):
        parse_card(bad)


def test_card_str_round_trips_every_card_and_uses_10():
    names = [card_str(c) for c in range(NUM_CARDS)]
    assert len(set(names)) == NUM_CARDS
    assert all(parse_card(n) == c for c, n in enumerate(names))
    assert card_str(parse_card("TH")) == "10H"
    assert names[:13] == ["2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "10C", "JC", "QC", "KC", "AC"]


@pytest.mark.parametrize("bad", [-1, 52, 100])
def test_card_str_rejects_out_of_range(bad):
    with pytest.raises(ValueError, match="out of range"):
        card_str(bad)


def test_parse_cards_splits_on_spaces_and_commas():
    assert parse_cards("AS, th 2c,KD") == [parse_card("AS"), parse_card("10H"), 0, parse_card("KD")]
    assert parse_cards("") == []
    with pytest.raises(ValueError, match="'ZZ'"):
        parse_cards("AS ZZ")


def test_card_layout_is_suit_major_with_rank_order_two_to_ace():
    # R1.4: a higher rank index is a stronger card inside its suit.
    for c in range(NUM_CARDS):
        assert c == make_card(suit_of(c), rank_of(c))
    assert [suit_of(parse_card(f"A{s}")) for s in "CDHS"] == [0, 1, 2, 3]
    assert rank_of(parse_card("AS")) > rank_of(parse_card("KS")) > rank_of(parse_card("10S")) > rank_of(parse_card("2S"))


def test_bitmask_helpers():
    cards = parse_cards("2C AS 10H KD")
    mask = mask_of(cards)
    assert cards_of(mask) == sorted(cards)
    assert highest(mask) == parse_card("AS") and lowest(mask) == parse_card("2C")
    assert mask_of(range(NUM_CARDS)) == FULL_DECK
    assert sum(m.bit_count() for m in SUIT_MASKS) == NUM_CARDS and (SUIT_MASKS[0] | SUIT_MASKS[3]).bit_count() == 26
    assert hand_str(mask) == "S: A  H: 10  D: K  C: 2"
    assert hand_str(0) == "S: -  H: -  D: -  C: -"


def test_action_space_layout():
    assert NUM_ACTIONS == 70
    assert PASS_BID == 65
    assert [card_action(c) for c in (0, 51)] == [0, 51]
    assert card_action("QS") == parse_card("QS")
    assert [bid_action(k) for k in (1, 7, 13)] == [52, 58, 64]
    assert [trump_action(s) for s in "CDHS"] == [66, 67, 68, 69]
    assert [trump_action(s) for s in "cdhs"] == [66, 67, 68, 69]
    assert [trump_action(i) for i in range(4)] == [66, 67, 68, 69]
    ids = list(range(52)) + [bid_action(k) for k in range(1, 14)] + [PASS_BID] + [trump_action(s) for s in "CDHS"]
    assert ids == list(range(NUM_ACTIONS))  # every id has exactly one meaning


def test_numpy_integers_are_accepted():
    import numpy as np

    assert bid_action(np.int32(7)) == 58 and card_action(np.int64(5)) == 5 and trump_action(np.int8(3)) == 69
    assert describe_action(np.int64(PASS_BID)) == "no bid"
    assert all(type(x) is int for x in (bid_action(np.int32(7)), card_action(np.int64(5)), trump_action(np.int8(3))))


def test_action_classifiers_partition_the_space():
    for a in range(NUM_ACTIONS):
        kinds = [A.is_card(a), A.is_bid(a), a == PASS_BID, A.is_trump(a)]
        assert sum(kinds) == 1, a
    assert A.bid_value(bid_action(9)) == 9 and A.trump_suit(trump_action("H")) == 2


def test_describe_action_names_every_action():
    names = [describe_action(a) for a in range(NUM_ACTIONS)]
    assert len(set(names)) == NUM_ACTIONS
    assert names[parse_card("10H")] == "10H"
    assert (names[bid_action(7)], names[PASS_BID], names[trump_action("S")]) == ("bid 7", "no bid", "trump S")


@pytest.mark.parametrize("call, match", [
    (lambda: describe_action(70), "out of range"),
    (lambda: describe_action(-1), "out of range"),
    (lambda: bid_action(0), "bid 0 is out of range"),
    (lambda: bid_action(14), "bid 14 is out of range"),
    (lambda: trump_action("X"), "not a suit"),
    (lambda: trump_action("CD"), "not a suit"),
    (lambda: trump_action(4), "out of range"),
    (lambda: card_action(52), "out of range"),
    (lambda: card_action(-1), "out of range"),
    (lambda: card_action("1S"), "not a card name"),
    # Non-integers are refused rather than truncated: 7.0 is not an action id, True is not a bid.
    (lambda: bid_action(7.0), "bid 7.0"),
    (lambda: bid_action(True), "bid True"),
    (lambda: trump_action(1.5), "trump suit 1.5"),
    (lambda: card_action(3.7), "card 3.7"),
    (lambda: describe_action(65.5), "action 65.5"),
    (lambda: parse_card(5), "card 5 is not a card name"),
])
def test_action_helpers_reject_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
