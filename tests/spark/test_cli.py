"""`duckdb-sdc release spec.toml --engine spark`: the release folder, the summary line, the exit codes
(run in-process, on the test run's Spark session)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from spark_helpers import read_release, spark, write_parquet  # noqa: F401 (fixture)

from duckdb_sdc import cli

SPEC = """
[source]
files = "people.parquet"
key = "id"

[output]
database = "out/release"
table = "people"

[columns]
id = {{ rule = "keep", identifying = false }}
x = {{ method = "mdav_round", k = {k} }}
"""


def _source(folder: Path) -> pd.DataFrame:
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"id": np.arange(50, dtype=np.int64), "x": np.round(rng.normal(10, 2, 50), 1)})
    write_parquet(df, folder / "people.parquet")
    return df


def test_release_with_the_spark_engine(tmp_path, spark, capsys):
    _source(tmp_path)
    (tmp_path / "spec.toml").write_text(SPEC.format(k=5))
    assert cli.main(["release", str(tmp_path / "spec.toml"), "--engine", "spark", "--master", "local[2]"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("released 50 rows x 2 columns (1 masked: x) with Spark to ") and "out/release" in out
    assert read_release(tmp_path / "out" / "release", "people")["x"].nunique() <= 10


def test_a_spark_release_error_is_one_line_and_exit_code_2(tmp_path, spark, capsys):
    _source(tmp_path)
    (tmp_path / "spec.toml").write_text(SPEC.format(k=60))
    assert cli.main(["release", str(tmp_path / "spec.toml"), "--engine", "spark"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["duckdb-sdc release: error: spec.toml: columns.x: mdav_round: k = 60 is larger than the number "
                   "of non-NULL values (50)"]
    assert list((tmp_path / "out").iterdir()) == []  # no release, no hidden leftovers


def test_dry_run_is_refused_for_spark(tmp_path, capsys):
    _source(tmp_path)
    (tmp_path / "spec.toml").write_text(SPEC.format(k=5))
    assert cli.main(["release", str(tmp_path / "spec.toml"), "--engine", "spark", "--dry-run"]) == 2
    assert "a Spark release has no script to print" in capsys.readouterr().err


def _quickstart(folder: Path) -> None:
    from spark.test_preflight import readme_quickstart_spec

    from duckdb_sdc.demo import make_microdata

    make_microdata(1000).to_csv(folder / "people.csv", index=False)
    (folder / "people.toml").write_text(readme_quickstart_spec())


def test_the_readme_quickstart_spec_releases_on_spark_unchanged(tmp_path, spark, capsys):
    """The quickstart's spec as the README writes it: the Spark release equals the DuckDB release
    record by record, column by column (matched on the key, through each engine's linkage where the
    spec drops the key); the keys that mean nothing for Parquet are noted, not refused."""
    import duckdb
    from spark.test_preflight import readme_quickstart_spec
    from spark.test_release import _linked

    from duckdb_sdc.release import load_spec

    spark_dir, duck_dir = tmp_path / "spark", tmp_path / "duck"
    for d in (spark_dir, duck_dir):
        d.mkdir()
        _quickstart(d)
    assert cli.main(["release", str(spark_dir / "people.toml"), "--engine", "spark"]) == 0
    err = capsys.readouterr().err
    for key in ("storage_version", "view_without_key"):
        assert (f"note: output.{key} is ignored" in err) == (f"\n{key} = " in readme_quickstart_spec())
    assert cli.main(["release", str(duck_dir / "people.toml"), "--quiet"]) == 0
    spec = load_spec(spark_dir / "people.toml")
    con = duckdb.connect()
    con.execute(f"CREATE TABLE ours AS SELECT * FROM read_parquet('{spark_dir / spec.output.database.relative_to(spark_dir)}"
                "/people/*.parquet')")
    con.execute(f"ATTACH '{duck_dir / spec.output.database.relative_to(spark_dir)}' AS d (READ_ONLY)")
    if spec.output.linkage is None:
        ours = con.execute(f"SELECT * FROM ours ORDER BY {spec.source.key}").fetchdf()
        theirs = con.execute(f"SELECT * FROM d.people ORDER BY {spec.source.key}").fetchdf()
    else:
        link = spec.output.linkage.relative_to(spark_dir)
        con.execute(f"CREATE TABLE our_link AS SELECT * FROM read_parquet('{spark_dir / link}/release_linkage/*.parquet')")
        con.execute(f"ATTACH '{duck_dir / link}' AS dl (READ_ONLY)")
        ours, theirs = _linked(con, "ours", "our_link"), _linked(con, "d.people", "dl.release_linkage")
    con.close()
    assert list(ours.columns) == list(theirs.columns) and len(ours) == 1000
    pd.testing.assert_frame_equal(ours, theirs, check_dtype=False)


def test_evaluate_with_the_spark_engine(tmp_path, spark, capsys):
    """`duckdb-sdc evaluate --engine spark` reads the Spark release folder and prints the report's rows,
    the values of DuckDB's report of the same release (--csv: the tidy rows)."""
    _quickstart(tmp_path)
    assert cli.main(["evaluate", str(tmp_path / "people.toml"), "--engine", "spark"]) == 2
    assert "no Spark release at" in capsys.readouterr().err
    assert cli.main(["release", str(tmp_path / "people.toml"), "--engine", "spark", "--quiet"]) == 0
    capsys.readouterr()
    assert cli.main(["evaluate", str(tmp_path / "people.toml"), "--engine", "spark", "--csv"]) == 0
    import io

    ours = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert {"il1s", "mae", "interval_disclosure", "k_anonymity", "unique_share"} <= set(ours["measure"])
    from duckdb_sdc.release import load_spec
    from duckdb_sdc.spark import evaluate

    frame = evaluate(load_spec(tmp_path / "people.toml"), spark)
    both = ours.merge(frame, on=["section", "measure", "column"], how="outer", suffixes=("", "_direct"))
    assert len(both) == len(ours) == len(frame)
    np.testing.assert_allclose(both["value"].to_numpy(float), both["value_direct"].to_numpy(float), rtol=1e-12)
