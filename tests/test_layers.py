"""The layers: pcr_env works without agents and torch, and nothing imports in a circle.

pcr_env (the game and its environments) -> numpy, numba, gymnasium, pettingzoo, pillow;
agents -> pcr_env (torch only in agents.ppo and agents.training); train.py and evaluate.py -> agents, pcr_env.
The first test runs pcr_env in an interpreter where ``import agents`` and ``import torch``
fail; the others read every import statement (module level and inside functions) with
``ast`` and check the graph.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("pcr_env", "agents")
SCRIPTS = ("train", "evaluate")
OWN = set(PACKAGES) | set(SCRIPTS)


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)


def test_pcr_env_runs_without_agents_and_torch():
    proc = _run("""
        import sys
        sys.modules["agents"] = None  # any `import agents...` now raises ImportError
        sys.modules["torch"] = None
        import importlib, pathlib
        import numpy as np
        import importlib.util
        optional = {"openspiel": "pyspiel"}  # module -> its optional dependency (an extra), skipped if absent
        for path in sorted(pathlib.Path("pcr_env").glob("*.py")):
            if path.stem in optional and importlib.util.find_spec(optional[path.stem]) is None:
                continue
            importlib.import_module("pcr_env" if path.stem == "__init__" else f"pcr_env.{path.stem}")

        from pcr_env.gym_env import PassCutRunEnv
        from pcr_env.pass_cut_run_v0 import raw_env
        from pcr_env.vector import VectorEnv

        class FirstLegal:  # the whole seat protocol pcr_env needs: act(obs) and reset(seed)
            def reset(self, seed=None):
                self.rng = np.random.default_rng(seed)
            def act(self, obs):
                return int(self.rng.choice(np.flatnonzero(obs["action_mask"])))

        player = FirstLegal()
        player.reset(0)
        env = raw_env(episode="round")
        env.reset(seed=0)
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            env.step(None if term or trunc else player.act(obs))

        venv = VectorEnv(4, seed=0)
        obs, masks, seats = venv.reset()
        rng = np.random.default_rng(0)
        for _ in range(200):
            obs, masks, seats, rewards, dones, infos = venv.step((rng.random(masks.shape) * masks).argmax(axis=1))

        gym = PassCutRunEnv(0, FirstLegal(), episode="round", render_mode="ansi")
        obs, info = gym.reset(seed=1)
        done = False
        while not done:
            obs, reward, term, trunc, info = gym.step(player.act({"observation": obs, "action_mask": info["action_mask"]}))
            done = term or trunc
        assert "round_result" in info and "Your hand" in gym.render()
        made = [k for k, m in sys.modules.items() if m is not None and k.split(".")[0] in ("agents", "torch")]
        assert not made, made
        print("ok")
    """)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr


def test_the_engine_imports_without_gymnasium_or_pettingzoo_and_registration_still_happens():
    proc = _run("""
        import sys
        import pcr_env.engine, pcr_env.observation, pcr_env.render
        heavy = sorted(m for m in ("gymnasium", "pettingzoo", "torch", "agents") if m in sys.modules)
        assert heavy == [], heavy
        import gymnasium  # registered the moment Gymnasium is imported, by entry-point string
        assert gymnasium.registry["PassCutRun-v0"].entry_point == "agents.registry:make_gym_env"
        assert "agents" not in sys.modules and "pcr_env.gym_env" not in sys.modules
        import pettingzoo
        if hasattr(pettingzoo, "make"):
            assert type(pettingzoo.make("aec", "pcr/pass_cut_run-v0").unwrapped).__name__ == "raw_env"
        env = gymnasium.make("PassCutRun-v0", others=["heuristic"] * 3, episode="round")
        assert type(env.unwrapped.other_agents[1]).__name__ == "HeuristicAgent"
        assert "torch" not in sys.modules
        print("ok")
    """)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr
    # Gymnasium first, then pcr_env: registered at once.
    proc = _run("""
        import gymnasium, pcr_env
        assert "PassCutRun-v0" in gymnasium.registry
        assert pcr_env.gym_env.PassCutRunEnv.__name__ == "PassCutRunEnv"  # adapters on first use
        print("ok")
    """)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr


# --------------------------------------------------------------------------- the import graph
def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _sources() -> dict[str, Path]:
    files = [p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))]
    files += [ROOT / f"{s}.py" for s in SCRIPTS]
    return {_module_name(p): p for p in files if p.is_file()}


def _imports(name: str, path: Path) -> set[str]:
    """Every module ``name`` imports, at module level or inside functions, relative imports resolved."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)  # `from pkg import submodule`
    return found


def _graph() -> dict[str, set[str]]:
    sources = _sources()
    graph: dict[str, set[str]] = {}
    for name, path in sources.items():
        edges = set()
        for target in _imports(name, path):
            # the longest own module that the import names (pkg.mod.attr -> pkg.mod)
            parts = target.split(".")
            for k in range(len(parts), 0, -1):
                candidate = ".".join(parts[:k])
                if candidate in sources:
                    if candidate != name:
                        edges.add(candidate)
                    break
            else:
                edges.add(parts[0])  # a third-party module
        graph[name] = edges
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    own = {n: {m for m in e if m in graph} for n, e in graph.items()}
    # A package's __init__ importing its own submodules is how packages work, not a circle.
    own = {n: {m for m in e if not m.startswith(n + ".")} for n, e in own.items()}
    cycles, state, stack = [], {}, []

    def visit(n: str) -> None:
        state[n] = 1
        stack.append(n)
        for m in sorted(own[n]):
            if state.get(m) == 1:
                cycles.append(stack[stack.index(m):] + [m])
            elif m not in state:
                visit(m)
        stack.pop()
        state[n] = 2

    for n in sorted(own):
        if n not in state:
            visit(n)
    return cycles


def test_the_import_graph_has_no_cycles():
    graph = _graph()
    assert {"pcr_env.gym_env", "agents.registry", "agents.play", "train", "evaluate"} <= set(graph)
    assert _cycles(graph) == []


def test_pcr_env_imports_neither_agents_nor_torch_nor_the_scripts():
    graph = _graph()
    upward = {n: sorted(m for m in e if m.split(".")[0] in ("agents", "torch", *SCRIPTS))
              for n, e in graph.items() if n.split(".")[0] == "pcr_env"}
    assert {n: e for n, e in upward.items() if e} == {}


TORCH_PACKAGES = ("agents.ppo", "agents.training")  # the learned policy and the trainer's parts


def test_agents_never_import_the_scripts_and_only_the_policy_and_training_packages_import_torch():
    graph = _graph()
    scripts = {n: sorted(e & set(SCRIPTS)) for n, e in graph.items() if n.split(".")[0] == "agents"}
    assert {n: e for n, e in scripts.items() if e} == {}
    torch_users = sorted(n for n, e in graph.items() if "torch" in e)
    allowed = [n for n in torch_users if n in SCRIPTS or any(n == p or n.startswith(p + ".") for p in TORCH_PACKAGES)]
    assert torch_users == allowed, sorted(set(torch_users) - set(allowed))
    assert "agents.ppo.network" in torch_users and "train" in torch_users  # the reader sees torch where it is


WEB_USERS = ("agents.web.app", "agents.serve")  # the browser table's server: the only users of the web extra


def test_only_the_browser_tables_server_imports_the_web_library():
    """starlette and uvicorn (the ``web`` extra) stay in agents.web.app and agents.serve; nothing imports the server."""
    graph = _graph()
    web_users = sorted(n for n, e in graph.items() if {m.split(".")[0] for m in e} & {"starlette", "uvicorn"})
    assert web_users == sorted(WEB_USERS), web_users
    above = sorted(n for n, e in graph.items() if n not in WEB_USERS and e & set(WEB_USERS))
    assert above == [], above


def test_lower_layers_never_import_the_packages_above_them():
    """agents.scripted/search/evaluation know nothing of training; agents.ppo knows nothing of training either."""
    graph = _graph()
    below_training = ("agents.base", "agents.run_dir", "agents.registry", "agents.play", "agents.scripted", "agents.search",
                      "agents.ppo", "agents.evaluation")
    upward = {n: sorted(m for m in e if m.startswith("agents.training")) for n, e in graph.items()
              if any(n == p or n.startswith(p + ".") for p in below_training)}
    assert {n: e for n, e in upward.items() if e} == {}


def test_the_graph_reader_sees_function_level_and_relative_imports():
    graph = _graph()
    assert "agents.ppo" in graph["agents.registry"]  # imported inside _ppo_factory
    assert "agents.base" in graph["agents.registry"]  # from .base import Agent
    assert "pcr_env.render" in graph["pcr_env.gym_env"]


def test_the_core_install_plays_without_the_train_extra():
    """`pip install .` (no extras): the baselines, the registry, the Gym id and the play CLI need none of them."""
    proc = _run("""
        import sys
        for name in ("torch", "scipy", "tqdm", "yaml", "tensorboard", "pydantic"):
            sys.modules[name] = None
        import gymnasium, pcr_env, agents
        from agents.play import play_game
        env = gymnasium.make("PassCutRun-v0", others=["heuristic", "greedy", "random"], episode="round")
        env.reset(seed=0)
        result = play_game(0, "heuristic", episode="round", seed=1, input_fn=lambda prompt: "quit",
                           output_fn=lambda text: None)
        assert result["quit"]
        try:
            agents.make_agent("ppo:pretrained")
        except ImportError as err:
            assert "needs torch" in str(err), err
        else:
            raise AssertionError("ppo without torch")
        print("ok")
    """)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr
