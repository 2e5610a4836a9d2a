"""notebooks/quickstart.ipynb runs top to bottom (nbclient, a fresh IPython kernel, from the repository root).

Every cell must run without error within the time budget: the notebook makes an env, plays and
renders a deal, decodes an observation, evaluates the baselines, loads the shipped agent, runs the
smoke training config and plots its curves. Needs the ``notebook`` extra (CI installs it).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "quickstart.ipynb"
CELL_TIMEOUT_S = 600  # the smoke training is the longest cell (about a minute on one core)


@pytest.mark.slow
def test_quickstart_notebook_executes(monkeypatch):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    # The kernel is a subprocess: make the checkout importable there even without `pip install -e .`.
    env_path = os.environ.get("PYTHONPATH", "")
    monkeypatch.setenv("PYTHONPATH", str(ROOT) + (os.pathsep + env_path if env_path else ""))
    try:
        client = NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name="python3",
                                resources={"metadata": {"path": str(ROOT)}})
        client.execute()
    finally:
        shutil.rmtree(ROOT / "runs" / "notebook_smoke", ignore_errors=True)  # the notebook's training run
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    for fragment in ("round result:", "observation slices:", "Your hand", "Bradley-Terry", "shipped checkpoint:",
                     "iterations,", "the smoke checkpoint is an agent too", "round score margin"):
        assert fragment in text, fragment
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) == 1  # the training curves
