"""The card-aware actor (agents/ppo/card_net.py): its features (agents/ppo/card_features.py) against the heuristic's
exact card knowledge, their dependence on the observation alone, and the network, checkpoint and trainer around it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from agents.ppo import ActorCritic, NetworkConfig, PPOAgent, make_checkpoint, read_checkpoint
from agents.ppo.card_features import card_feature_names, row_feature_names, row_feature_size
from agents.ppo.card_net import CardActor, CardFeatures
from agents.ppo.checkpoint import build_model
from agents.scripted.heuristic import PARAMS_4, PARAMS_6, HeuristicAgent, _Play
from pcr_env.cards import beats
from pcr_env.config import RulesConfig
from pcr_env.engine import Phase, apply_action, legal_actions, new_game
from pcr_env.knowledge import seat_knowledge
from pcr_env.observation import decode_observation, encode_observation, observation_layout, observation_size, state_size

PLAIN = str(Path(__file__).resolve().parents[1] / "agents/pretrained/ppo_run3.pt")
"""A plain 256x256 network: run 3's file, the ppo:pretrained shipped before the card-aware one."""


def play_positions(players: int, games: int, seed: int) -> list[tuple[np.ndarray, list[int]]]:
    """(observation, legal actions) of every card-play decision of heuristic games."""
    rules = RulesConfig(players=players)
    rng = np.random.default_rng(seed)
    agent = HeuristicAgent(seed=seed, rules=rules)
    out = []
    for _ in range(games):
        state = new_game(rules, rng)
        while True:
            legal = legal_actions(state)
            if not legal:
                break
            obs = encode_observation(state, state.current)
            if state.phase == Phase.PLAY:
                out.append((obs, legal))
            mask = np.zeros(70, np.int8)
            mask[legal] = 1
            if apply_action(state, agent.act({"observation": obs, "action_mask": mask}), rng) is not None:
                break
    return out


@pytest.mark.parametrize("players", [4, 6])
def test_card_features_match_the_heuristics_knowledge(players):
    """Every feature the heuristic's card play computes exactly (unseen cards, who could hold each, boss cards,
    what takes the trick, whether an opponent still to play could take it back) agrees with CardFeatures."""
    positions = play_positions(players, games=6, seed=players)
    assert len(positions) > 100
    feats = CardFeatures(players)
    cards, rows = feats(torch.from_numpy(np.stack([o for o, _ in positions])))
    col = {name: cards[:, feats.index(name)].numpy() for name in feats.names}
    params = PARAMS_4 if players == 4 else PARAMS_6
    checked_safe = 0
    for i, (obs, legal) in enumerate(positions):
        view = decode_observation(obs)
        play = _Play(view, seat_knowledge(obs, players), legal, params)
        unseen = {c for suit in play.unseen_by_suit for c in suit}
        assert set(np.flatnonzero(col["unseen"][i])) == unseen
        assert set(np.flatnonzero(col["hand"][i])) == set(view.hand)
        for k in range(1, players):
            held = {c for c in unseen if play.could_hold(k, c)}
            assert set(np.flatnonzero(col[f"may_hold_{k}"][i])) == held, (i, k)
            for c in view.hand:
                want = sum(1 for d in held if d // 13 == c // 13 and d > c) / 13
                assert col[f"higher_may_{k}"][i, c] == pytest.approx(want)
        for c in view.hand:
            assert bool(col["boss"][i, c]) == play.is_boss(c)
            assert bool(col["equal_below"][i, c]) == (play.lowest_equal_of(c) != c), (i, c)
            above = any(d // 13 == c // 13 and d > c and not any(c < u < d for u in unseen) for d in view.hand)
            assert bool(col["equal_above"][i, c]) == above, (i, c)
            if c // 13 != play.trump:
                assert bool(col["opp_may_cut"][i, c]) == play.opps_may_cut(c // 13), (i, c)
        assert len(row_feature_names(players)) == rows.shape[1]
        row = dict(zip(row_feature_names(players), rows[i].tolist()))
        assert row["cards_left"] == pytest.approx(len(view.hand) / 13)
        if play.order:
            assert row["led_rank"] == pytest.approx((play.order[0][1] % 13) / 12)
        if play.order:  # following: what takes the trick, and whether an opponent after me could beat it
            led = play.order[0][1] // 13
            wk, wc = play.current_winner()
            assert col["best"][i].nonzero()[0].tolist() == [wc]
            assert row["partner_winning"] == float(wk % 2 == 0)
            assert bool(row["best_safe"]) == play.safe(wc, led), i
            for c in legal:
                wins = beats(c, wc, led, play.trump)
                assert bool(col["wins_now"][i, c]) == wins, (i, c)
                if wins:
                    assert bool(col["safe_win"][i, c]) == play.safe(c, led), (i, c)
                    checked_safe += 1
        else:
            assert (col["wins_now"][i] == 1).all()
            for c in legal:
                assert bool(col["safe_win"][i, c]) == play.safe(c, c // 13), (i, c)
                checked_safe += 1
    assert checked_safe > 100


@pytest.mark.parametrize("players", [4, 6])
def test_named_feature_indices_are_the_positions_of_their_names(players):
    import agents.ppo.card_features as features

    names = card_feature_names(players)
    constants = {name: value for name, value in vars(features).items() if name.startswith("F_") and name != "F_MAY_HOLD"}
    assert len(constants) == len(features._BASE_CARD_FEATURES)
    for name, index in constants.items():
        assert names[index] == name[2:].lower()
    for k in range(1, players):
        assert names[features.F_MAY_HOLD + k - 1] == f"may_hold_{k}"
        assert names[features.F_MAY_HOLD + players - 1 + k - 1] == f"higher_may_{k}"


def test_features_are_a_function_of_the_observation():
    """Nothing but the observation goes in: the same observation gives the same features, whatever the batch
    it sits in, and zeroing everything a seat cannot see is not even possible (the input is the observation)."""
    positions = play_positions(4, games=2, seed=3)
    obs = torch.from_numpy(np.stack([o for o, _ in positions]))
    feats = CardFeatures(4)
    cards, rows = feats(obs)
    one_cards, one_rows = feats(obs[5:6])
    torch.testing.assert_close(one_cards[0], cards[5])
    torch.testing.assert_close(one_rows[0], rows[5])
    assert cards.shape[1] == len(card_feature_names(4)) and rows.shape[1] == row_feature_size(4)
    assert torch.isfinite(cards).all() and (cards >= 0).all() and (cards <= 1).all()


@pytest.mark.parametrize("players", [4, 6])
def test_the_card_inputs_layout_tiles_the_packed_rows(players):
    """CardInputs names [rows | slot_cards | slot_features]: adjacent parts of the sizes of the feature lists and
    the hand, as wide as card_inputs' rows; split gives views (writing to them writes the packed rows)."""
    from agents.ppo.card_features import CardInputs, card_inputs, hand_slots

    layout = CardInputs(players)
    parts = (layout.rows, layout.slot_cards, layout.slot_features)
    assert [p.start for p in parts] == [0, layout.rows.stop, layout.slot_cards.stop] and parts[-1].stop == layout.size
    slots, f = hand_slots(players), len(card_feature_names(players))
    assert [p.stop - p.start for p in parts] == [row_feature_size(players), slots, slots * f]
    assert (layout.num_row_features, layout.slots, layout.num_card_features) == (row_feature_size(players), slots, f)
    packed = card_inputs(np.stack([o for o, _ in play_positions(players, games=1, seed=2)]), players)
    assert packed.shape[1] == layout.size and layout == CardInputs(players)
    for part in layout.split(packed):
        assert np.shares_memory(part, packed)
    split = layout.split(torch.from_numpy(packed)[None])
    assert [tuple(p.shape) for p in split] == [(1, len(packed), layout.num_row_features), (1, len(packed), slots),
                                                 (1, len(packed), slots, f)]


def test_card_inputs_are_zero_past_the_hand_and_the_same_on_every_call():
    """card_inputs writes every entry: slots past the hand hold card -1 and all-zero features, so a batched
    scorer over every slot reads finite numbers and a stored rollout holds no leftover memory."""
    from agents.ppo.card_features import CardInputs, card_inputs

    obs = np.stack([o for o, _ in play_positions(4, games=3, seed=5)])
    for _ in range(3):  # fresh allocations each time: np.empty would hand back other arrays' leftovers
        np.full((len(obs), 4096), np.nan, np.float32)  # leave NaNs in freed memory
        packed = card_inputs(obs, 4)
        _, slot_cards, features = CardInputs(4).split(packed)
        assert np.isfinite(packed).all()
        assert (slot_cards < 0).any() and (features[slot_cards < 0] == 0).all()
        assert np.array_equal(packed, card_inputs(obs, 4))


@pytest.mark.parametrize("players", [4, 6])
def test_card_inputs_hold_the_full_features_of_the_held_cards(players):
    """card_inputs computes features for the cards in hand only: they equal card_features' (computed for all 52
    cards) at each held card, and its per-row features equal card_features' rows."""
    from agents.ppo.card_features import CardInputs, card_features, card_inputs

    obs = np.stack([o for o, _ in play_positions(players, games=2, seed=11)])
    packed = card_inputs(obs, players)
    cards, rows = card_features(obs, players)
    packed_rows, slot_cards, features = CardInputs(players).split(packed)
    assert np.array_equal(packed_rows, rows)
    held = 0
    for b in range(len(obs)):
        for j, card in enumerate(slot_cards[b].astype(int)):
            if card >= 0:
                assert np.array_equal(features[b, j], cards[b, :, card]), (b, card)
                held += 1
    assert held == int(obs[:, observation_layout(players)["hand"]].sum())  # every held card was checked


def test_features_ignore_autocast():
    """Comparisons of card strengths run in float32 even under bfloat16 autocast."""
    positions = play_positions(4, games=1, seed=5)
    obs = torch.from_numpy(np.stack([o for o, _ in positions]))
    feats = CardFeatures(4)
    want = feats(obs)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        got = feats(obs)
    for a, b in zip(want, got):
        assert b.dtype == torch.float32
        torch.testing.assert_close(a, b)


@pytest.mark.parametrize("players", [4, 6])
def test_card_actor_network_and_checkpoint_round_trip(players):
    net = NetworkConfig(hidden_sizes=(32,), critic_hidden_sizes=(16,), card_head=True, card_width=8)
    model = ActorCritic(observation_size(players), state_size(players), 70, net)
    assert isinstance(model.actor, CardActor) and not model.sparse_input
    rules = RulesConfig(players=players)
    ckpt = make_checkpoint(model, {}, rules)
    rebuilt = build_model(ckpt)
    assert rebuilt.config.card_head and rebuilt.config.card_width == 8
    positions = play_positions(players, games=1, seed=7)
    obs = np.stack([o for o, _ in positions])
    masks = np.zeros((len(obs), 70), np.int8)
    for i, (_, legal) in enumerate(positions):
        masks[i, legal] = 1
    a = PPOAgent(model, rules, seed=0).act_batch(obs, masks)
    b = PPOAgent(rebuilt, rules, seed=0).act_batch(obs, masks)
    assert (a == b).all() and all(masks[i, x] for i, x in enumerate(a))


def test_card_scores_are_shared_across_cards():
    """The card scorer is one network: two cards with the same features get the same score."""
    actor = CardActor(observation_size(4), 4, (16,), 70, card_width=8)
    obs = torch.zeros(1, observation_size(4))
    obs[0, 7 + 0] = obs[0, 7 + 13] = 1.0  # 2C and 2D in hand, phase one-hot left empty: nothing else differs
    with torch.no_grad():
        torch.nn.init.zeros_(actor.head.weight)
        logits = actor(obs)
    torch.testing.assert_close(logits[0, 0], logits[0, 13])
    assert not torch.isclose(logits[0, 0], logits[0, 1])  # 3C is not in hand: other features, another score


@pytest.mark.parametrize("players", [4, 6])
def test_precomputed_inputs_and_the_legal_mask_leave_the_masked_logits_unchanged(players):
    """The trainer stores card_inputs once per decision and masked_logits scores only the legal held cards:
    the masked logits of the actor computing its features and scoring every held card itself."""
    torch.manual_seed(0)
    model = ActorCritic(observation_size(players), state_size(players), 70,
                        NetworkConfig(hidden_sizes=(32,), critic_hidden_sizes=(16,), card_head=True, card_width=8))
    with torch.no_grad():
        model.actor.card_out.weight.normal_()  # a scorer far from its small initialisation
    positions = play_positions(players, games=1, seed=3)
    obs = np.stack([o for o, _ in positions])
    mask = torch.zeros(len(obs), 70, dtype=torch.bool)
    for i, (_, legal) in enumerate(positions):
        mask[i, legal] = True
    x = torch.from_numpy(obs)
    packed = torch.from_numpy(model.rollout_inputs(obs, obs)[:, obs.shape[1]:])
    with torch.no_grad():
        full = model.actor(x).masked_fill(~mask, -1e8)
        fast = model.masked_logits(x, mask, packed)
    assert (mask.sum(1) < x[:, 7:7 + 52].sum(1)).any()  # some rows hold cards they may not play
    # Equal up to float rounding (the scorer's matrix products run over fewer rows), so the same greedy actions.
    torch.testing.assert_close(fast, full, rtol=0, atol=1e-5)
    assert torch.equal(fast.argmax(1), full.argmax(1))


def test_network_config_rejects_a_bad_card_width():
    with pytest.raises(ValueError, match="card_width"):
        NetworkConfig(card_head=True, card_width=0)


def test_card_actor_takes_an_empty_batch():
    actor = CardActor(observation_size(4), 4, (16,), 70, card_width=8)
    assert actor(torch.zeros(0, observation_size(4))).shape == (0, 70)


def test_a_card_actor_grafted_from_a_plain_one_computes_its_logits():
    """CardActor.load_plain: the shipped network's weights in a card actor give the shipped network's logits
    (the row features enter with zero weights, the card scorer starts at zero)."""
    plain = build_model(read_checkpoint(PLAIN))
    card = ActorCritic(plain.obs_dim, plain.state_dim, 70,
                       NetworkConfig(hidden_sizes=plain.config.hidden_sizes, card_head=True, card_width=16))
    card.actor.load_plain(plain.actor)
    obs = torch.from_numpy(np.stack([o for o, _ in play_positions(4, games=1, seed=11)]))
    with torch.no_grad():
        torch.testing.assert_close(card.actor(obs), plain.actor(obs), rtol=1e-5, atol=1e-4)
    narrow = ActorCritic(plain.obs_dim, plain.state_dim, 70, NetworkConfig(hidden_sizes=(64, 64), card_head=True))
    with pytest.raises(ValueError, match="does not fit"):
        narrow.actor.load_plain(plain.actor)


def test_init_from_a_plain_checkpoint_grafts_it(tmp_path):
    """warmstart.init_from: a plain checkpoint seeds a card-aware network of the same widths (train.py): it acts
    as the plain one, critic and value normaliser included; a card-aware network of other widths is refused."""
    import train
    from agents.training.workers import Workers

    widths = ["network.hidden_sizes=[256, 256]", "network.critic_hidden_sizes=[256, 256]"]
    cfg = train.load_config("configs/smoke.yaml", [*widths, "network.card_head=true", f"warmstart.init_from={PLAIN}"])
    trainer = train.Trainer(Workers(), train.Run.of(cfg), tmp_path / "run", None, quiet=True)
    trainer.close()
    shipped = build_model(read_checkpoint(PLAIN))
    obs = torch.from_numpy(np.stack([o for o, _ in play_positions(4, games=1, seed=13)]))
    with torch.no_grad():
        torch.testing.assert_close(trainer.model.actor(obs), shipped.actor(obs), rtol=1e-5, atol=1e-4)
    assert all(torch.equal(a, b) for a, b in zip(trainer.model.critic.state_dict().values(),
                                                  shipped.critic.state_dict().values()))
    assert torch.equal(trainer.value_norm.mean, read_checkpoint(PLAIN)["value_norm"]["mean"])
    cfg = train.load_config("configs/smoke.yaml", ["network.card_head=true", f"warmstart.init_from={PLAIN}"])
    with pytest.raises(ValueError, match="has network"):
        train.Trainer(Workers(), train.Run.of(cfg), tmp_path / "run2", None, quiet=True)
