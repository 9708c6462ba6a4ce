"""What a Spark release checks before Spark starts (`duckdb_sdc.spark.preflight`): every refusal at
once, notes for the keys that mean nothing for Parquet, locations every executor reads, the target
folder, the source. None of these tests starts a JVM."""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from duckdb_sdc.release import SpecError, parse_spec
from duckdb_sdc.spark import preflight

REPO = Path(__file__).resolve().parents[2]


def readme_quickstart_spec() -> str:
    """The README's quickstart spec, people.toml, exactly as the README writes it."""
    text = (REPO / "README.md").read_text()
    found = re.search(r'```toml title="people.toml"\n(.*?)```', text, re.S)
    assert found, "the README's quickstart has no people.toml block"
    return found.group(1)


def _people(folder: Path, n: int = 60) -> None:
    rng = np.random.default_rng(3)
    pd.DataFrame({"id": np.arange(n), "region": rng.choice(["a", "b"], n), "x": np.round(rng.normal(10, 2, n), 2),
                  "y": rng.normal(0, 1, n)}).to_csv(folder / "people.csv", index=False)


def _spec(folder: Path, **changes) -> dict:
    doc = {"source": {"files": ["people.csv"], "key": "id"},
           "output": {"database": "out/release", "table": "people"},
           "columns": {"id": {"rule": "keep", "identifying": False}, "region": "keep", "x": {"method": "mdav_round", "k": 3}, "y": "drop"}}
    for where, value in changes.items():
        section, _, key = where.partition(".")
        if value is None:
            doc[section].pop(key, None)
        else:
            doc[section][key] = value
    return doc


def test_the_readme_quickstart_spec_passes_with_two_notes(tmp_path):
    (tmp_path / "people.toml").write_text(readme_quickstart_spec())
    from duckdb_sdc.demo import make_microdata

    make_microdata(50).to_csv(tmp_path / "people.csv", index=False)
    from duckdb_sdc.release import load_spec

    spec = load_spec(tmp_path / "people.toml")
    notes = preflight.check(spec).notes
    expected = [k for k in ("storage_version", "view_without_key") if k in readme_quickstart_spec()]
    assert [n.split(" ")[0] for n in notes] == [f"output.{k}" for k in expected]
    assert all("is ignored: a Spark release writes Parquet files" in n for n in notes)


def test_every_refusal_is_named_at_once(tmp_path):
    _people(tmp_path)
    doc = _spec(tmp_path, **{"output.linkage": "out/release/link"})  # inside the release folder
    doc["columns"]["x"] = {"method": "mdav_round", "k": 3, "cells": {"rule": "dominance", "n": 2, "r": 0.7, "action": "suppress"}}
    doc["output"]["table"] = "_hidden"
    with pytest.raises(SpecError) as e:
        preflight.check(parse_spec(doc, base=tmp_path, name="s.toml"))
    lines = str(e.value).splitlines()
    assert lines[0] == "s.toml: a Spark release refuses this spec, for 3 reasons:"
    assert [ln.split(":")[0].strip() for ln in lines[1:]] == ["columns.x.cells", "output.table", "output.linkage"]


@pytest.mark.parametrize("linkage, why", [
    ("out/release/private", "is inside the release folder or holds it"),
    ("out", "is inside the release folder or holds it"),
    ("people.csv", "holds the source"),
    ("notes", "it is not a Spark linkage folder"),
    ("notes.txt", "it is not a Spark linkage folder"),
])
def test_a_linkage_location_that_would_publish_it_or_replace_a_file_is_refused(tmp_path, linkage, why):
    """The linkage folder stays apart from the release folder (whoever gets the release must not get the
    key of each row) and from the source, and it replaces only a previous linkage folder."""
    _people(tmp_path)
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "mine.txt").write_text("a user's file")
    (tmp_path / "notes.txt").write_text("a user's file")
    with pytest.raises(SpecError, match=re.escape(f"output.linkage: '{tmp_path / linkage}' ") + ".*" + why):
        preflight.check(parse_spec(_spec(tmp_path, **{"output.linkage": linkage}), base=tmp_path))
    assert (tmp_path / "notes" / "mine.txt").read_text() == (tmp_path / "notes.txt").read_text() == "a user's file"
    (tmp_path / "previous" / "release_linkage").mkdir(parents=True)  # a previous linkage may be replaced
    preflight.check(parse_spec(_spec(tmp_path, **{"output.linkage": "previous"}), base=tmp_path))


def test_two_unsupported_keys_are_named_before_any_jvm_starts(tmp_path):
    """The command line refuses the spec before it starts Spark: both keys in one message, exit 2, in
    well under the time a JVM takes to start (the budget: 5 s for the whole process)."""
    _people(tmp_path)
    doc_text = re.sub(r"(?m)^linkage = .*\n", "", readme_quickstart_spec())  # a linkage inside the release:
    doc_text = doc_text.replace("[output]\n", '[output]\nlinkage = "release/people.duckdb/private"\n')
    doc_text = doc_text.replace("[masking]\n", '[masking]\nsmall_strata = "nearest"\n')
    (tmp_path / "people.toml").write_text(doc_text)
    from duckdb_sdc.demo import make_microdata

    make_microdata(50).to_csv(tmp_path / "people.csv", index=False)
    # no Java anywhere: had the command tried to start Spark, it would say that Java is missing
    env = dict(os.environ, PYTHONPATH=str(REPO), JAVA_HOME="/nonexistent", PATH=os.path.dirname(sys.executable))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-m", "duckdb_sdc", "release", "people.toml", "--engine", "spark"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert done.returncode == 2, done.stderr
    assert "output.linkage: " in done.stderr and "is inside the release folder or holds it" in done.stderr
    assert "masking.small_strata: a Spark release does not pool small strata" in done.stderr
    assert "for 2 reasons" in done.stderr and "Traceback" not in done.stderr and "Java" not in done.stderr
    # the process's own time (its wall time on an idle machine; a shared one only makes it wait): 1.9 s
    # here, where starting Spark alone takes 10-45 s
    seconds = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert seconds < 5, seconds


@pytest.mark.parametrize("master", ["spark://127.0.0.1:7077", "yarn", "k8s://https://h:6443"])
def test_a_path_on_the_driver_is_refused_when_the_executors_are_elsewhere(tmp_path, master):
    _people(tmp_path)
    spec = parse_spec(_spec(tmp_path), base=tmp_path, name="s.toml")
    with pytest.raises(SpecError) as e:
        preflight.check(spec, master)
    text = str(e.value)
    assert "output.database: " in text and "source.files: " in text and f"master {master!r}" in text
    assert "file:///..." in text
    # written as a shared mount and with schemes Spark reads, the same spec is accepted
    doc = _spec(tmp_path, **{"output.database": f"file://{tmp_path}/shared/release",
                             "source.files": [f"file://{tmp_path}/people.csv"]})
    assert preflight.check(parse_spec(doc, base=tmp_path, name="s.toml"), master).notes == []
    doc = _spec(tmp_path, **{"output.database": "hdfs://nn:8020/releases/people",
                             "source.files": ["s3a://bucket/people/*.parquet"]})
    where = preflight.check(parse_spec(doc, base=tmp_path), master).locations
    assert (where.output, where.files) == ("hdfs://nn:8020/releases/people", ("s3a://bucket/people/*.parquet",))
    assert preflight.check(spec, "local[4]").notes == []  # a local master reads the driver's paths


def test_the_target_is_a_previous_release_of_the_table_or_nothing(tmp_path):
    _people(tmp_path)
    spec = parse_spec(_spec(tmp_path), base=tmp_path, name="s.toml")
    out = tmp_path / "out" / "release"
    (out / "people").mkdir(parents=True)
    (out / "release_manifest").mkdir()
    preflight.check(spec)  # a previous release of the same table: replaced
    (out / "notes.txt").write_text("mine")
    with pytest.raises(SpecError, match=r"cannot be replaced: it holds 'notes.txt' besides a release of table 'people'"):
        preflight.check(spec)
    (out / "notes.txt").unlink()
    (out / "release_manifest").rmdir()
    with pytest.raises(SpecError, match=r"cannot be replaced: it is not a Spark release \(no release_manifest"):
        preflight.check(spec)
    doc = _spec(tmp_path, **{"output.database": "people.csv"})  # the source itself
    with pytest.raises(SpecError, match=r"output.database: '.*people.csv' is a file; a Spark release writes a folder"):
        preflight.check(parse_spec(doc, base=tmp_path))


def test_the_source_is_checked_against_the_rules_before_spark(tmp_path):
    _people(tmp_path)
    doc = _spec(tmp_path)
    del doc["columns"]["y"]
    with pytest.raises(SpecError, match=r"source column without a rule in \[columns\].*'y'"):
        preflight.check(parse_spec(doc, base=tmp_path, name="s.toml"))
    doc = _spec(tmp_path, **{"source.files": ["nothing-*.csv"]})
    with pytest.raises(SpecError, match=r"source.files: no file matches"):
        preflight.check(parse_spec(doc, base=tmp_path))
    # a source the caller passes itself (a DataFrame) is not read here
    assert preflight.check(parse_spec(doc, base=tmp_path), source_given=True).notes == []
