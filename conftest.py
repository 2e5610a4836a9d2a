"""Collection rules for the packages' doctests (``--doctest-modules``); tests/conftest.py holds the tests' helpers.

``pcr_env/openspiel.py`` needs the optional ``openspiel`` extra (open-spiel, Python >= 3.11): without it its
doctest is not collected (tests/test_openspiel*.py skip themselves, and fail in CI, which installs it)."""

import importlib.util

collect_ignore = [] if importlib.util.find_spec("pyspiel") else ["pcr_env/openspiel.py"]
