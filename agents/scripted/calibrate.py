"""Re-measure the numbers behind the heuristic's bidding rule (``PARAMS_4`` / ``PARAMS_6``).

Heuristic players pass (R3) as usual; then one seat drawn at random is made
declarer at the minimum bid (the others pass), names trump and the round is
played out by heuristics. From these forced contracts the script fits:

* ``team_base``, ``team_slope``, ``sigma``: the declaring team's tricks against
  the declarer's hand valuation ``T`` (least squares ``t ≈ a + b*T``, residual SD);
* ``run_diff[t]`` and ``defender_runs[t]``: the mean run-bonus edge of the
  declaring team and the defenders' mean run bonus when it takes ``t`` tricks
  (R7; trick counts never seen fall back to the bonus of one unbroken run).

Seeded, so a run is reproducible; it prints a ``HeuristicParams`` literal.
The shipped values came from ``--rounds 3000`` (four players) and ``--rounds
2000 --players 6`` with the default seed.

    python -m agents.scripted.calibrate --players 4 --rounds 3000
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from agents.scripted.heuristic import HeuristicAgent, best_trump
from pcr_env import engine as E
from pcr_env.actions import PASS_BID, bid_action
from pcr_env.config import RulesConfig
from pcr_env.observation import encode_observation


def forced_contracts(players: int, rounds: int, seed: int) -> np.ndarray:
    """Rows ``(T, declaring team's tricks, its run bonus, defenders' run bonus)``, one per round."""
    config = RulesConfig(players=players)
    agent = HeuristicAgent(rules=config)
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(rounds):
        state = E.new_game(config, rng, round_number=1 + i % 4)
        while state.phase == E.Phase.PASS:
            obs = {"observation": encode_observation(state, state.current), "action_mask": E.legal_mask(state)}
            E.apply_action(state, agent.act(obs), rng)
        declarer = int(rng.integers(players))
        valuation = best_trump(E.cards_of(state.hands[declarer]), players)[1]
        while state.phase == E.Phase.BID:
            E.apply_action(state, bid_action(config.min_bid_value) if state.current == declarer else PASS_BID, rng)
        result = None
        while state.phase < E.Phase.ROUND_END:
            obs = {"observation": encode_observation(state, state.current), "action_mask": E.legal_mask(state)}
            result = E.apply_action(state, agent.act(obs), rng)
        team = declarer % 2
        rows.append((valuation, result.tricks[team], result.run_bonus[team], result.run_bonus[1 - team]))
    return np.array(rows, float)


def fit(rows: np.ndarray, players: int) -> dict:
    valuation, tricks, mine, theirs = rows.T
    slope, base = np.polyfit(valuation, tricks, 1)
    sigma = float(np.std(tricks - (base + slope * valuation)))
    n = RulesConfig(players=players).num_tricks
    run_diff, defender_runs = [], []
    for t in range(n + 1):
        sel = tricks == t
        if sel.sum() >= 5:
            run_diff.append(round(float((mine - theirs)[sel].mean()), 1))
            defender_runs.append(round(float(theirs[sel].mean()), 1))
        else:  # unseen split: one unbroken run for the side with all tricks, else nothing
            full = 2 * n - 1
            run_diff.append(float(full if t == n else -full if t == 0 else 0.0))
            defender_runs.append(float(full if t == 0 else 0.0))
    return {"team_base": round(float(base), 2), "team_slope": round(float(slope), 2), "sigma": round(sigma, 2),
            "run_diff": tuple(run_diff), "defender_runs": tuple(defender_runs)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, choices=(4, 6), default=4)
    parser.add_argument("--rounds", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=123)
    args = parser.parse_args(argv)
    rows = forced_contracts(args.players, args.rounds, args.seed)
    params = fit(rows, args.players)
    print(f"# {args.rounds} forced contracts, {args.players} players, seed {args.seed}; "
          f"mean T {rows[:, 0].mean():.2f}, mean declaring-team tricks {rows[:, 1].mean():.2f}")
    print("HeuristicParams(" + ", ".join(f"{k}={v!r}" for k, v in params.items()) + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
