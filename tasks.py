#!/usr/bin/env python3
"""The README's two commands, on a fresh machine with only Python >= 3.11 and pip:

    python3 tasks.py demo    # install into .venv if needed, then run the demo
    python3 tasks.py test    # install everything the tests need if missing, then run the whole suite

`demo` installs the package with its plot extra into .venv and compiles its Numba kernels into the
on-disk cache (`duckdb-sdc warmup`), so that no first call compiles later. `test` also installs every extra the
tests exercise (test, dbt, plot, docs, spark, ml), the system packages they run for real (Java for
Spark, Debian's chromium for the docs site; with apt-get, as root or through sudo), and a second venv,
.venv-compat, with DuckDB 1.x (the Python package and the CLI) that opens releases as an older client
would. Each installation happens once per change of pyproject.toml or of this file (stamp files).
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
COMPAT_VENV = ROOT / ".venv-compat"
BIN = "Scripts" if os.name == "nt" else "bin"
PYTHON = VENV / BIN / ("python.exe" if os.name == "nt" else "python")

DEMO_EXTRAS = "plot"
TEST_EXTRAS = "test,dbt,plot,docs,spark,ml"
# The newest DuckDB 1.x on the package index: releases must open in it (see docs/clients.md).
COMPAT_PACKAGES = ["duckdb==1.5.6", "duckdb-cli==1.5.6"]
# Debian packages the tests run for real: a JRE for Spark (local mode) and Chromium for the docs site.
SYSTEM_PACKAGES = {"java": "default-jre-headless", "chromium": "chromium"}


def _digest() -> str:
    data = (ROOT / "pyproject.toml").read_bytes() + Path(__file__).read_bytes()
    return hashlib.sha256(data).hexdigest()[:16]


def _stamped(folder: Path, name: str) -> Path:
    return folder / f".installed-{name}-{_digest()}"


def _restamp(stamp: Path) -> None:
    for old in stamp.parent.glob(stamp.name.rsplit("-", 1)[0] + "-*"):
        old.unlink()
    stamp.touch()


def _make_venv(folder: Path) -> Path:
    python = folder / BIN / PYTHON.name
    if not python.exists():
        print(f"creating {folder}", flush=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(folder)
    return python


def ensure_installed(extras: str) -> None:
    stamp = _stamped(VENV, extras.replace(",", "+"))
    if stamp.exists():
        return
    if sys.version_info < (3, 11):
        sys.exit(f"duckdb_sdc needs Python >= 3.11, this is {sys.version.split()[0]}")
    python = _make_venv(VENV)
    print(f"installing duckdb-sdc with the extras {extras} into .venv", flush=True)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "-e", f"{ROOT}[{extras}]"], check=True)
    # compile every Numba kernel into its on-disk cache now, so that no first call compiles later
    print("compiling duckdb_sdc's kernels into Numba's cache (duckdb-sdc warmup)", flush=True)
    # (a failed warm-up only costs compile time later; tests/kernels/test_warmup.py is where it must pass)
    if subprocess.run([str(python), "-m", "duckdb_sdc", "warmup", "--quiet"], cwd=ROOT).returncode:
        print("warning: the warm-up reported failures (above); continuing", flush=True)
    _restamp(stamp)


def ensure_compat_venv() -> None:
    stamp = _stamped(COMPAT_VENV, "compat")
    if stamp.exists():
        return
    python = _make_venv(COMPAT_VENV)
    print(f"installing {', '.join(COMPAT_PACKAGES)} into .venv-compat", flush=True)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", *COMPAT_PACKAGES], check=True)
    _restamp(stamp)


def ensure_system_packages() -> None:
    """Install the Debian packages of SYSTEM_PACKAGES whose command is missing. Without apt-get, or
    without root or sudo, say what to install; the tests that need them then fail saying so too."""
    missing = [pkg for command, pkg in SYSTEM_PACKAGES.items() if shutil.which(command) is None]
    if not missing:
        return
    apt = shutil.which("apt-get")
    prefix = [] if os.name != "nt" and os.geteuid() == 0 else (["sudo", "-n"] if shutil.which("sudo") else None)
    if apt is None or prefix is None:
        print(f"tasks.py: please install {' '.join(missing)} (Debian/Ubuntu: apt-get install {' '.join(missing)}); "
              "the tests that need them fail without them", file=sys.stderr, flush=True)
        return
    print(f"installing {' '.join(missing)} with apt-get", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run([*prefix, apt, "update", "-qq"], check=True, env=env)
    subprocess.run([*prefix, apt, "install", "-y", "-qq", "--no-install-recommends", *missing], check=True, env=env)


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in ("demo", "test"):
        print(__doc__)
        return 2
    if argv[0] == "demo":
        ensure_installed(DEMO_EXTRAS)
        return subprocess.call([str(PYTHON), "-m", "duckdb_sdc", "demo"], cwd=ROOT)
    ensure_system_packages()
    ensure_installed(TEST_EXTRAS)
    ensure_compat_venv()
    # every core, one test file per worker: a file's tests share fixtures (a Spark session, a built site);
    # files in collection order, the longest first (tests/conftest.py's LONGEST_FIRST)
    # (the 20 slowest tests are printed: the whole run must stay within CI's 30 minutes on 2 cores)
    return subprocess.call([str(PYTHON), "-m", "pytest", "--numprocesses", "auto", "--dist", "loadfile",
                            "--no-loadscope-reorder", "--durations=20"], cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
