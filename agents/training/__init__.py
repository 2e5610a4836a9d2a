"""The trainer's parts (``train.py`` is the loop; nothing here is an agent; needs torch).

``config`` (the config's models, resolved once into a run of stages), ``config_io`` (YAML files,
``base:`` and ``--set``), ``rollout`` (per-seat storage and GAE),
``opponents`` (the snapshot pool and who sits at the opponents' seats), ``warmstart``
(behaviour cloning and expert iteration from a teacher), ``run_state`` (what a resume
restores), ``log`` (``log.jsonl`` and TensorBoard), ``workers`` (spawned or torchrun
processes) and ``curves`` (``python -m agents.training.curves RUN_DIR``).
"""
