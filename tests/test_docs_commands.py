"""The commands written in README.md and docs/ are real commands.

Convention of the pages (docs/index.md, "Conventions of these pages"):

* ```` ```bash ```` blocks hold short commands that run in seconds from the repository root: each
  command is run here (a leading ``python`` becomes this interpreter) and must exit 0.
* ```` ```python ```` blocks are complete scripts: each one is run and must exit 0.
* ```` ```shell ```` blocks hold long commands (training, evaluations, ``make train``): they are not
  run. A ``python train.py --config ...`` command runs with ``--dry-run`` (its config and overrides
  validate, its committed files load, nothing is written; a ``warmstart.init_from`` file the page makes
  first is left out). A ``python train.py`` or ``python evaluate.py`` command may use only the flags its ``--help``
  lists, ``--set`` only keys that ``train.py --list-keys`` lists, ``--agents`` only known spec kinds,
  committed checkpoint paths and factories ``MODULE:FACTORY[:OPTIONS]`` whose dotted module is installed or
  is a file here that defines ``FACTORY`` (an ``evaluate.py --exploit`` command runs with ``--dry-run``: its
  target, budget and ``--set`` keys validate); any ``--config`` must be an existing file, any ``python
  SCRIPT.py`` must exist, and ``make TARGET ...`` must pass ``make -n TARGET ...``.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```([A-Za-z]*)[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
OPERATORS = {"&&", "||", ";", "|", "&", ";;", "(", ")"}
SHELL_WORDS = {"do", "then", "else", "done", "fi"}
TIMEOUT = 120


def _blocks(lang: str) -> list[tuple[str, str]]:
    """(page:line, block text) of every fenced block of ``lang`` in the pages."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            if match.group(1) == lang:
                line = text.count("\n", 0, match.start()) + 1
                found.append((f"{page.relative_to(ROOT)}:{line}", match.group(2)))
    return found


def _commands(block: str) -> list[str]:
    """The block's commands: continuation lines (a trailing backslash) joined, blank lines dropped."""
    commands, current = [], ""
    for line in block.splitlines():
        if line.rstrip().endswith("\\"):
            current += line.rstrip()[:-1] + " "
            continue
        current += line
        if current.strip():
            commands.append(current.strip())
        current = ""
    if current.strip():
        commands.append(current.strip())
    return commands


def _segments(command: str) -> list[list[str]]:
    """Split a command into simple commands at shell operators; comments and shell keywords dropped."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    segments, current = [], []
    for token in lexer:
        if token in OPERATORS:
            segments.append(current)
            current = []
        elif not current and token in SHELL_WORDS:
            continue
        else:
            current.append(token)
    segments.append(current)
    return [s for s in segments if s]


def _cases(lang: str) -> list:
    return [pytest.param(cmd, id=f"{where}:{cmd[:60]}") for where, block in _blocks(lang) for cmd in _commands(block)]


def _run(argv: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT)


@functools.lru_cache(maxsize=None)
def _help_flags(script: str) -> frozenset[str]:
    result = _run([sys.executable, script, "--help"])
    assert result.returncode == 0, f"{script} --help failed:\n{result.stderr[-2000:]}"
    return frozenset(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", result.stdout))


@functools.lru_cache(maxsize=None)
def _config_keys() -> frozenset[str]:
    result = _run([sys.executable, "train.py", "--list-keys"])
    assert result.returncode == 0, f"train.py --list-keys failed:\n{result.stderr[-2000:]}"
    return frozenset(line.split()[0] for line in result.stdout.splitlines() if line.strip())


@functools.lru_cache(maxsize=None)
def _spec_kinds() -> frozenset[str]:
    result = _run([sys.executable, "evaluate.py", "--help"])
    match = re.search(r"agent specs: (.*)", result.stdout)
    assert match, "evaluate.py --help no longer lists the agent specs"
    return frozenset(spec.split(":")[0].strip() for spec in match.group(1).split(","))


def _option_values(argv: list[str], flag: str) -> list[str]:
    """Every value given to ``flag`` (``--flag V`` or ``--flag=V``; ``--agents`` takes several)."""
    values = []
    for i, token in enumerate(argv):
        if token.startswith(flag + "="):
            values.append(token.split("=", 1)[1])
        elif token == flag:
            for value in argv[i + 1:]:
                if value.startswith("--"):
                    break
                values.append(value)
                if flag != "--agents":
                    break
    return values


def _check_spec(spec: str) -> None:
    kind, _, arg = spec.partition(":")
    if "." in kind:  # an importable factory MODULE:FACTORY[:OPTIONS] (agents/registry.py): not imported here
        _check_module(kind)
        factory = arg.partition(":")[0]
        path = ROOT.joinpath(*kind.split(".")).with_suffix(".py")
        if path.is_file():
            assert re.search(rf"^(def|class) {re.escape(factory)}\b", path.read_text(encoding="utf-8"), re.M), \
                f"{spec}: {path.relative_to(ROOT)} defines no {factory!r}"
        return
    assert kind in _spec_kinds(), f"unknown agent spec kind {kind!r} in {spec!r}"
    if kind in ("search", "mix"):
        _check_spec(arg)
    elif kind == "ppo" and arg != "pretrained" and arg.split("/")[0] in ("agents", "benchmarks", "configs"):
        assert (ROOT / arg).is_file(), f"{spec}: {arg} is not a committed file"


def _uncommitted_file(path: str) -> bool:
    """A checkpoint path that is not one the repository ships (a run's output, a file the page makes)."""
    return path not in ("", "pretrained") and path.split("/")[0] not in ("agents", "benchmarks", "configs")


def _uncommitted_init_from(setting: str) -> bool:
    """A ``warmstart.init_from=FILE`` setting whose file is not one the repository ships."""
    key, _, path = setting.partition("=")
    return key == "warmstart.init_from" and _uncommitted_file(path)


def _uncommitted_ppo_file(spec: str) -> bool:
    """A ``ppo:PATH`` spec whose file is not one the repository ships (a run's output)."""
    kind, _, path = spec.partition(":")
    return kind == "ppo" and _uncommitted_file(path)


def _check_module(name: str) -> None:
    top = name.split(".")[0]
    if (ROOT / top).is_dir():
        path = ROOT.joinpath(*name.split("."))
        assert path.with_suffix(".py").is_file() or (path / "__init__.py").is_file(), f"no module {name}"
    else:
        assert importlib.util.find_spec(top) is not None, f"module {top} is not installed"


def _check_python(argv: list[str]) -> None:
    if argv[1] == "-c":
        compile(argv[2], "<docs -c>", "exec")
        return
    if argv[1] == "-m":
        _check_module(argv[2])
        return
    script = argv[1]
    assert (ROOT / script).is_file(), f"no script {script}"
    if script not in ("train.py", "evaluate.py"):
        return
    flags = _help_flags(script)
    for token in argv[2:]:
        if token.startswith("--"):
            assert token.split("=", 1)[0] in flags, f"{script} has no flag {token.split('=', 1)[0]}"
    if script == "train.py":
        for setting in _option_values(argv, "--set"):
            key = re.sub(r"^stages(?:\.\d+|\[\d+\])\.", "stages[N].", setting.split("=", 1)[0])
            in_section = re.sub(r"^stages\[N\]\.(ppo|warmstart)\.", r"\1.", key)  # a stage's own section key
            assert key in _config_keys() or in_section in _config_keys(), f"train.py has no config key {key!r}"
        if "--config" in argv and not any("$" in t for t in argv):  # the config validates (a resume needs its run)
            # A later --run-dir wins: the check never meets a run of this checkout's own runs/.
            # The dry run loads warmstart.init_from; a file the page makes first (git show ... > x.pt, a run's
            # output) is not here, so such a setting is left out of the check, as uncommitted --agents paths are.
            dry = [t for i, t in enumerate(argv[1:], 1) if not _uncommitted_init_from(t)
                   and not (t == "--set" and i + 1 < len(argv) and _uncommitted_init_from(argv[i + 1]))]
            result = _run([sys.executable, *dry, "--dry-run", "--run-dir", "/nonexistent/pcr-docs-check"])
            assert result.returncode == 0, f"{' '.join(argv)} --dry-run failed:\n{result.stderr[-2000:]}"
    else:
        for spec in _option_values(argv, "--agents") + _option_values(argv, "--exploit"):
            _check_spec(spec)
        if "--exploit" in argv:  # the target, the budget and every --set key validate; nothing is written
            # A target the page makes first (a run's output under runs/) is not in a clean clone: the dry run
            # then stands today's file in for it, so the budget and the --set keys are still checked.
            dry = ["ppo:pretrained" if argv[i - 1] == "--exploit" and _uncommitted_ppo_file(t) else t
                   for i, t in enumerate(argv[1:], 1)]
            result = _run([sys.executable, *dry, "--dry-run", "--run-dir", "/nonexistent/pcr-docs-check"])
            assert result.returncode == 0, f"{' '.join(argv)} --dry-run failed:\n{result.stderr[-2000:]}"


@pytest.mark.parametrize("command", _cases("bash"))
def test_bash_command_runs(command: str) -> None:
    segments = _segments(command)
    assert len(segments) == 1, f"bash blocks hold simple commands only (no pipes or &&): {command}"
    argv = segments[0]
    if argv[0] == "python":
        argv = [sys.executable, *argv[1:]]
    result = _run(argv)
    assert result.returncode == 0, f"{command}\nexit {result.returncode}\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"


@pytest.mark.parametrize("block", [pytest.param(block, id=where) for where, block in _blocks("python")])
def test_python_block_runs(block: str) -> None:
    result = _run([sys.executable, "-c", block])
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stderr[-3000:]}"


@pytest.mark.parametrize("command", _cases("shell"))
def test_shell_command_is_valid(command: str) -> None:
    for argv in _segments(command):
        for config in _option_values(argv, "--config"):
            assert (ROOT / config).is_file(), f"--config {config}: no such file"
        if argv[0] in ("python", "python3") and len(argv) > 1:
            _check_python(argv)
        elif argv[0] == "make":
            assert shutil.which("make"), "make is not installed"
            result = subprocess.run(["make", "-n", *argv[1:]], cwd=ROOT, capture_output=True, text=True, timeout=60)
            assert result.returncode == 0, f"make -n {' '.join(argv[1:])} failed:\n{result.stderr[-2000:]}"


def test_pages_have_commands() -> None:
    """The collection itself works: the README's quickstart is found, and the docs have runnable blocks."""
    shell = [cmd for _, block in _blocks("shell") for cmd in _commands(block)]
    assert any(cmd.startswith("make train") for cmd in shell)
    assert any(cmd.startswith("make test") for cmd in shell)
    assert _blocks("bash") and _blocks("python")
