"""Training curves of a run as one picture: ``python -m agents.training.curves RUN_DIR [-o PNG]``.

Reads ``RUN_DIR/log.jsonl`` (the one JSON object per line that ``train.py`` appends) and
draws, against decisions (every decision of every game; a staged run's records count all its stages,
older logs count PPO decisions only):

* **evaluation**: every ``"eval"`` record's score difference per deal against each
  opponent (``results[spec]["mean"]``) with its 95% interval (``ci_low`` .. ``ci_high``)
  as a band; the final evaluation is marked;
* **entropy**: ``losses/entropy`` of every ``"iteration"`` record, and the per-phase
  ``losses/entropy_<phase>`` where logged;
* **throughput**: ``charts/decisions_per_second``;
* **warm start** (only if the run had one): behaviour-cloning loss and accuracy of the
  ``"warmstart"`` records, per warm-start iteration (they come before PPO decision 0).

The stretches of a league's ``exploiter`` stages (from the ``"stage"`` records) are shaded on the
panels against decisions: their iterations train the exploiter, not the main network, and no
evaluation runs inside them.

A resumed run appends to the same log; an iteration logged twice keeps its last record.
A last line without its newline (a run still writing) is ignored; any other line that is
not JSON is an error. The picture is written with matplotlib's Agg canvas (no display, no
pyplot state); matplotlib is in the ``notebook`` extra (``pip install -e '.[notebook]'``).

>>> log = parse_log(['{"type": "iteration", "iteration": 1, "decisions": 512, "losses/entropy": 1.5}'])
>>> log.iterations[0]["decisions"], log.evals, log.opponents
(512, [], [])
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.run_dir import RunDir
from pcr_env.engine import PHASE_NAMES

DEFAULT_PNG = "curves.png"
EXTRA_HINT = "pip install -e '.[notebook]'"


class CurveError(ValueError):
    """A log that cannot be plotted (missing, not JSON lines, nothing to draw); the message is one line."""


@dataclass
class RunLog:
    """The records of one ``log.jsonl`` by type, each list in training order."""

    iterations: list[dict[str, Any]] = field(default_factory=list)
    evals: list[dict[str, Any]] = field(default_factory=list)
    warmstart: list[dict[str, Any]] = field(default_factory=list)
    stages: list[dict[str, Any]] = field(default_factory=list)
    source: str = ""

    def spans(self, kind: str) -> list[tuple[float, float]]:
        """The (first, last) decisions of each stage of ``kind``: from its start to the next stage's start
        (or the last iteration logged)."""
        end = self.iterations[-1]["decisions"] if self.iterations else 0
        starts = [(float(s["decisions"]), s.get("kind")) for s in self.stages if "decisions" in s]
        return [(start, starts[k + 1][0] if k + 1 < len(starts) else float(end))
                for k, (start, of_kind) in enumerate(starts) if of_kind == kind]

    @property
    def opponents(self) -> list[str]:
        """Opponent specs evaluated against, in order of first appearance."""
        seen: dict[str, None] = {}
        for e in self.evals:
            for spec in e.get("results", {}):
                seen.setdefault(spec, None)
        return list(seen)

    @property
    def entropy_phases(self) -> list[str]:
        """Phases with a per-phase entropy (``losses/entropy_<phase>``), in the game's order where known."""
        order = list(PHASE_NAMES)
        found = {k[len("losses/entropy_"):] for it in self.iterations for k in it if k.startswith("losses/entropy_")}
        return [p for p in order if p in found] + sorted(found - set(order))


def _last_per_key(records: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    """Keep the last record for each ``key`` value (a resumed run logs some iterations again), sorted by it."""
    out: dict[Any, dict[str, Any]] = {}
    for r in records:
        out[r.get(key)] = r
    return [out[k] for k in sorted(out, key=lambda k: (k is None, k if k is not None else 0))]


def parse_log(lines: Iterable[str], source: str = "log") -> RunLog:
    """Parse the lines of a ``log.jsonl`` (see the module docstring for what is kept)."""
    lines = list(lines)
    log = RunLog(source=source)
    iterations, evals, warm, stages = [], [], [], []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as err:
            if number == len(lines) and not line.endswith("\n"):
                break  # a run still writing its last line
            raise CurveError(f"{source}: line {number} is not JSON ({err.msg}): {line.strip()[:60]!r}") from None
        if not isinstance(rec, dict):
            raise CurveError(f"{source}: line {number} is not a JSON object: {line.strip()[:60]!r}")
        kind = rec.get("type")
        if kind == "iteration" and "decisions" in rec:
            iterations.append(rec)
        elif kind == "eval" and isinstance(rec.get("results"), dict):
            evals.append(rec)
        elif kind == "warmstart":
            warm.append(rec)
        elif kind == "stage":
            stages.append(rec)
    log.iterations = _last_per_key(iterations, "iteration")
    log.evals = _last_per_key(evals, "decisions")  # a stage's end evaluates at an iteration number PPO may reach too
    log.warmstart = _last_per_key(warm, "iteration")
    log.stages = _last_per_key(stages, "stage")
    return log


def load_log(path: str | Path) -> RunLog:
    """The :class:`RunLog` of a run directory (its ``log.jsonl``) or of a log file."""
    path = Path(path)
    file = RunDir(path).log if path.is_dir() else path
    if not file.is_file():
        where = f"{path} has no log.jsonl" if path.is_dir() else f"{file} not found"
        raise CurveError(f"{where}: give a run directory written by train.py (or its log.jsonl)")
    try:
        with file.open(encoding="utf-8", newline="") as fh:
            lines = fh.readlines()
    except (OSError, UnicodeDecodeError) as err:
        raise CurveError(f"{file}: cannot be read ({err})") from None
    log = parse_log(lines, source=str(file))
    if not log.iterations and not log.warmstart:
        raise CurveError(f"{file}: no iteration or warm-start records to plot (is it a train.py log?)")
    targets = _config_targets(RunDir(file.parent).config)
    if targets:  # warm-start records written before they carried their kind take it from the run's config
        for rec in log.warmstart:
            rec.setdefault("targets", targets)
    return log


def _config_targets(config: Path) -> str | None:
    """``warmstart.targets`` of the resolved config train.py writes beside its log, if it is there and says."""
    if not config.is_file():
        return None
    import yaml

    try:
        cfg = yaml.safe_load(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None  # the curves do not depend on it: an unreadable config only loses the label
    warmstart = cfg.get("warmstart") if isinstance(cfg, dict) else None
    targets = warmstart.get("targets") if isinstance(warmstart, dict) else None
    return targets if isinstance(targets, str) else None


def _matplotlib():
    try:
        import matplotlib  # noqa: F401
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise CurveError(f"plotting curves needs matplotlib, which is in the 'notebook' extra: {EXTRA_HINT}") from None
    return Figure, FigureCanvasAgg


def _num(x: Any) -> float:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) else float("nan")


def _series(records: Sequence[dict[str, Any]], key: str, x: str = "decisions") -> tuple[list[float], list[float]]:
    pts = [(_num(r.get(x)), _num(r.get(key))) for r in records if key in r]
    pts = [(a, b) for a, b in pts if not (math.isnan(a) or math.isnan(b))]
    return [a for a, _ in pts], [b for _, b in pts]


def _shade_exploiter_stages(ax: Any, log: RunLog) -> None:
    """Grey bands over the exploiter stages (labelled once, for the legend)."""
    for k, (start, end) in enumerate(log.spans("exploiter")):
        ax.axvspan(start, end, color="#adb5bd", alpha=0.25, lw=0, label="exploiter stage" if k == 0 else None)


def _decisions_axis(ax) -> None:
    from matplotlib.ticker import FuncFormatter

    def fmt(v: float, _pos: int) -> str:
        v = abs(v)
        if v >= 1e6:
            return f"{v / 1e6:g}M"
        if v >= 1e3:
            return f"{v / 1e3:g}k"
        return f"{v:g}"

    ax.xaxis.set_major_formatter(FuncFormatter(fmt))
    ax.set_xlabel("PPO decisions")


def warmstart_labels(records: list[dict]) -> tuple[str, str]:
    """(what the warm start was, what its accuracy measured) from its log records.

    A ``targets: values`` warm start (``train.WarmStartConfig.targets``) learns soft per-action targets and its
    accuracy is agreement with each target's mode; otherwise it cloned the teacher's actions. Each record
    names its kind (``targets``); :func:`load_log` fills it from the run's ``config.yaml`` for logs written
    before records did, and a record with neither is taken as hard labels.

    >>> warmstart_labels([{"type": "warmstart", "targets": "values"}])
    ('distillation on soft targets', "accuracy (target's mode)")
    >>> warmstart_labels([{"type": "warmstart"}])
    ('behaviour cloning', "accuracy (teacher's action)")
    """
    if records and records[-1].get("targets") == "values":
        return "distillation on soft targets", "accuracy (target's mode)"
    return "behaviour cloning", "accuracy (teacher's action)"


_COLORS = ["#2f6fb3", "#c77a12", "#2b8a3e", "#7b2cbf", "#c8102e", "#495057"]


def _eval_panel(ax: Any, log: RunLog) -> None:
    """Evaluation: the mean score difference with its 95% interval per opponent, final evaluations starred."""
    ax.axhline(0, color="#868e96", lw=0.8)
    _shade_exploiter_stages(ax, log)
    for k, spec in enumerate(log.opponents):
        rows = [(e["decisions"], e["results"][spec], bool(e.get("final"))) for e in log.evals
                if spec in e["results"] and isinstance(e["results"][spec], dict)]
        xs = [_num(d) for d, _, _ in rows]
        mean = [_num(r.get("mean")) for _, r, _ in rows]
        lo = [_num(r.get("ci_low")) for _, r, _ in rows]
        hi = [_num(r.get("ci_high")) for _, r, _ in rows]
        c = _COLORS[k % len(_COLORS)]
        deals = {int(r["deals"]) for _, r, _ in rows if isinstance(r.get("deals"), (int, float))}
        label = f"vs {spec}" + (f" ({'/'.join(str(d) for d in sorted(deals))} deals)" if deals else "")
        ax.fill_between(xs, lo, hi, color=c, alpha=0.18, lw=0, label=None)
        ax.plot(xs, mean, "-o", color=c, ms=3.5, lw=1.6, label=label)
        finals = [(x, m) for x, m, (_, _, f) in zip(xs, mean, rows) if f]
        if finals:
            ax.plot(*zip(*finals), "*", color=c, ms=12, mec="black", mew=0.6)
    ax.set_title("Duplicate evaluation: score difference per deal (band: 95% interval; \u2605 final)", fontsize=10.5)
    ax.set_ylabel("score difference per deal")
    if log.opponents:
        ax.legend(fontsize=9, loc="best")
    else:
        ax.text(0.5, 0.5, "no evaluation records in this log", ha="center", va="center", transform=ax.transAxes,
                color="#868e96", fontsize=11)
    _decisions_axis(ax)


def _entropy_panel(ax: Any, log: RunLog) -> None:
    """Policy entropy, overall and per phase."""
    _shade_exploiter_stages(ax, log)
    xs, ys = _series(log.iterations, "losses/entropy")
    if xs:
        ax.plot(xs, ys, color="black", lw=2.0, label="all decisions")
    for k, phase in enumerate(log.entropy_phases):
        px, py = _series(log.iterations, f"losses/entropy_{phase}")
        ax.plot(px, py, "-o" if len(px) <= 30 else "-", ms=2.5, lw=1.1, color=_COLORS[k % len(_COLORS)], alpha=0.9, label=phase)
    ax.set_title("Policy entropy over the legal actions (nats)", fontsize=10.5)
    ax.set_ylabel("entropy")
    if xs or log.entropy_phases:
        ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)  # beside, not on, the curves
    else:
        ax.text(0.5, 0.5, "no entropy in this log", ha="center", va="center", transform=ax.transAxes, color="#868e96")
    _decisions_axis(ax)


def _throughput_panel(ax: Any, log: RunLog) -> None:
    """Decisions per second per iteration, and their median."""
    _shade_exploiter_stages(ax, log)
    xs, ys = _series(log.iterations, "charts/decisions_per_second")
    if xs:
        ax.plot(xs, ys, color=_COLORS[2], lw=1.0, alpha=0.8, label="per iteration")
        ordered = sorted(ys)
        median = ordered[len(ordered) // 2] if len(ordered) % 2 else (ordered[len(ordered) // 2 - 1] + ordered[len(ordered) // 2]) / 2
        ax.axhline(median, color=_COLORS[2], ls="--", lw=1.0, label=f"median {median:,.0f}/s")
        ax.legend(fontsize=9, loc="best")
        ax.set_ylim(bottom=0)
    else:
        ax.text(0.5, 0.5, "no throughput in this log", ha="center", va="center", transform=ax.transAxes, color="#868e96")
    ax.set_title("Throughput: decisions per second (collection + update)", fontsize=10.5)
    ax.set_ylabel("decisions / s")
    _decisions_axis(ax)


def _warmstart_panel(ax: Any, log: RunLog) -> None:
    """The warm start's loss and accuracy (behaviour cloning or distillation), if the run had one."""
    if log.warmstart:
        xs, loss = _series(log.warmstart, "loss", x="iteration")
        ax.plot(xs, loss, "-o", ms=3, color=_COLORS[3], label="loss (cross-entropy)")
        ax.set_ylabel("loss", color=_COLORS[3])
        twin = ax.twinx()
        ax2x, acc = _series(log.warmstart, "accuracy", x="iteration")
        twin.plot(ax2x, acc, "-s", ms=3, color=_COLORS[1], label="accuracy")
        kind, accuracy = warmstart_labels(log.warmstart)
        twin.set_ylabel(accuracy, color=_COLORS[1])
        twin.set_ylim(0, 1)
        of = log.warmstart[-1].get("of")
        ax.set_title(f"Warm start: {kind} ({len(log.warmstart)}" + (f" of {of}" if of else "")
                     + " iterations, before PPO)", fontsize=10.5)
        ax.set_xlabel("warm-start iteration")
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        lines = ax.get_lines() + twin.get_lines()
        ax.legend(lines, [ln.get_label() for ln in lines], fontsize=9, loc="center right")
    else:
        ax.set_axis_off()
        ax.text(0.5, 0.5, "no warm start in this run", ha="center", va="center", transform=ax.transAxes,
                color="#868e96", fontsize=11)



def plot_curves(run: str | Path | RunLog, out: str | Path | None = None, title: str | None = None, dpi: int = 110) -> Path:
    """Draw the curves of ``run`` (a run directory, a log file or a :class:`RunLog`) to the PNG ``out``
    (default ``RUN_DIR/curves.png``). Returns the path written."""
    log = run if isinstance(run, RunLog) else load_log(run)
    if out is None:
        if isinstance(run, RunLog):
            raise CurveError("give out= when plotting a RunLog")
        base = Path(run)
        out = (base if base.is_dir() else base.parent) / DEFAULT_PNG
    out = Path(out)
    Figure, FigureCanvasAgg = _matplotlib()

    fig = Figure(figsize=(13, 8.4 if log.warmstart else 8.0), dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)
    grid = fig.subplots(2, 2)
    for draw, ax in zip((_eval_panel, _entropy_panel, _throughput_panel, _warmstart_panel), grid.flat):
        draw(ax, log)
    for ax in grid.flat:
        ax.grid(True, alpha=0.3)
    last = log.iterations[-1] if log.iterations else {}
    heading = title or f"{Path(log.source).parent.name or log.source}"
    fig.suptitle(f"{heading}: {len(log.iterations)} PPO iterations, {int(last.get('decisions', 0)):,} decisions, "
                 f"{len(log.evals)} evaluations", fontsize=12.5)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, format="png")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agents.training.curves",
                                     description="Draw a training run's curves (evaluation with 95% intervals, entropy, "
                                                 "throughput, warm start) from RUN_DIR/log.jsonl into a PNG.")
    parser.add_argument("run", metavar="RUN_DIR", help="a run directory written by train.py (or its log.jsonl)")
    parser.add_argument("-o", "--out", metavar="PNG", default=None, help=f"output file (default RUN_DIR/{DEFAULT_PNG})")
    parser.add_argument("--title", default=None, help="title of the figure (default: the run directory's name)")
    parser.add_argument("--dpi", type=int, default=110, help="resolution (default 110)")
    args = parser.parse_args(argv)
    try:
        path = plot_curves(args.run, args.out, title=args.title, dpi=args.dpi)
    except CurveError as err:
        print(f"python -m agents.training.curves: error: {err}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0


__all__ = ["CurveError", "RunLog", "load_log", "main", "parse_log", "plot_curves"]

if __name__ == "__main__":
    sys.exit(main())
