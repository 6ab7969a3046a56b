"""Installing the project as README says (an editable install) prints no warning banner."""

from __future__ import annotations

import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_an_editable_install_prints_no_warning_banner(tmp_path: Path) -> None:
    target = tmp_path / "venv"
    venv.create(target, with_pip=False)  # pip of this environment installs into it
    python = target / "bin" / "python"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
         "--no-input", "-e", str(ROOT)],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    output = done.stdout + done.stderr
    assert "!!" not in output, output
    assert "Editable install" not in output
    # Located, not imported: the dependencies were left out to keep this quick.
    found = subprocess.run(
        [str(python), "-c", "import importlib.util as u; print(u.find_spec('games').origin)"],
        capture_output=True, text=True, cwd=tmp_path,
    )
    assert found.stdout.strip() == str(ROOT / "games" / "__init__.py")
