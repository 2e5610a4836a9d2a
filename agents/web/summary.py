"""A person's results against each agent spec, from a folder of their games (``python -m agents.web.summary DIR``).

Reads every ``pcr-replay`` record in ``DIR`` that names a human seat (``meta.human_seat``: the
browser table, ``python -m agents.serve --records DIR``, and the terminal player,
``python -m agents.play --replays DIR``) and groups them by the opponents' specs and the partner's.
Per group: games, finished games won, rounds, points per round (your team's round score minus the
other's) with a 95% normal interval, and the contracts your team made when it declared.

>>> summarise([])
[]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pcr_env.replay import load_replays


def _group(record: Mapping[str, Any]) -> tuple[str, str] | None:
    seat = record.get("meta", {}).get("human_seat")
    if not isinstance(seat, int):
        return None
    seats = record["seats"]
    opponents = sorted({s["agent"] for s in seats if s["team"] != seat % 2})
    partners = sorted({s["agent"] for s in seats if s["team"] == seat % 2 and s["seat"] != seat})
    return " / ".join(opponents), " / ".join(partners)


def summarise(records: str | Path | Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per (opponents, partner): the person's results in ``records`` (a folder, or the records themselves)."""
    if isinstance(records, (str, Path)):
        records = [r for _, r in load_replays(records)]
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for rec in records:
        key = _group(rec)
        if key is None:
            continue
        us = rec["meta"]["human_seat"] % 2
        g = groups.setdefault(key, {"opponents": key[0], "partner": key[1], "games": 0, "finished_games": 0, "won": 0,
                                    "rounds": 0, "diffs": [], "declared": 0, "made": 0, "seeds": []})
        g["games"] += 1
        g["seeds"].append(rec["meta"].get("seed"))
        if rec["meta"].get("episode") == "game" and rec.get("winner") is not None and not rec.get("truncated"):
            g["finished_games"] += 1
            g["won"] += int(rec["winner"] == us)
        for rnd in rec["rounds"]:
            res = rnd["result"]
            g["rounds"] += 1
            g["diffs"].append(res["scores"][us] - res["scores"][1 - us])
            if res["declarer_team"] == us:
                g["declared"] += 1
                g["made"] += int(res["made"])
    rows = []
    for g in groups.values():
        d = g.pop("diffs")
        mean = sum(d) / len(d) if d else float("nan")
        sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (len(d) - 1)) if len(d) > 1 else float("nan")
        half = 1.96 * sd / math.sqrt(len(d)) if len(d) > 1 else float("nan")
        rows.append(dict(g, points_per_round=mean, ci95=[mean - half, mean + half]))
    return sorted(rows, key=lambda r: (r["opponents"], r["partner"]))


def table(rows: Sequence[Mapping[str, Any]]) -> str:
    """The rows as a Markdown table."""
    def num(x: float) -> str:
        return "-" if x != x else f"{x:+.2f}"

    lines = ["| opponents | partner | games | games won | rounds | points per round [95% CI] | contracts made |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        won = f"{r['won']} of {r['finished_games']}" if r["finished_games"] else "-"
        made = f"{r['made']} of {r['declared']}" if r["declared"] else "-"
        lines.append(f"| `{r['opponents']}` | `{r['partner']}` | {r['games']} | {won} | {r['rounds']} | "
                     f"{num(r['points_per_round'])} [{num(r['ci95'][0])}, {num(r['ci95'][1])}] | {made} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m agents.web.summary", description=__doc__.split("\n\n")[0])
    p.add_argument("directory", metavar="DIR", help="a records folder (python -m agents.serve --records DIR)")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = p.parse_args(argv)
    if not Path(args.directory).is_dir():
        print(f"python -m agents.web.summary: error: {args.directory} is not a directory", file=sys.stderr)
        return 2
    rows = summarise(args.directory)
    if not rows:
        print(f"python -m agents.web.summary: no games with a person's seat in {args.directory}", file=sys.stderr)
        return 1
    print(json.dumps(rows, indent=1) if args.json else table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
