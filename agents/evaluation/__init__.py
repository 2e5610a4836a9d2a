"""Duplicate head-to-head evaluation (``evaluate.py`` is its command line; needs scipy and tqdm).

``duplicate`` (deals, tables, worker processes, :func:`evaluate`), ``stats`` (Student's t
interval, a recipe over seeds, Bradley–Terry ratings) and ``report`` (the table, JSON and CSV files).
"""

from agents.evaluation.duplicate import (
                                         CHUNK,
                                         Deal,
                                         EvaluationResult,
                                         PairResult,
                                         SideStats,
                                         Timing,
                                         agent_seed,
                                         evaluate,
                                         make_deal,
                                         play_round,
                                         play_table,
                                         run_chunk,
                                         summarise_pair,
)
from agents.evaluation.report import finite_json, format_table, write_outputs
from agents.evaluation.stats import Rating, SeedSummary, bradley_terry, over_seeds, t_interval

__all__ = [
    "CHUNK", "Deal", "EvaluationResult", "PairResult", "Rating", "SeedSummary", "SideStats", "Timing", "agent_seed",
    "bradley_terry", "evaluate", "finite_json", "format_table", "make_deal", "over_seeds", "play_round", "play_table",
    "run_chunk", "summarise_pair", "t_interval", "write_outputs",
]
