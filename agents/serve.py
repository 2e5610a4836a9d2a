"""Play the agents in a browser: ``python -m agents.serve`` serves a local web table (Starlette on uvicorn).

    python -m agents.serve --agents heuristic                      # http://127.0.0.1:8765/
    python -m agents.serve --agents ppo:pretrained heuristic ppo:pretrained --episode round
    python -m agents.serve --agents search:ppo:pretrained --hint ppo:pretrained --records runs/my_games

It binds 127.0.0.1 (this machine only). ``--host ADDRESS`` opens it on another address, with a
warning: anyone who reaches that address can then start tables (each table still answers only to
the page that made it). :func:`serve` refuses a non-loopback address unless ``allow_remote`` is
set, which only ``--host`` does. Tables are kept in ``--tables DIR`` (a restart continues them),
finished games in ``--records DIR`` with ``index.html``, the replay viewer;
``python evaluate.py --people DIR`` sums up your results against each agent spec. Needs the
``web`` extra (``pip install -e ".[web]"``).

>>> is_loopback("127.0.0.1"), is_loopback("localhost"), is_loopback("::1"), is_loopback("0.0.0.0")
(True, True, True, False)
"""

from __future__ import annotations

import argparse
import ipaddress
import sys
from collections.abc import Sequence
from typing import Any

from agents.play import add_table_arguments, table_rules
from agents.registry import parse_spec
from pcr_env.seating import per_seat

DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 8765


class BindRefused(ValueError):
    """A non-loopback address without ``--host`` (``allow_remote``)."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (``localhost``, 127.0.0.0/8, ``::1``)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, allow_remote: bool = False) -> str | None:
    """``None`` for a loopback ``host``; a warning to print when ``allow_remote``; else raises :class:`BindRefused`."""
    if is_loopback(host):
        return None
    if not allow_remote:
        raise BindRefused(f"refusing to bind {host!r}: it is not a loopback address; pass --host {host} to open the "
                          "server to other machines on purpose")
    return (f"WARNING: serving on {host}, not only on this machine: anyone who can reach it can start tables and run "
            "the agents here (each table answers only to the page that made it). There is no TLS and no login.")


def serve(config: Any, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, *, allow_remote: bool = False) -> None:
    """Run the app for ``config`` (:class:`agents.web.app.ServeConfig`) under uvicorn until interrupted."""
    warning = check_bind(host, allow_remote)
    if warning:
        print(warning, file=sys.stderr)
        config.allowed_hosts = ["*"]
    import uvicorn

    from agents.web.app import create_app

    app = create_app(config)
    shown = f"[{host}]" if ":" in host else host
    print(f"Pass Cut Run table: open http://{shown}:{port}/  (Ctrl-C stops; tables are kept in {config.tables_dir})")
    uvicorn.run(app, host=host, port=port, log_level="warning")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m agents.serve", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_table_arguments(p)
    p.add_argument("--hint", default="heuristic", metavar="SPEC",
                   help="the agent whose advice the hint button shows ('none' for no hints; ppo:... shows probabilities)")
    p.add_argument("--records", default="runs/web/records", metavar="DIR", help="finished games (replay records) go here")
    p.add_argument("--tables", default="runs/web/tables", metavar="DIR", help="tables in play (a restart continues them)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT)
    p.add_argument("--host", default=None, metavar="ADDRESS",
                   help=f"bind ADDRESS instead of {DEFAULT_HOST}: opens the server to other machines (with a warning)")
    return p


def make_config(args: argparse.Namespace) -> Any:
    """The :class:`~agents.web.app.ServeConfig` of parsed arguments (specs checked, one per seat)."""
    from agents.web.app import ServeConfig

    rules = table_rules(args)
    n = rules.players
    if not 0 <= args.seat < n:
        raise ValueError(f"--seat {args.seat} is not allowed: allowed 0..{n - 1}")
    others = [s for s in range(n) if s != args.seat]
    specs = per_seat(args.agents[0] if len(args.agents) == 1 else args.agents, others, name="--agents")
    hint = None if args.hint.lower() == "none" else args.hint
    for spec in [*specs.values(), *([hint] if hint else [])]:
        parse_spec(spec)
    agents = ["you" if s == args.seat else specs[s] for s in range(n)]
    return ServeConfig(agents=agents, seat=args.seat, episode=args.episode, seed=args.seed, rules=rules.to_dict(), hint=hint,
                       tables_dir=args.tables, records_dir=args.records)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        config = make_config(args)
        serve(config, host=args.host or DEFAULT_HOST, port=args.port, allow_remote=args.host is not None)
    except ImportError as err:
        extra = "; install the web extra: pip install -e '.[web]'" if getattr(err, "name", "") in ("starlette", "uvicorn") else ""
        print(f"python -m agents.serve: error: {err}{extra}", file=sys.stderr)
        return 2
    except ValueError as err:
        print(f"python -m agents.serve: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
