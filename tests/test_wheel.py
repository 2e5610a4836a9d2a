"""The project installs as users install it: ``pip install .`` builds a wheel (not an editable install), and that
wheel holds every module and data file of ``pcr_env`` and ``agents`` (pyproject's ``[tool.setuptools.packages.find]``).

The wheel is built from a copy of the tracked sources (so no ``build/`` or ``*.egg-info`` lands in the checkout),
installed without its dependencies into a fresh virtual environment whose only other path is this environment's
site-packages (added by a ``.pth`` line, which does not run the editable install's finder), and used from a
directory outside the checkout: a module missing from the wheel fails to import there.
"""

from __future__ import annotations

import shutil
import site
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from agents.ppo.checkpoint import PRETRAINED_PATH

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("pcr_env", "agents")

USE_THE_WHEEL = """
import importlib, pkgutil, sys
import gymnasium
import agents, pcr_env
from agents import make_agent

site_dir = sys.argv[1]
for pkg in (pcr_env, agents):
    assert pkg.__file__.startswith(site_dir), (pkg.__name__, pkg.__file__)  # the wheel's copy, not the checkout's
    for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
        if info.ispkg:
            importlib.import_module(info.name)  # every subpackage imports from the wheel
import agents.ppo
agent = make_agent("ppo:pretrained", seed=0)  # the shipped checkpoint is package data
make_agent("ppo:pretrained/ppo_hour.pt", seed=0)  # a reference ladder's rung, by its shipped name, wherever installed
from agents.evaluation import ladder
assert ladder.load_published(ladder.LADDERS["quick"])["ratings"]["random"]["elo"] == 0.0  # the published ratings too
env = gymnasium.make("PassCutRun-v0")
obs, info = env.reset(seed=0)
action = int(agent.act_batch(obs[None], info["action_mask"][None])[0])
assert info["action_mask"][action]
env.step(action)
print("ok", type(agent).__name__)
"""


def tracked_sources(dest: Path) -> Path:
    """A copy of what a wheel is built from: pyproject, README and the two packages' tracked files."""
    files = subprocess.run(["git", "ls-files", "pyproject.toml", "README.md", *PACKAGES], cwd=ROOT, check=True,
                           capture_output=True, text=True).stdout.split()
    for name in files:
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, dest / name)
    return dest


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> tuple[Path, str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("the wheel is built from the tracked files: needs a git checkout")
    src = tracked_sources(tmp_path_factory.mktemp("src"))
    out = tmp_path_factory.mktemp("wheel")
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--verbose", "-w", str(out), str(src)],
                           capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-4000:]
    (path,) = out.glob("pcr-*.whl")
    return path, build.stdout + build.stderr


def test_the_wheel_holds_every_module_and_data_file(wheel):
    path, _ = wheel
    names = set(zipfile.ZipFile(path).namelist())
    tracked = subprocess.run(["git", "ls-files", *PACKAGES], cwd=ROOT, check=True, capture_output=True,
                             text=True).stdout.split()
    missing = [name for name in tracked if name not in names]
    assert not missing, f"not in the wheel: {missing}"
    assert f"agents/pretrained/{PRETRAINED_PATH.name}" in names and "pcr_env/replay_viewer.html" in names
    assert {"pcr_env/table_look.css", "pcr_env/table_look.js", "agents/web/page.html"} <= set(names)
    assert not any(name.startswith(("tests/", "benchmarks/", "configs/")) for name in names)


def test_the_build_prints_no_setuptools_warnings(wheel):
    _, output = wheel
    for warning in ("SetuptoolsDeprecationWarning", "Package would be ignored"):
        assert warning not in output, warning


def test_the_installed_wheel_imports_makes_the_shipped_agent_and_the_gym_env(wheel, tmp_path):
    path, _ = wheel
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps", str(path)],
                   check=True, timeout=300)
    fresh_site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                     check=True, capture_output=True, text=True).stdout.strip())
    # The dependencies (numpy, torch, gymnasium, ...) from this environment, after the wheel's own site-packages.
    ours = {sysconfig.get_paths()["purelib"], *site.getsitepackages()}
    (fresh_site / "dependencies.pth").write_text("\n".join(sorted(ours)) + "\n")
    proc = subprocess.run([str(python), "-c", USE_THE_WHEEL, str(fresh_site)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, env={"PATH": str(venv / "bin"), "OMP_NUM_THREADS": "1"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("ok PPOAgent")
