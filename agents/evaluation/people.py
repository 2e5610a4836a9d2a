"""A person's results against each agent spec, from a folder of their games (``python evaluate.py --people DIR``).

Reads every ``pcr-replay`` record in ``DIR`` that names a human seat (``meta.human_seat``: the
browser table, ``python -m agents.serve --records DIR``, and the terminal player,
``python -m agents.play --replays DIR``) and groups them by the opponents' specs and the partner's.
Per group: games, finished games won, rounds, points per round (the person's team's round score
minus the other's) with Student's t 95% interval (:func:`~agents.evaluation.stats.t_interval`),
and the contracts the person's team made when it declared.

>>> summarise([])
[]
>>> print(people_table([]))
| opponents | partner | games | games won | rounds | points per round [95% CI] | contracts made |
|-----------|---------|-------|-----------|--------|---------------------------|----------------|
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.evaluation.report import _f, _markdown
from agents.evaluation.stats import t_interval
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
        diffs = g.pop("diffs")
        mean, low, high, _ = t_interval(np.asarray(diffs, float)) if diffs else (float("nan"),) * 4
        rows.append(dict(g, points_per_round=mean, ci95=[low, high]))
    return sorted(rows, key=lambda r: (r["opponents"], r["partner"]))


def people_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """The rows of :func:`summarise` as a Markdown table, laid out as the evaluation report's."""
    cols = ["opponents", "partner", "games", "games won", "rounds", "points per round [95% CI]", "contracts made"]
    out = [[r["opponents"], r["partner"], str(r["games"]), f"{r['won']} of {r['finished_games']}" if r["finished_games"] else "-",
            str(r["rounds"]), f"{_f(r['points_per_round'])} [{_f(r['ci95'][0])}, {_f(r['ci95'][1])}]",
            f"{r['made']} of {r['declared']}" if r["declared"] else "-"] for r in rows]
    return "\n".join(_markdown(cols, out))


__all__ = ["people_table", "summarise"]
