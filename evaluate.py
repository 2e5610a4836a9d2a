"""Duplicate head-to-head evaluation of Pass Cut Run agents (command line).

Every pair of agents plays the same deals twice with the teams swapped, so the
luck of the cards cancels; see :mod:`agents.evaluation` for the method.

    python evaluate.py --agents heuristic random --deals 2000 --seed 0 --workers 2
    python evaluate.py --agents ppo:runs/default/checkpoints/best.pt heuristic random --out runs/default/eval
    python evaluate.py --agents heuristic random --players 6 --episode game --deals 200
    python evaluate.py --agents ppo:pretrained heuristic --deals 200 --replays runs/replays   # + game records
    python evaluate.py --people runs/web/records   # a person's games (browser table, terminal player) per agent spec
    python evaluate.py --agents search:ppo:pretrained pimc --deals 500 --ray auto   # on a Ray cluster (ray start --head)
    python evaluate.py --exploit heuristic --budget 12M --workers 2   # how exploitable: a best response, trained

Agent specs: ``random``, ``greedy``, ``heuristic``, ``ppo:PATH`` (``ppo:pretrained``), ``search:SPEC``
(``search:ppo:pretrained``), ``pimc``, ``openspiel:BOT`` (``openspiel:ismcts:sims=200``).
A single agent plays a copy of itself (a self-play check, said so in the output); repeat a spec to
rate two copies.
"""

from __future__ import annotations

import argparse
import os
import sys

from agents.registry import list_agents, parse_spec
from pcr_env.rules_flags import add_rules_arguments, rules_from_args


def _spec(text: str) -> str:
    try:
        parse_spec(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text


def build_parser() -> argparse.ArgumentParser:
    specs = ", ".join(list_agents())
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=f"agent specs: {specs}")
    parser.add_argument("--agents", nargs="+", type=_spec, metavar="SPEC", help=f"agents to compare ({specs})")
    parser.add_argument("--people", metavar="DIR",
                        help="instead of playing: a person's results against each agent spec in DIR's game records "
                             "(python -m agents.serve --records DIR, python -m agents.play --replays DIR); with --out OUT, "
                             "also OUT/people.json")
    parser.add_argument("--ladder", metavar="NAME", choices=("quick", "full"),
                        help="rate --agents on a reference ladder (quick or full: fixed references, suite and seed; "
                             "ratings on the published scale, random = 0); without --agents, replay the references "
                             "and check their published ratings")
    parser.add_argument("--publish", action="store_true",
                        help="with --ladder and no --agents: write the references' ratings as the ladder's published file")
    parser.add_argument("--deals", type=int, default=None,
                        help="duplicate deals per pair (each is played twice; default 1000; --exploit: exploit.deals)")
    parser.add_argument("--seed", type=int, default=None,
                        help="seed of the deal suite and of the agents (default 0; --exploit: exploit.seed)")
    parser.add_argument("--episode", choices=("round", "game"), default="round",
                        help="a deal is one round (default) or a whole game to --target-score")
    parser.add_argument("--workers", type=int, default=1, help="worker processes (results do not depend on it)")
    parser.add_argument("--ray", metavar="ADDRESS",
                        help="play the deals as tasks on a Ray cluster instead: auto, HOST:PORT, ray://HOST:PORT or "
                             "local (the same results as --workers; the rllib extra)")
    parser.add_argument("--out", metavar="DIR", help="write results.json, results.csv, ratings.csv and table.md here")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.add_argument("--replays", metavar="DIR",
                        help="write game records of the first --replay-deals deals of every pair (both tables) "
                             "as DIR/*.json plus DIR/index.html, a self-contained viewer (open it in a browser)")
    parser.add_argument("--replay-deals", type=int, default=2, metavar="N",
                        help="deals per pair to record with --replays (default 2; each gives two records)")
    exploit = parser.add_argument_group("best response (how exploitable an agent is: agents/training/exploit.py)")
    exploit.add_argument("--exploit", type=_spec, metavar="SPEC",
                         help="train a best response to SPEC (frozen, one team) and report exploiter - SPEC over "
                              "fresh duplicate deals: a lower bound on SPEC's exploitability at --budget")
    exploit.add_argument("--budget", default="12M", help="--exploit's training decisions, e.g. 12M (about 15 minutes "
                                                         "on 2 cores), 48M, 500k (default 12M)")
    exploit.add_argument("--config", metavar="FILE", help="--exploit's training config (default configs/exploit.yaml)")
    exploit.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                         help="override a key of --exploit's config, e.g. --set exploit.start=bc (repeatable)")
    exploit.add_argument("--run-dir", metavar="DIR", help="--exploit's run directory (default runs/exploit/<SPEC>__<time>)")
    exploit.add_argument("--resume", metavar="RUN_DIR", help="continue an interrupted --exploit run, then report it")
    exploit.add_argument("--report", metavar="RUN_DIR", help="play the report of a finished --exploit run again")
    exploit.add_argument("--dry-run", action="store_true",
                         help="with --exploit: check the target, the budget and the config, print the plan, write nothing")
    exploit.add_argument("--max-iterations", type=int, default=None, metavar="N",
                         help="stop --exploit's training after N iterations of this call (saving latest.pt: a leg "
                              "of a long run; continue with --resume)")
    add_rules_arguments(parser, exclude=["first_dealer"])  # every deal of the suite names its dealer
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.people:
        return _people(args)
    if args.ladder:
        return _ladder(args, argv)
    if args.exploit or args.resume or args.report:
        return _exploit(args)
    args.deals = 1000 if args.deals is None else args.deals
    args.seed = 0 if args.seed is None else args.seed
    if not args.agents:
        parser.error("--agents is required (or --people DIR)")
    if args.replay_deals < 1:
        parser.error(f"--replay-deals {args.replay_deals} is not allowed: allowed an integer >= 1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")  # parallelism comes from processes
    from agents.evaluation import evaluate, write_outputs

    try:
        rules = rules_from_args(args)
        result = evaluate(args.agents, deals=args.deals, seed=args.seed, episode=args.episode, workers=args.workers,
                          progress=not args.no_progress, rules=rules,
                          record_deals=min(args.replay_deals, args.deals) if args.replays else 0, ray_address=args.ray)
    except ValueError as err:
        print(f"evaluate.py: error: {err}", file=sys.stderr)
        return 2
    if len(args.agents) == 1:
        print(f"one agent given: {args.agents[0]} plays a copy of itself (a self-play check: the difference "
              "should be about 0); give two or more agents to compare them\n")
    print(result.table())
    if args.out:
        paths = write_outputs(result, args.out)
        print("\nwrote " + ", ".join(str(p) for p in paths.values()))
    if args.replays:
        from pcr_env.replay import write_replays

        written = write_replays(result.replays, args.replays, title=f"Pass Cut Run replays: {' vs '.join(result.config['agents'])}")
        print(f"\nwrote {len(written['json'])} replay records to {args.replays}; open {written['html']} in a browser")
    return 0


def _ladder(args: argparse.Namespace, argv: list[str] | None) -> int:
    """``--ladder NAME``: rate ``--agents`` on the ladder, or replay (and with ``--publish`` publish) its references."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from agents.evaluation import ladder as ladders

    ladder = ladders.get_ladder(args.ladder)
    run = {"workers": args.workers, "progress": not args.no_progress, "ray_address": args.ray}
    try:
        if args.agents:
            if args.publish:
                print("evaluate.py: error: --publish writes the references' ratings: give no --agents", file=sys.stderr)
                return 2
            print(ladders.ladder_table(ladder, ladders.rate(ladder, args.agents, **run)))
            return 0
        result = ladders.play_references(ladder, **run)
        if args.publish:
            command = "python evaluate.py " + " ".join(sys.argv[1:] if argv is None else argv)
            print(f"wrote {ladders.publish(ladder, result, command)}")
            return 0
        rows = ladders.reproduced(ladder, result)
    except (ValueError, FileNotFoundError) as err:
        print(f"evaluate.py: error: {err}", file=sys.stderr)
        return 2
    print(f"Ladder {ladder.name!r}: the references replayed ({ladder.deals} deals a pair, seed {ladder.seed}) against "
          "their published ratings:\n\n| reference | published | 95% interval | now | within |\n|---|---|---|---|---|")
    for agent, elo, half, now, ok in rows:
        print(f"| {agent} | {elo:.0f} | [{elo - half:.0f}, {elo + half:.0f}] | {now:.0f} | {'yes' if ok else 'NO'} |")
    return 0 if all(ok for *_, ok in rows) else 1


def _exploit(args: argparse.Namespace) -> int:
    """``--exploit SPEC`` (``--resume RUN_DIR``, ``--report RUN_DIR``): train a best response, then report it."""
    import time
    from pathlib import Path

    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import train
    from agents.run_dir import RunDir
    from agents.training import exploit, run_state

    if sum(bool(x) for x in (args.exploit, args.resume, args.report)) > 1:
        print("evaluate.py: error: give one of --exploit SPEC, --resume RUN_DIR or --report RUN_DIR", file=sys.stderr)
        return 2
    try:
        if args.report:
            run_dir = Path(args.report)
        elif args.resume:
            run_dir = Path(args.resume)
            exploit.check_target_unchanged(exploit.read_meta(run_dir))
            run, _, resume = train.setup_run(argparse.Namespace(resume=str(run_dir), config=None, set=args.set))
            train.check_start(run, resume)
        else:
            figure_keys = [f"exploit.{k}={v}" for k, v in (("deals", args.deals), ("seed", args.seed)) if v is not None]
            plan = exploit.plan_exploit(args.exploit, args.budget, args.config, (*figure_keys, *args.set))
            slug = "".join(c if c.isalnum() else "_" for c in args.exploit).strip("_")
            run_dir = run_state.new_run_dir(Path(args.run_dir or f"runs/exploit/{slug}__{time.strftime('%Y%m%d-%H%M%S')}"))
            train.check_start(plan.run, None)
            if args.dry_run:
                print(f"evaluate.py --dry-run: would train a best response to {plan.target} in {run_dir} (start "
                      f"{plan.start}; stages (iterations) {plan.run.plan()}), then report it; nothing written")
                return 0
            run, resume = plan.run, None
            exploit.write_meta(plan, run_dir)
        if not args.report:
            train.launch(run, run_dir, resume, args.max_iterations, program="evaluate.py")
            if not exploit.finished(RunDir(run_dir)):
                print(f"stopped before the end of training: continue with python evaluate.py --resume {run_dir}")
                return 1
        figures = exploit.report(run_dir, workers=args.workers, progress=not args.no_progress, deals=args.deals,
                                 seed=args.seed, overrides=tuple(args.set) if args.report else ())
    except ValueError as err:
        print(f"evaluate.py: error: {err}", file=sys.stderr)
        return 2
    print(exploit.lower_bound_line(figures))
    print(f"report: {run_dir / exploit.REPORT_DIR / 'report.md'}")
    return 0


def _people(args: argparse.Namespace) -> int:
    """``--people DIR``: the person's results per agent spec (:mod:`agents.evaluation.people`)."""
    import json
    from pathlib import Path

    from agents.evaluation import finite_json
    from agents.evaluation.people import people_table, summarise

    if not Path(args.people).is_dir():
        print(f"evaluate.py: error: --people {args.people} is not a directory", file=sys.stderr)
        return 2
    rows = summarise(args.people)
    if not rows:
        print(f"evaluate.py: error: no games with a person's seat (meta.human_seat) in {args.people}", file=sys.stderr)
        return 2
    print(f"A person's games in {args.people}, by the agents they played with and against:\n")
    print(people_table(rows))
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "people.json").write_text(json.dumps(finite_json(rows), indent=1) + "\n")
        print(f"\nwrote {out / 'people.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
