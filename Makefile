# Quickstart: `make train` (train the default config, then evaluate) and `make test`.
# Each target creates .venv once (idempotent) with the CPU build of torch.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
EXTRAS ?= dev
RUN_DIR ?= runs/default

.PHONY: venv train evaluate test bench clean

$(VENV)/.installed-$(EXTRAS): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e ".[$(EXTRAS)]"
	touch $@

venv: $(VENV)/.installed-$(EXTRAS)

train: venv
	$(PY) train.py --config configs/ppo_selfplay.yaml --run-dir $(RUN_DIR)
	$(PY) evaluate.py --agents ppo:$(RUN_DIR)/checkpoints/best.pt heuristic random --deals 2000 --seed 0 --workers 2 --out $(RUN_DIR)/eval

test: venv
	$(PY) -m pytest -n 2 --durations=15

bench: venv
	$(PY) benchmarks/env_throughput.py

clean:
	rm -rf $(VENV) .pytest_cache
