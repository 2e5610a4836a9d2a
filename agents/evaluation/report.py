"""The results of a duplicate evaluation and their reports: the table, ``results.json``/``.csv``, ``ratings.csv``."""

from __future__ import annotations

import csv
import json
import math
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agents.evaluation.stats import Rating
from pcr_env.config import RulesConfig


@dataclass
class PairResult:
    """Every figure of one pairing (X = ``agent_a``, Y = ``agent_b``); see the module docstring."""

    agent_a: str
    agent_b: str
    deals: int
    mean_diff: float
    ci95: tuple[float, float]
    sd: float
    win_rate: float  # deals with a positive difference
    tie_rate: float
    loss_rate: float
    score_share: float  # wins + ties / 2
    score_share_ci95: tuple[float, float]
    game_win_rate: float | None  # episode="game": share of the 2*deals games X won
    throw_ins_per_deal: float
    truncated_tables: int
    a: dict[str, float] = field(default_factory=dict)
    b: dict[str, float] = field(default_factory=dict)
    diffs: list[float] = field(default_factory=list, repr=False)


@dataclass
class Timing:
    """Wall time an agent spent choosing, over every decision it was asked for (forced ones included)."""

    agent: str
    decisions: int
    seconds: float

    @property
    def ms_per_decision(self) -> float:
        return 1000.0 * self.seconds / self.decisions if self.decisions else float("nan")


@dataclass
class EvaluationResult:
    config: dict[str, Any]
    pairs: list[PairResult]
    ratings: list[Rating]
    seconds: float
    replays: list[dict[str, Any]] = field(default_factory=list, repr=False)  # see evaluate(record_deals=...)
    timing: list[Timing] = field(default_factory=list)  # per agent; like ``seconds``, not reproducible

    def pair(self, a: str, b: str) -> PairResult:
        for p in self.pairs:
            if (p.agent_a, p.agent_b) == (a, b):
                return p
        raise KeyError(f"no pair {a!r} vs {b!r}: pairs are {[(p.agent_a, p.agent_b) for p in self.pairs]}")

    def to_dict(self, with_diffs: bool = True) -> dict[str, Any]:
        pairs = []
        for p in self.pairs:
            d = asdict(p)
            if not with_diffs:
                d.pop("diffs")
            pairs.append(d)
        return {"config": self.config, "pairs": pairs, "ratings": [asdict(r) for r in self.ratings],
                "seconds": self.seconds,
                "timing": [{**asdict(t), "ms_per_decision": t.ms_per_decision} for t in self.timing]}

    def table(self) -> str:
        """The readable report: one line per pair, then the ratings."""
        return format_table(self)



# ---------------------------------------------------------------------------- output
def _f(x: float | None, digits: int = 2) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:.{digits}f}"


def format_table(result: EvaluationResult) -> str:
    cfg = result.config
    unit = "game" if cfg["episode"] == "game" else "deal"
    head = (f"Duplicate evaluation: {cfg['deals']} deals x 2 tables, seed {cfg['seed']}, episode {cfg['episode']}, "
            f"rules {_rules_text(cfg['rules'])}")
    lines = [head, ""]
    cols = ["A", "B", f"diff/{unit} (A-B)", "95% CI", "A wins", "ties", "A share [95% CI]"]
    if cfg["episode"] == "game":
        cols.append("A game wins")
    cols += ["A bid", "A made", "B bid", "B made", "A tricks", "B tricks", "A runs", "B runs"]
    rows = []
    for p in result.pairs:
        row = [p.agent_a, p.agent_b, _f(p.mean_diff), f"[{_f(p.ci95[0])}, {_f(p.ci95[1])}]", _pct(p.win_rate),
               _pct(p.tie_rate), f"{_pct(p.score_share)} [{_pct(p.score_share_ci95[0])}, {_pct(p.score_share_ci95[1])}]"]
        if cfg["episode"] == "game":
            row.append(_pct(p.game_win_rate))
        row += [_pct(p.a["bid_rate"]), _pct(p.a["make_rate"]), _pct(p.b["bid_rate"]), _pct(p.b["make_rate"]),
                _f(p.a["tricks_per_round"]), _f(p.b["tricks_per_round"]), _f(p.a["run_bonus_per_round"]),
                _f(p.b["run_bonus_per_round"])]
        rows.append(row)
    lines += _markdown(cols, rows)
    ms = {t.agent: _f(t.ms_per_decision, 3 if t.ms_per_decision < 1 else 1) for t in result.timing}
    if result.ratings:
        lines += ["", "Bradley-Terry ratings (Elo scale, fitted to all pairs' deal wins), and each agent's "
                  "wall time per decision (one process):", ""]
        lines += _markdown(["agent", "rating", "± s.e.", "ms/decision"],
                           [[r.agent, f"{r.elo:.0f}", f"{r.se:.0f}", ms.get(r.agent, "-")] for r in result.ratings])
    elif ms:
        lines += ["", "Wall time per decision (one process): " + ", ".join(f"{a} {v} ms" for a, v in ms.items())]
    lines += ["", f"bid = share of rounds the side declared; made = share of its contracts made; tricks and runs = "
              f"per round. Time {result.seconds:.1f} s, "
              + ("on a Ray cluster." if cfg.get("ray") else f"{cfg['workers']} worker(s).")]
    return "\n".join(lines)


def _pct(x: float | None) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{100 * x:.1f}%"


def _rules_text(rules: dict[str, Any]) -> str:
    default = RulesConfig().to_dict()
    changed = {k: v for k, v in rules.items() if default.get(k) != v}
    return "default" if not changed else ", ".join(f"{k}={v}" for k, v in changed.items())


def _markdown(cols: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(c), *(len(r[i]) for r in rows)) if rows else len(c) for i, c in enumerate(cols)]
    out = ["| " + " | ".join(c.ljust(w) for c, w in zip(cols, widths)) + " |",
           "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += ["| " + " | ".join(v.ljust(w) for v, w in zip(r, widths)) + " |" for r in rows]
    return out


CSV_FIELDS = ["agent_a", "agent_b", "deals", "mean_diff", "ci95_low", "ci95_high", "sd", "win_rate", "tie_rate",
              "loss_rate", "score_share", "score_share_ci95_low", "score_share_ci95_high", "game_win_rate",
              "throw_ins_per_deal", "truncated_tables"]
SIDE_FIELDS = ["bid_rate", "make_rate", "mean_contract", "tricks_per_round", "run_bonus_per_round", "score_per_round"]


def write_outputs(result: EvaluationResult, out_dir: str | os.PathLike) -> dict[str, Path]:
    """Write ``results.json`` (every figure and per-deal difference), ``results.csv`` (a row per
    pair), ``ratings.csv`` and ``table.md`` (the readable table) into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / "results.json", "csv": out / "results.csv", "ratings": out / "ratings.csv",
             "table": out / "table.md"}
    paths["json"].write_text(json.dumps(finite_json(result.to_dict()), indent=1) + "\n")
    with paths["csv"].open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(CSV_FIELDS + [f"a_{f}" for f in SIDE_FIELDS] + [f"b_{f}" for f in SIDE_FIELDS])
        for p in result.pairs:
            base = [p.agent_a, p.agent_b, p.deals, p.mean_diff, p.ci95[0], p.ci95[1], p.sd, p.win_rate, p.tie_rate,
                    p.loss_rate, p.score_share, p.score_share_ci95[0], p.score_share_ci95[1],
                    "" if p.game_win_rate is None else p.game_win_rate, p.throw_ins_per_deal, p.truncated_tables]
            writer.writerow(base + [p.a[f] for f in SIDE_FIELDS] + [p.b[f] for f in SIDE_FIELDS])
    with paths["ratings"].open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["agent", "elo", "se", "decisions", "ms_per_decision"])
        timing = {t.agent: t for t in result.timing}
        for r in result.ratings:
            t = timing.get(r.agent)
            writer.writerow([r.agent, r.elo, r.se, t.decisions if t else "", t.ms_per_decision if t else ""])
    paths["table"].write_text(result.table() + "\n")
    return paths


def finite_json(x: Any) -> Any:
    """``x`` with NaN and infinities as ``None`` (JSON has neither), through dicts, lists and tuples."""
    if isinstance(x, float):
        return None if math.isnan(x) or math.isinf(x) else x
    if isinstance(x, dict):
        return {k: finite_json(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [finite_json(v) for v in x]
    return x
