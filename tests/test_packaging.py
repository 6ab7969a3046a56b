"""Installing the project as README says (an editable install) prints no warning banner; and
installed with no dependencies at all, its engine plays offline."""

from __future__ import annotations

import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def installed_without_dependencies(tmp_path: Path) -> tuple[Path, str]:
    """A new environment with the project installed editable and nothing else (pip of this
    environment installs into it): its python, and what pip printed."""
    target = tmp_path / "venv"
    venv.create(target, with_pip=False)
    python = target / "bin" / "python"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
         "--no-input", "-e", str(ROOT)],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return python, done.stdout + done.stderr


def test_an_editable_install_prints_no_warning_banner(tmp_path: Path) -> None:
    python, output = installed_without_dependencies(tmp_path)
    assert "!!" not in output, output
    assert "Editable install" not in output
    # Located, not imported: the dependencies were left out to keep this quick.
    found = subprocess.run(
        [str(python), "-c", "import importlib.util as u; print(u.find_spec('games').origin)"],
        capture_output=True, text=True, cwd=tmp_path,
    )
    assert found.stdout.strip() == str(ROOT / "games" / "__init__.py")


def test_a_bot_writer_plays_the_engine_offline_with_nothing_but_the_standard_library(
    tmp_path: Path,
) -> None:
    """``pip install --no-deps`` of the project into a bot's own environment (no Django, no
    dependency at all): the engine, the reference strategies and ``bots.evaluate`` run."""
    python, _ = installed_without_dependencies(tmp_path)
    game = """
import random, sys
from games.uno import Options, apply, legal_moves, new_game, random_move, view
from bots.strategies import STRATEGIES
state = new_game(Options(players=3, stacking=True), seed=42)
rng = random.Random(0)
while not state.finished:
    seat = state.awaiting
    apply(state, seat, random_move(legal_moves(state, seat), rng))
assert len(view(state, 0)["hand_counts"]) == 3
assert not any(name.split(".")[0] in ("django", "rest_framework") for name in sys.modules)
print("winner", state.winner, "strategies", sorted(STRATEGIES))
"""
    played = subprocess.run([str(python), "-c", game], capture_output=True, text=True,
                            cwd=tmp_path, timeout=120)
    assert played.returncode == 0, played.stderr
    assert played.stdout.startswith("winner "), played.stdout
    evaluated = subprocess.run(
        [str(python), "-m", "bots.evaluate", "--games", "4", "--options",
         '{"single_hand": true}'],
        capture_output=True, text=True, cwd=tmp_path, timeout=300,
    )
    assert evaluated.returncode == 0, evaluated.stderr
    assert "heuristic" in evaluated.stdout, evaluated.stdout
