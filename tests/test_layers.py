"""The import contract of DESIGN.md (pyproject's [tool.importlinter]) holds and catches a break.

`make check` runs the same `lint-imports`; these tests put it in `make test`, so CI fails on an
upward import or a cycle as well.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINT = Path(sys.executable).parent / "lint-imports"


def lint(source: Path, config: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(source)}
    return subprocess.run(
        [str(LINT), "--no-cache", "--no-logo", str(config)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_the_layers_and_acyclic_contracts_are_kept() -> None:
    done = lint(ROOT / "src", ROOT / "pyproject.toml")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 kept, 0 broken" in done.stdout


def test_an_upward_import_and_the_cycle_it_makes_break_the_contracts(tmp_path: Path) -> None:
    shutil.copytree(
        ROOT / "src" / "nerve", tmp_path / "nerve", ignore=shutil.ignore_patterns("*.pyc")
    )
    risk = tmp_path / "nerve" / "safety" / "risk.py"
    risk.write_text(risk.read_text() + "\nimport nerve.gateway.app  # noqa: E402\n")
    done = lint(tmp_path, ROOT / "pyproject.toml")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "nerve's layers: imports point down BROKEN" in done.stdout
    assert "no import cycle inside any package BROKEN" in done.stdout
    assert "nerve.safety.risk -> nerve.gateway.app" in done.stdout


def test_a_module_outside_every_layer_breaks_the_contract(tmp_path: Path) -> None:
    shutil.copytree(
        ROOT / "src" / "nerve", tmp_path / "nerve", ignore=shutil.ignore_patterns("*.pyc")
    )
    (tmp_path / "nerve" / "stray.py").write_text('"""Placed in no layer."""\n')
    done = lint(tmp_path, ROOT / "pyproject.toml")
    assert done.returncode == 1
    assert "nerve.stray" in done.stdout
