# Quickstart: `make train` (train the default config, then evaluate it) and `make test`.
# Each target creates .venv once (idempotent; re-run after pyproject.toml changes) with
# the CPU build of torch, then installs the project and the extras that target needs.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
RUN_DIR ?= runs/default
DEALS ?= 2000

.PHONY: train test bench clean

# $(VENV)/.installed-EXTRAS: the venv with the project and those extras installed.
$(VENV)/.installed-%: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e ".[$*]"
	touch $@

train: $(VENV)/.installed-dev
	$(PY) train.py --config configs/ppo_selfplay.yaml --run-dir $(RUN_DIR)
	$(PY) evaluate.py --agents ppo:$(RUN_DIR)/checkpoints/best.pt heuristic random \
		--deals $(DEALS) --seed 0 --workers 2 --out $(RUN_DIR)/eval

# CI runs this (bash .ci/run): every extra, so the integration tests run rather than skip.
test: $(VENV)/.installed-all
	$(PY) -m pytest -n 2 --durations=15

bench: $(VENV)/.installed-dev
	$(PY) benchmarks/env_throughput.py
	$(PY) benchmarks/vector_throughput.py
	$(PY) benchmarks/eval_throughput.py
	$(PY) benchmarks/train_throughput.py

clean:
	rm -rf $(VENV) .pytest_cache
