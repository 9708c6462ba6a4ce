#!/usr/bin/env python3
"""The README's two commands, on a fresh machine with only Python >= 3.11 and pip:

    python3 tasks.py demo    # install into .venv if needed, then run the demo
    python3 tasks.py test    # install into .venv if needed, then run the whole test suite

Installation happens once per change of pyproject.toml (a stamp file in .venv records it).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")


def ensure_installed() -> None:
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()[:16]
    stamp = VENV / f".installed-{digest}"
    if stamp.exists():
        return
    if sys.version_info < (3, 11):
        sys.exit(f"duckdb_sdc needs Python >= 3.11, this is {sys.version.split()[0]}")
    if not PYTHON.exists():
        print(f"creating {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    # plot: the demo writes a trade-off plot, and the tests check the plots (see pyproject.toml)
    print("installing duckdb-sdc with its test, dbt and plot extras into .venv", flush=True)
    subprocess.run([str(PYTHON), "-m", "pip", "install", "--quiet", "-e", f"{ROOT}[test,dbt,plot]"], check=True)
    for old in VENV.glob(".installed-*"):
        old.unlink()
    stamp.touch()


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in ("demo", "test"):
        print(__doc__)
        return 2
    ensure_installed()
    if argv[0] == "demo":
        return subprocess.call([str(PYTHON), "-m", "duckdb_sdc", "demo"], cwd=ROOT)
    return subprocess.call([str(PYTHON), "-m", "pytest"], cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
