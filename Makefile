# Quickstart: `make train` (train the default config, then evaluate it) and `make test`.
# Each target creates .venv once (idempotent; re-run after pyproject.toml changes) with
# the CPU build of torch, then installs the project and the extras that target needs.
# The bare project (`pip install .`) is the environment alone; training and evaluation need
# the `train` extra, which `dev`, `all`, the integration extras and `notebook`/`lab` include.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
RUN_DIR ?= runs/default
# The main job: the card-aware network from nothing in stages (configs/card_hour.yaml), at most 75 minutes of
# training on 2 cores, then evaluate.py on seed 0, a suite its own evaluations (seed 4242) never see.
# The plain network's hour, the comparison row of docs/experiments/time-to-strength.md: make train CONFIG=configs/ppo_hour.yaml
CONFIG ?= configs/card_hour.yaml
DEALS ?= 2000

TS_VENV ?= .venv-tianshou
TS_PY := $(TS_VENV)/bin/python

.PHONY: train resume eval notebook test test-tianshou lint docs docs-serve docs-build bench clean plot play play-web

# Play against three heuristic players in the terminal (the environment alone would do: no torch needed).
play: $(VENV)/.installed-dev
	$(PY) -m agents.play --seat 0 --agents heuristic

# The same in a browser (python -m agents.serve, the `web` extra): open http://127.0.0.1:8765/; finished games go to
# runs/web/records (AGENTS=... picks the other seats, e.g. make play-web AGENTS=ppo:pretrained).
AGENTS ?= heuristic
play-web: $(VENV)/.installed-train,web
	$(PY) -m agents.serve --agents $(AGENTS)

# $(VENV)/.installed-EXTRAS: the venv with the project and those extras installed
# (torch==2.13.0 is repeated on the last install so pip cannot swap it for a CUDA build).
$(VENV)/.installed-%: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e ".[$*]" torch==2.13.0
	touch $@

# Tianshou 2.0 needs pandas<3, which conflicts with ray in .venv, so it has its own venv
# (same recipe; torch==2.13.0 is repeated on the last install so pip cannot swap it).
$(TS_VENV)/.installed: pyproject.toml
	test -x $(TS_PY) || $(PYTHON) -m venv $(TS_VENV)
	$(TS_PY) -m pip install --quiet --upgrade pip
	$(TS_PY) -m pip install --quiet torch==2.13.0
	$(TS_PY) -m pip install --quiet -e ".[dev,tianshou]" torch==2.13.0
	touch $@

EVALUATE = $(PY) evaluate.py --agents ppo:$(RUN_DIR)/checkpoints/best.pt heuristic random \
	--deals $(DEALS) --seed 0 --workers 2 --out $(RUN_DIR)/eval

# dev = train (torch, pydantic, tensorboard, ...) + the test tools.
train: $(VENV)/.installed-dev
	$(PY) train.py --config $(CONFIG) --run-dir $(RUN_DIR)
	$(EVALUATE)

# After an interruption (Ctrl-C, a kill, a reboot): continue RUN_DIR exactly, then evaluate it.
resume: $(VENV)/.installed-dev
	$(PY) train.py --resume $(RUN_DIR)
	$(EVALUATE)

# Evaluate RUN_DIR's best.pt against the heuristic and random (what make train ends with).
eval: $(VENV)/.installed-dev
	$(EVALUATE)

# The quickstart notebook in JupyterLab (the `lab` extra: the notebook extra plus jupyterlab).
notebook: $(VENV)/.installed-lab
	$(VENV)/bin/jupyter lab notebooks/quickstart.ipynb

# CI runs this (bash .ci/run): every extra, so the integration tests run rather than skip; the suite includes
# every `>>>` example of pcr_env and agents (pyproject: --doctest-modules), then the guard rails and the docs site.
test: $(VENV)/.installed-all
	$(PY) -m pytest -n 2 --durations=15 --ignore=tests/test_tianshou.py
	$(MAKE) test-tianshou
	$(MAKE) lint docs-build

# ruff, codespell, large files, YAML (.pre-commit-config.yaml; `pre-commit install` runs them on every commit).
lint: $(VENV)/.installed-all
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/pre-commit run --all-files --show-diff-on-failure

# The documentation site (docs/, mkdocs.yml): `make docs` serves it on http://127.0.0.1:8000, docs-build checks it.
docs: $(VENV)/.installed-all
	$(VENV)/bin/mkdocs serve -a 127.0.0.1:8000

docs-serve: docs

docs-build: $(VENV)/.installed-all
	$(VENV)/bin/mkdocs build --strict --site-dir site

# tests/test_tianshou.py in its own venv (make test runs it after the main suite).
test-tianshou: $(TS_VENV)/.installed
	$(TS_PY) -m pytest tests/test_tianshou.py --durations=5

# Training curves of a run as a picture: make plot RUN_DIR=runs/default -> RUN_DIR/curves.png
# (evaluation with 95% intervals, entropy, throughput, warm start; matplotlib is in the notebook extra).
plot: $(VENV)/.installed-notebook
	$(PY) -m agents.training.curves $(RUN_DIR) -o $(RUN_DIR)/curves.png

bench: $(VENV)/.installed-bench
	$(PY) benchmarks/speed/env_throughput.py
	$(PY) benchmarks/speed/vector_throughput.py
	$(PY) benchmarks/speed/eval_throughput.py
	$(PY) benchmarks/speed/train_throughput.py

clean:
	rm -rf $(VENV) $(TS_VENV) .pytest_cache
