#!/usr/bin/env python3
"""Set-up and everyday commands for Uno Arena. Needs only Python 3.11+.

    python3 dev.py run     create .venv, install, migrate the embedded SQLite database,
                           create the demo admin, run the demo tournament (--no-demo: skip
                           it) and start the main job
    python3 dev.py test    create .venv, install the test tools and run the whole suite
                           (extra arguments go to pytest)
    python3 dev.py lint    ruff, and mypy --strict on the rules engine
    python3 dev.py fuzz    schemathesis over every API operation, and arbitrary JSON to every
                           write endpoint, with a big budget (FUZZ_EXAMPLES, default 500;
                           FUZZ_SEED; BODY_FUZZ_EXAMPLES; extra arguments go to pytest)
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")


def ensure_installed(extras: str) -> None:
    """Create the virtual environment and install the project once per pyproject change."""
    if sys.version_info < (3, 11):  # noqa: UP036 - dev.py is what a too-old Python runs first
        sys.exit(f"Uno Arena needs Python 3.11 or newer; this is {sys.version.split()[0]}.")
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()[:16]
    stamp = VENV / f".installed-{extras or 'base'}-{digest}"
    if stamp.exists() and PYTHON.exists():
        return
    ensure_venv(VENV)
    target = f".[{extras}]" if extras else "."
    print(f"Installing {target} into {VENV}")
    run(PYTHON, "-m", "pip", "install", "--quiet", "--upgrade", "pip")
    run(PYTHON, "-m", "pip", "install", "--quiet", "-e", target)
    stamp.touch()


def ensure_venv(folder: Path) -> None:
    """A virtual environment in ``folder`` whose Python runs pip. One left half-made (its
    Python in place, pip not: a first run interrupted, or Debian's Python without its venv
    package) is made again instead of failing at every run after."""
    python = folder / PYTHON.relative_to(VENV)
    if python.exists() and _runs_pip(python):
        return
    if folder.exists():
        print(f"Making the virtual environment in {folder} again: it has no pip")
        shutil.rmtree(folder)
    else:
        print(f"Creating a virtual environment in {folder}")
    try:
        venv.create(folder, with_pip=True)
    except (subprocess.CalledProcessError, OSError) as error:
        shutil.rmtree(folder, ignore_errors=True)
        sys.exit(f"Could not create a virtual environment with pip ({error}). On Debian or "
                 "Ubuntu, install Python's venv module first (sudo apt install python3-venv), "
                 "then run this again.")


def _runs_pip(python: Path) -> bool:
    return subprocess.run([str(python), "-m", "pip", "--version"], capture_output=True
                          ).returncode == 0


def run(*command: object, env: dict[str, str] | None = None) -> None:
    completed = subprocess.run([str(part) for part in command], cwd=ROOT, env=env)
    if completed.returncode != 0:
        sys.exit(completed.returncode)


def manage(*args: str) -> None:
    run(PYTHON, ROOT / "manage.py", *args)


def cmd_run(args: list[str]) -> None:
    ensure_installed("")
    if os.environ.get("ARENA_PRODUCTION", "").lower() in {"1", "true", "yes", "on"}:
        sys.exit("dev.py run is for the embedded default; see README for production (docker).")
    demo = "--no-demo" not in args
    args = [a for a in args if a != "--no-demo"]
    manage("migrate", "--no-input")
    manage("demo_admin")
    if demo:  # a round robin of the reference bots, so the admin has a leaderboard to show
        manage("demo", "--admin-url", f"http://{_addr(args)}/admin/")
    manage("arena_main", *args)


def _addr(args: list[str]) -> str:
    """The address arena_main will serve on (its --addr), for the demo's closing line."""
    for i, arg in enumerate(args):
        if arg.startswith("--addr="):
            return arg.split("=", 1)[1]
        if arg == "--addr" and i + 1 < len(args):
            return args[i + 1]
    return "127.0.0.1:8000"


def cmd_test(args: list[str]) -> None:
    ensure_installed("dev")
    workers = ["-n", "auto"] if (os.cpu_count() or 1) > 1 else []
    run(PYTHON, "-m", "pytest", *workers, *args)


def cmd_lint(args: list[str]) -> None:
    ensure_installed("dev")
    run(PYTHON, "-m", "ruff", "check", ".", *args)
    run(PYTHON, "-m", "mypy", "--strict", "games/uno")


def cmd_fuzz(args: list[str]) -> None:
    ensure_installed("dev")
    budget = os.environ.get("FUZZ_EXAMPLES", "500")
    env = {**os.environ, "FUZZ_EXAMPLES": budget,
           "BODY_FUZZ_EXAMPLES": os.environ.get("BODY_FUZZ_EXAMPLES", budget)}
    workers = ["-n", "auto"] if (os.cpu_count() or 1) > 1 else []
    run(PYTHON, "-m", "pytest", *workers, "tests/test_api_schema_fuzz.py",
        "tests/test_api_bodies_fuzz.py", *args, env=env)


COMMANDS = {"run": cmd_run, "test": cmd_test, "lint": cmd_lint, "fuzz": cmd_fuzz}


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit(__doc__)
    COMMANDS[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    main()
