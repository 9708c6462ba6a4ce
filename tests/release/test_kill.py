"""Issue 27's evidence: a release of 1M rows under a 150 MB memory limit (DuckDB spills raw values to disk:
the test sees the spill files appear), killed with SIGKILL at random points, leaves no raw value anywhere: not as text and not as the
8 bytes of a double, under the working folder, the output folder or the system temporary folder. The
watchdog of the release's private workspace removes its spill files and its half-written files within
moments of the kill; a kill after the commit was recorded leaves the release and its linkage in place
together."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from release_helpers import toml_dump

ROWS = 1_000_000
TRIALS = 9  # each a 1M-row release killed at a drawn moment of a phase (PHASES in turn); fewer than 15 for CI's 30 minutes
NEEDLES = 4000  # raw values looked for, of the masked and of the dropped column


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    folder = tmp_path_factory.mktemp("kill")
    rng = np.random.default_rng(int.from_bytes(os.urandom(4), "little"))  # values no other test writes
    x = np.round(rng.lognormal(10, 1, ROWS), 6)
    y = np.round(rng.uniform(1e5, 1e6, ROWS), 6)
    frame = pd.DataFrame({"id": np.arange(1, ROWS + 1), "region": np.array(["a", "b", "c", "d"])[np.arange(ROWS) % 4],
                          "x": x, "y": y})
    con = duckdb.connect(str(folder / "source.duckdb"))
    con.register("frame", frame)
    con.execute("CREATE TABLE people AS SELECT * FROM frame")
    con.close()
    spec = {"source": {"database": "source.duckdb", "table": "people", "key": "id"},
            "output": {"database": "out/people.duckdb", "table": "people", "linkage": "private/link.duckdb"},
            "masking": {"strata": ["region"]},
            "resources": {"memory_limit": "150MB", "threads": 2},
            "columns": {"id": "drop", "region": "keep", "x": {"method": "mdav_round", "k": 5}, "y": "drop"}}
    (folder / "people.toml").write_text(toml_dump(spec))
    pick = rng.choice(ROWS, NEEDLES // 2, replace=False)
    needles = np.concatenate([x[pick], y[pick]])
    return folder, needles


def _files(roots: list[Path], since: float, skip: set[Path]) -> list[Path]:
    out = []
    for root in roots:
        for dirpath, dirs, names in os.walk(root):
            # other processes' folders: Spark's block managers and other tests' pytest folders (the
            # test's own folder is a root of its own)
            dirs[:] = [d for d in dirs if not d.startswith(("blockmgr-", "spark-", "pytest-of-"))]
            for name in names:
                path = Path(dirpath) / name
                try:
                    info = path.lstat()
                except OSError:
                    continue
                if not path.is_file() or path in skip or info.st_mtime < since:
                    continue
                out.append(path)
    return out


def _found(path: Path, doubles: np.ndarray, texts: set[bytes]) -> list[str]:
    try:
        blob = path.read_bytes()
    except OSError:
        return []
    hits = []
    data = np.frombuffer(blob, dtype=np.uint8)
    for offset in range(8):
        usable = (len(data) - offset) // 8 * 8
        if usable <= 0:
            continue
        words = data[offset:offset + usable].view("<u8")
        if np.isin(words, doubles).any():
            hits.append(f"{path}: a raw value as a double (offset {offset} mod 8)")
            break
    numbers = set(re.findall(rb"\d+\.\d+", blob))
    if numbers & texts:
        hits.append(f"{path}: a raw value as text ({sorted(numbers & texts)[0]!r})")
    return hits


# the moments a kill aims at: a spill file exists; the hidden release file exists; the hidden linkage
# file exists (each then after a random delay, so that the kill lands anywhere in that phase)
PHASES = ("spill", "release", "linkage")


def _run(folder: Path, phase: str | None = None, delay: float = 0.0) -> tuple[int, str, int]:
    """Run the release; with `phase`, SIGKILL it `delay` seconds after that phase is first seen.
    The exit code, the standard error and the pid."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    base = Path(tempfile.gettempdir()) / f"duckdb-sdc-{os.getuid()}"
    proc = subprocess.Popen([sys.executable, "-m", "duckdb_sdc", "release", "--quiet", "people.toml"],
                            cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seen = {"spill": lambda: any(base.glob(f"{proc.pid}-*/spill/*")),
            "release": lambda: any((folder / "out").glob(".people.duckdb.*")),
            "linkage": lambda: any((folder / "private").glob(".link.duckdb.*"))}
    if phase is not None:
        while proc.poll() is None and not seen[phase]():
            time.sleep(0.002)
        time.sleep(delay)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
    _, err = proc.communicate()
    return proc.returncode, err.decode(errors="replace"), proc.pid


def _settled(base: Path, pid: int, timeout: float = 20) -> list[Path]:
    """Wait until the killed process's workspace is gone from the private base folder (its watchdog
    has run); what is left of it after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = list(base.glob(f"{pid}-*")) + list(base.glob(f".starting-{pid}-*"))
        if not left:
            return []
        time.sleep(0.05)
    return left


def test_a_release_killed_at_random_points_leaves_no_raw_value_anywhere(setup):
    folder, needles = setup
    doubles = np.unique(needles.astype("<f8").view("<u8"))
    texts = {repr(float(v)).encode() for v in needles} | {f"{v:.6f}".rstrip("0").encode() for v in needles}
    base = Path(tempfile.gettempdir()) / f"duckdb-sdc-{os.getuid()}"
    code, err, _ = _run(folder, "spill")  # with no delay: a release spills (else the test tests nothing)
    assert code == -signal.SIGKILL, f"the release ended before it spilled (exit {code}): {err}"
    code, err, _ = _run(folder)
    assert code == 0, f"the release must succeed under the memory limit: {err}"
    rng = np.random.default_rng(2026)
    outcomes = []
    for trial in range(TRIALS):
        started = time.time()
        code, err, pid = _run(folder, PHASES[trial % len(PHASES)], float(rng.uniform(0, 0.5)))
        assert code in (0, -signal.SIGKILL), f"trial {trial}: exit {code}: {err}"
        left = _settled(base, pid)
        assert not left, f"trial {trial} (exit {code}): the workspace is left: {left}"
        outcomes.append(code)
        released = {folder / "out" / "people.duckdb", folder / "private" / "link.duckdb", folder / "source.duckdb"}
        roots = [folder, Path(tempfile.gettempdir())]
        hits = [h for path in _files(roots, started - 1, released) for h in _found(path, doubles, texts)]
        assert not hits, f"trial {trial} (exit {code}): {hits[:5]}"
        assert not list((folder / "out").glob(".*")) and not list((folder / "private").glob(".*")), trial
        # the release and its linkage are from the same release, whatever the kill interrupted
        plain = duckdb.connect(str(folder / "out" / "people.duckdb"), read_only=True)
        release_id = plain.execute("SELECT any_value(release_id) FROM release_manifest").fetchall()[0][0]
        plain.close()
        link = duckdb.connect(str(folder / "private" / "link.duckdb"), read_only=True)
        assert link.execute("SELECT DISTINCT release_id FROM release_linkage").fetchall() == [(release_id,)], trial
        link.close()
    assert outcomes.count(-signal.SIGKILL) >= TRIALS // 2, outcomes  # most trials were killed mid-release
