"""OpenSpiel's own learning code on Pass Cut Run: its PyTorch A2C (``open_spiel.python.pytorch.policy_gradient``)
trains team 0 against uniform random seats through OpenSpiel's ``rl_environment``, on ``python_pass_cut_run``.

    pip install torch==2.13.0 && pip install -e ".[train,openspiel]"
    python examples/openspiel_policy_gradient.py --minutes 3

This is OpenSpiel's own path, as in its ``policy_gradient_pytorch_test.py``, with nothing of ours but the game:

- ``import pcr_env.openspiel`` registers the game; ``pyspiel.load_game("python_pass_cut_run", {"episode":
  "round", "reward": "win"})`` is one round with +1/-1 (0 for a tie) at its end, to each seat of a team;
- ``rl_environment.Environment(game)`` deals (its chance events) and hands each seat its information-state
  tensor (our 797-float observation) and its legal actions;
- seats 0 and 2 (team 0) are two ``PolicyGradient`` agents (``loss_str="a2c"``), one per seat; seats 1 and 3
  are OpenSpiel's ``RandomAgent`` (uniform over the legal actions).

The score is team 0's mean return per round over ``--eval-rounds`` rounds played by sampling each policy with
``is_evaluation=True`` (no learning), before and after training, on the same seeds. ``main()`` returns a summary
dict (``tests/test_openspiel.py`` runs it for a few rounds).
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any, Sequence

import numpy as np


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--minutes", type=float, default=3.0, help="training time (default 3)")
    p.add_argument("--max-rounds", type=int, default=None, help="stop after this many training rounds as well")
    p.add_argument("--eval-rounds", type=int, default=200, help="rounds of each evaluation (default 200)")
    p.add_argument("--hidden", type=int, default=128, help="units of the one hidden layer (default 128)")
    p.add_argument("--seed", type=int, default=0)
    return p


def make_env(seed: int) -> Any:
    """OpenSpiel's ``rl_environment`` over ``python_pass_cut_run``: one round, +1/-1 per team at its end."""
    import pyspiel
    from open_spiel.python import rl_environment

    import pcr_env.openspiel  # noqa: F401 - registers python_pass_cut_run

    game = pyspiel.load_game("python_pass_cut_run", {"episode": "round", "reward": "win"})
    return rl_environment.Environment(game, seed=seed)


def play_round(env: Any, agents: list[Any], learn: bool) -> float:
    """One round; returns team 0's return (seat 0's; its partner's is the same)."""
    step = env.reset()
    while not step.last():
        seat = step.observations["current_player"]
        step = env.step([agents[seat].step(step, is_evaluation=not learn).action])
    for agent in agents:  # every seat sees the end (the learners close their episode)
        agent.step(step, is_evaluation=not learn)
    return float(step.rewards[0])


def evaluate(agents: list[Any], rounds: int, seed: int) -> float:
    env = make_env(seed)
    return float(np.mean([play_round(env, agents, learn=False) for _ in range(rounds)]))


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = build_parser().parse_args(argv)
    import torch
    from open_spiel.python.algorithms.random_agent import RandomAgent
    from open_spiel.python.pytorch.policy_gradient import PolicyGradient

    torch.manual_seed(args.seed)
    np.random.seed(args.seed)  # RandomAgent and the PolicyGradient's sampling use numpy's global generator
    env = make_env(args.seed)
    size, actions = env.observation_spec()["info_state"][0], env.action_spec()["num_actions"]
    agents: list[Any] = []
    for seat in range(env.num_players):
        if seat % 2 == 0:
            agents.append(PolicyGradient(seat, size, actions, loss_str="a2c", hidden_layers_sizes=(args.hidden,),
                                         batch_size=16, critic_learning_rate=0.01, pi_learning_rate=0.01,
                                         entropy_cost=0.01, num_critic_before_pi=4, optimizer_str="adam"))
        else:
            agents.append(RandomAgent(seat, actions))
    before = evaluate(agents, args.eval_rounds, seed=10_000 + args.seed)
    started, rounds = time.perf_counter(), 0
    while time.perf_counter() - started < 60 * args.minutes and (args.max_rounds is None or rounds < args.max_rounds):
        play_round(env, agents, learn=True)
        rounds += 1
    seconds = time.perf_counter() - started
    after = evaluate(agents, args.eval_rounds, seed=10_000 + args.seed)
    summary = {"training_rounds": rounds, "training_seconds": round(seconds, 1), "eval_rounds": args.eval_rounds,
               "team0_return_before": before, "team0_return_after": after}
    print(json.dumps(summary))
    return summary


if __name__ == "__main__":
    main()
