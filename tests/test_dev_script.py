"""``dev.py``, the README's two commands: what it does with a virtual environment that a first
run left half-made."""

from __future__ import annotations

import importlib.util
import subprocess
import venv
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def dev_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("dev_script", ROOT / "dev.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_virtual_environment_left_without_pip_is_made_again(tmp_path: Path) -> None:
    """Python's venv puts its interpreter in place before it installs pip: a first run stopped
    there (or Debian's Python without python3-venv) left a .venv that every later run took as
    made, and failed in ("No module named pip") until someone deleted it."""
    folder = tmp_path / ".venv"
    venv.create(folder, with_pip=False)
    python = folder / "bin" / "python"
    assert subprocess.run([python, "-m", "pip", "--version"], capture_output=True).returncode

    dev_script().ensure_venv(folder)

    assert subprocess.run([python, "-m", "pip", "--version"], capture_output=True).returncode == 0
