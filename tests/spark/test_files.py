"""The release folder's swap and the leftovers of killed runs (`duckdb_sdc.spark.files`), through
Hadoop's FileSystem API on the test run's Spark session."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

from spark_helpers import spark  # noqa: F401 (fixture)

from duckdb_sdc.spark import files


def _folder(path, marker: str):
    (path / "t").mkdir(parents=True)
    (path / "t" / "part.txt").write_text(marker)


def test_replacing_a_release_exchanges_the_folders_and_the_target_never_goes_missing(tmp_path, spark):
    """Before, the previous release was renamed aside first: for a moment there was no target."""
    target, tmp = tmp_path / "release", tmp_path / ".release.1@h-00000000.tmp"
    _folder(target, "old")
    _folder(tmp, "new")
    seen, stop = set(), threading.Event()

    def watch():
        while not stop.is_set():
            try:
                seen.add((target / "t" / "part.txt").read_text())
            except FileNotFoundError:
                seen.add("missing")

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        fs = files.FileSystem(spark, str(target))
        how = files.put_in_place(fs, str(tmp), str(target))
    finally:
        stop.set()
        watcher.join()
    assert how == "exchanged"
    assert (target / "t" / "part.txt").read_text() == "new" and not tmp.exists()
    assert "missing" not in seen and seen <= {"old", "new"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["release"]


def test_a_first_release_is_a_rename(tmp_path, spark):
    target, tmp = tmp_path / "release", tmp_path / ".release.1@h-00000000.tmp"
    _folder(tmp, "new")
    assert files.put_in_place(files.FileSystem(spark, str(target)), str(tmp), str(target)) == "created"
    assert (target / "t" / "part.txt").read_text() == "new"


def test_leftovers_of_killed_runs_are_removed_and_running_ones_kept(tmp_path, spark):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # a process id that no longer runs
    host = files._HOST
    names = {
        f".release.{dead.pid}@{host}-0123abcd.tmp": "removed",  # killed on this host
        f".release.{dead.pid}@{host}-0123abcd.old": "removed",
        f".release.{dead.pid}-89abcdef.tmp": "removed",  # the name releases before pid@host wrote
        f".release.{os.getppid()}@{host}-11111111.tmp": "kept",  # a process that still runs
        f".release.{dead.pid}@another-host-22222222.tmp": "kept",  # another host's: cannot tell
        f".other.{dead.pid}@{host}-33333333.tmp": "kept",  # another target's
    }
    for name in names:
        _folder(tmp_path / name, name)
    target = tmp_path / "release"
    others = files.remove_residues(files.FileSystem(spark, str(target)), str(target))
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted(n for n, what in names.items() if what == "kept")
    assert others == [f"{tmp_path}/.release.{dead.pid}@another-host-22222222.tmp"]
