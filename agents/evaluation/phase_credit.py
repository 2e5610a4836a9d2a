"""Where one agent's lead over another lies: hand one group of phases at a time to the other agent.

For each group of phases, ``A`` with ``B`` deciding those phases (:class:`agents.search.phase_mix.PhaseMix`)
plays duplicate deals against ``A`` alone: ``A − mix`` is what ``A``'s own decisions at those phases are
worth over ``B``'s, the rest of the round played by ``A``; the row ``whole`` is ``A − B``, the whole lead.
The parts need not add up to the whole (a phase's worth depends on who plays the others). With
``against="b"`` each mix plays ``B`` instead: ``mix − B``, a candidate made of the better phases of each.
``benchmarks/studies/phase_credit.py`` is its command line; ``evaluate.py --exploit`` reports it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal, NamedTuple

from agents.evaluation.duplicate import evaluate
from agents.evaluation.report import EvaluationResult, write_outputs
from agents.registry import make_agent
from agents.search.phase_mix import PhaseMix
from pcr_env.config import RulesConfig

DEFAULT_GROUPS = ("pass", "bid,trump", "play")
"""The phase groups handed over by default: passes, the contract (bid and trump), card play."""


def group_phases(group: str) -> tuple[str, ...]:
    """The phases of a group written comma-separated (``"bid,trump"`` -> ``("bid", "trump")``)."""
    return tuple(p.strip() for p in group.split(",") if p.strip())


def mix_name(a: str, b: str, phases: Sequence[str]) -> str:
    """The name of ``a`` with ``b`` deciding ``phases``, as its tables record it: ``a[bid+trump=b]``."""
    return f"{a}[{'+'.join(phases)}={b}]"


class PhaseCredit(NamedTuple):
    """One row: the phases handed over (``whole``: all of them), the mean difference per deal and its 95% interval."""

    label: str
    mean: float
    low: float
    high: float


def phase_credit(a: str, b: str, groups: Sequence[str] = DEFAULT_GROUPS, *, deals: int, seed: int, workers: int = 1,
                 against: Literal["a", "b"] = "a", rules: RulesConfig | None = None, out: str | Path | None = None,
                 results: list[EvaluationResult] | None = None) -> list[PhaseCredit]:
    """The ``whole`` row, then one row per group (phases comma-separated within a group, e.g. ``"bid,trump"``).

    Every comparison plays the same ``deals`` duplicate deals of ``seed``; with ``out``, each one's tables go
    to ``out/<label>``; ``results`` (a list) collects each comparison's full result.
    """
    if against not in ("a", "b"):
        raise ValueError(f"against={against!r} is not allowed: allowed 'a' or 'b'")
    comparisons: list[tuple[str, object]] = [("whole", b)]
    for group in groups:
        phases = group_phases(group)
        mix = PhaseMix(make_agent(a, rules=rules), make_agent(b, rules=rules), phases, name=mix_name(a, b, phases))
        comparisons.append(("+".join(phases), mix))
    rows = []
    for label, agent in comparisons:
        pair = [a, agent] if against == "a" or label == "whole" else [agent, b]
        result = evaluate(pair, deals=deals, seed=seed, workers=workers, progress=False, rules=rules)
        if out is not None:
            write_outputs(result, Path(out) / label)
        if results is not None:
            results.append(result)
        first = result.pairs[0]
        rows.append(PhaseCredit(label, first.mean_diff, *first.ci95))
    return rows


def credit_table(rows: Sequence[PhaseCredit], a: str, b: str, against: str = "a") -> str:
    """The rows as a Markdown table, with what each difference is."""
    what = (f"{a} minus {a} with {b} deciding the phases named ('whole': {a} minus {b})" if against == "a" else
            f"{a} with {b} deciding the phases named, minus {b} ('whole': {a} minus {b})")
    lines = [f"| phases | {what} | 95% interval |", "|---|---|---|"]
    lines += [f"| {r.label} | {r.mean:+.2f} | [{r.low:+.2f}, {r.high:+.2f}] |" for r in rows]
    return "\n".join(lines)


__all__ = ["DEFAULT_GROUPS", "PhaseCredit", "credit_table", "phase_credit"]
