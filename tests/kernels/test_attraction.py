"""The smallest sets of attraction measured in the masking kernel (`duckdb_sdc.kernels.attraction`):
the buckets' facts, merged on the driver, equal a slow reference (a count of the released values) on
random data, whole strata and pieces of split strata (classes across bucket boundaries, a stratum of
one value); pieces out of order give a lower bound and say so. With a real Spark (local[2]): the
kernel's figures equal the check on the persisted table and a pandas groupby of the masked output,
per stratum; a refusal has the DuckDB release's message and writes nothing; the manifest's measured
k equals the DuckDB release's with split strata."""

from __future__ import annotations

from collections import Counter

import duckdb
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from spark_helpers import previous_release, read_manifest, spark, tree, write_parquet  # noqa: F401 (fixture)

from duckdb_sdc.release import SpecError, parse_spec, release, safeguards
from duckdb_sdc.spark import Options
from duckdb_sdc.spark import engine
from duckdb_sdc.spark import release as spark_release
from duckdb_sdc.kernels.attraction import (PieceFact, class_sizes, merge_pieces, piece_fact, smallest_set,
                                         whole_fact)
from duckdb_sdc.spark.kernel import CONFLICT, Reports

# ---------------------------------------------------------------------------------------------
# the facts and their merge, against a count of the released values


def _reference(values) -> int | None:
    """The smallest class of the non-NaN values: a plain count."""
    counts = Counter(float(v) for v in values if not np.isnan(v))
    return min(counts.values()) if counts else None


def _pieces(released: np.ndarray, cuts) -> list[PieceFact]:
    bounds = [0, *sorted(set(cuts)), released.shape[0]]
    return [piece_fact(0, a, released[a:b]) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=80), st.lists(st.integers(1, 79), max_size=8),
       st.floats(0, 0.3), st.integers(0, 2**32 - 1))
def test_pieces_of_sorted_values_merge_to_the_exact_smallest_class(draws, cuts, nulls, seed):
    """Sorted released values with long runs (a class across one or several boundaries, pieces of one
    value, a whole stratum of one value when draws are equal), NULLs anywhere, cut anywhere."""
    rng = np.random.default_rng(seed)
    released = np.sort(np.asarray(draws, np.float64) * 0.5 - 1.0)
    released[rng.random(released.shape[0]) < nulls] = np.nan
    pieces = _pieces(released, [c for c in cuts if c < released.shape[0]])
    got, exact = merge_pieces(pieces)
    assert exact
    assert got == _reference(released)
    assert got == whole_fact(0, released).smallest


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=60), st.lists(st.integers(1, 59), max_size=6))
def test_pieces_out_of_order_give_a_lower_bound_and_say_so(draws, cuts):
    released = np.asarray(draws, np.float64)
    pieces = _pieces(released, [c for c in cuts if c < released.shape[0]])
    got, exact = merge_pieces(pieces)
    truth = _reference(released)
    assert got <= truth
    ordered = all(a.last <= b.first for a, b in zip(pieces[:-1], pieces[1:]))
    assert exact == ordered
    if ordered:
        assert got == truth


def test_a_piece_reports_its_ends_and_the_smallest_class_inside():
    x = np.array([1.0, 1.0, 2.0, 3.0, 3.0, 3.0, np.nan, 4.0, 4.0])
    assert piece_fact(2, 10, x) == PieceFact(2, 10, 1.0, 2, 4.0, 2, 1)
    assert piece_fact(2, 10, x[::-1]) == PieceFact(2, 10, 1.0, 2, 4.0, 2, 1)  # unsorted: counted after a sort
    assert piece_fact(0, 0, np.array([5.0, 5.0])) == PieceFact(0, 0, 5.0, 2, 5.0, 2, None)
    assert piece_fact(0, 0, np.array([np.nan])) == PieceFact(0, 0)
    # a class running through a piece of one value adds up over three pieces
    pieces = [PieceFact(0, 0, 1.0, 3, 2.0, 1), PieceFact(0, 4, 2.0, 2, 2.0, 2), PieceFact(0, 6, 2.0, 1, 3.0, 5)]
    assert merge_pieces(pieces) == (3, True)  # class 1.0: 3; class 2.0: 1 + 2 + 1 = 4; class 3.0: 5


def _rows_reference(X: np.ndarray) -> list[int]:
    """Classes of rows as Spark's GROUP BY forms them: rows whose first value is NULL left out, -0.0
    equal to 0.0, NULL equal to NULL."""
    def canon(v):
        return "NULL" if np.isnan(v) else float(v) + 0.0

    return sorted(Counter(tuple(canon(v) for v in row) for row in X if not np.isnan(row[0])).values())


@pytest.mark.parametrize("seed", range(20))
def test_classes_of_rows_are_the_groups_spark_forms(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 60))
    X = rng.integers(-1, 2, (m, 3)).astype(np.float64)
    X[X == 0] = rng.choice([0.0, -0.0], int((X == 0).sum()))
    X[rng.random((m, 3)) < 0.15] = np.nan
    assert sorted(class_sizes(X).tolist()) == _rows_reference(X)
    assert sorted(class_sizes(X[:, 0]).tolist()) == _rows_reference(X[:, :1])


def test_reports_merge_idempotently_and_mark_a_conflict():
    """A task run twice reports the same facts again (no change); different facts for one bucket are
    a conflict, never a choice."""
    param = Reports()
    a = param.addInPlace(param.zero(None), {("x", 1): whole_fact(0, np.array([1.0, 1.0]))})
    a = param.addInPlace(a, {("x", 1): whole_fact(0, np.array([1.0, 1.0])), ("x", 2): whole_fact(1, np.array([2.0]))})
    assert a == {("x", 1): whole_fact(0, np.array([3.0, 3.0])), ("x", 2): whole_fact(1, np.array([7.0]))}
    a = param.addInPlace(a, {("x", 2): whole_fact(1, np.array([2.0, 2.0]))})
    assert a[("x", 2)] == CONFLICT
    a = param.addInPlace(a, {("x", 2): whole_fact(1, np.array([7.0]))})
    assert a[("x", 2)] == CONFLICT


def test_the_smallest_set_over_strata_names_the_first_stratum_of_the_smallest():
    facts = [whole_fact(2, np.array([1.0, 1.0])), whole_fact(1, np.array([4.0, 4.0, 5.0, 5.0])),
             whole_fact(0, np.array([np.nan])), PieceFact(3, 0, 1.0, 3, 1.0, 3), PieceFact(3, 3, 1.0, 1, 2.0, 2)]
    assert smallest_set(facts) == (1, 2, True)
    assert smallest_set([whole_fact(0, np.array([np.nan]))]) == (None, None, True)


# ---------------------------------------------------------------------------------------------
# with Spark


def _source(n: int, seed: int) -> pd.DataFrame:
    """Three strata: 'a' with long runs of ties, 'b' continuous, 'c' of one value in x and y."""
    rng = np.random.default_rng(seed)
    s = rng.choice(["a", "b", "c"], n, p=[0.45, 0.3, 0.25])
    x = np.where(s == "a", rng.integers(0, 6, n) * 10.0, np.round(rng.normal(50, 10, n), 1))
    x[s == "c"] = 7.0
    y = np.where(s == "a", rng.integers(0, 4, n) * 1.0, np.round(rng.lognormal(3, 1, n), 0))
    y[s == "c"] = 2.0
    df = pd.DataFrame({
        "id": rng.permutation(n).astype(np.int64) * 3 + 5, "s": s, "x": x, "y": y,
        "w": np.round(rng.normal(0, 5, n), 0), "g1": rng.integers(0, 5, n) * 1.0,
        "g2": np.round(rng.normal(10, 2, n), 0), "b1": np.round(rng.normal(3, 1, n), 1),
        "b2": np.round(rng.normal(8, 2, n), 1)})
    for col in ("x", "y", "w", "g1", "b2"):
        df.loc[rng.random(n) < 0.05, col] = np.nan
    return df


COLUMNS = {"id": {"rule": "keep", "identifying": False}, "s": "keep", "x": {"method": "ranking_round", "k": 3},
           "y": {"method": "mdav_round", "k": 4}, "w": {"method": "efd_round", "c": 4}}
GROUPS = [{"columns": ["g1", "g2"], "method": "mdav_multi_round", "k": 3},
          {"columns": ["b1", "b2"], "method": "box_release", "k": 5, "characteristic": "mean(b1)"}]
SPLIT = Options(bucket_rows=40, max_stratum_rows=10_000, sample_rows=60, guard_rows=12)


@pytest.mark.parametrize("seed", [1])
def test_kernel_figures_equal_the_persisted_check_and_a_groupby(tmp_path, spark, seed):
    """Ranking and MDAV in pieces of 40 records (stratum 'c' is one value, split in several pieces;
    'a' has classes across boundaries), equal frequency, a group and boxes on whole strata: per rule
    and stratum, the kernel's figure equals a pandas groupby of the masked table, and the release's
    check gives the persisted check's figures."""
    df = _source(420, seed)
    write_parquet(df, tmp_path / "src.parquet")
    spec = parse_spec({"source": {"files": "src.parquet", "key": "id"}, "output": {"database": "out", "table": "t"},
                       "masking": {"strata": ["s"]}, "columns": COLUMNS, "groups": GROUPS}, base=tmp_path)
    src, source_columns = engine.read_source(spark, spec, None, None)
    engine.resolve(spec, source_columns)
    rules = spec.masked()
    src, strata = engine.compute_strata(spark, src, spec, rules)
    stages = engine.plan_stages(spark, src, spec, rules, strata, SPLIT)
    assert sum(len(st.tasks) for st in stages) > 15  # x and y are split: 3 strata in many pieces
    reports = spark.sparkContext.accumulator({}, Reports())
    masked = engine.masked_pipeline(spark, src, spec, rules, stages, reports).persist()
    table = masked.toPandas()
    got = reports.value
    crossing, overall = 0, {}
    for rule in rules:
        st = strata[tuple(spec.strata_of(rule))]
        stage = next(stage for stage in stages if rule in stage.rules)
        _, label_of = engine.stage_labels(spark, stage)
        facts = [got[(rule.where, label_of[b])] for b in stage.tasks]
        cols = [rule.box_column] if rule.boxed else list(rule.columns)
        ref = (table[table[cols[0]].notna()].groupby([st.index_column, *cols], dropna=False).size()
               .groupby(level=0).min().to_dict())
        for s in range(len(st.labels)):
            assert smallest_set([f for f in facts if f.stratum == s])[1:] == (ref.get(s), True), (rule.where, s)
        overall[rule.where] = min(ref.values())
        pieces = sorted((f for f in facts if isinstance(f, PieceFact)), key=lambda f: (f.stratum, f.offset))
        crossing += sum(a.stratum == b.stratum and a.last == b.first for a, b in zip(pieces[:-1], pieces[1:]))
    assert crossing >= 5  # classes across bucket boundaries (stratum 'c' alone has several)
    outcomes = []
    for run in (lambda f: engine.check_smallest_sets(masked, spec, rules, strata, f),
                lambda f: engine.measured_sets(spark, got, spec, rules, strata, stages, f)):
        facts = safeguards.Facts()
        try:
            run(facts)
            outcomes.append([facts.of(r).smallest_set for r in rules])
        except SpecError as e:
            outcomes.append(str(e))
    masked.unpersist()
    assert outcomes[0] == outcomes[1]
    some = next(key for key in got if key[0] == "columns.y")
    for broken, message in (({k: v for k, v in got.items() if k != some}, "did not report"),
                            ({**got, some: CONFLICT}, "gave two different reports")):
        with pytest.raises(SpecError, match=rf"columns.y: the masking task of stratum s = .* {message} its sets"):
            engine.measured_sets(spark, broken, spec, rules, strata, stages, safeguards.Facts())
    if min(overall.values()) >= 2:
        assert outcomes[0] == [overall[r.where] for r in rules]
    else:
        assert "a set of attraction below 2" in outcomes[0]


def test_a_refusal_has_the_duckdb_message_and_writes_nothing(tmp_path, spark):
    """Equal frequency with too many intervals leaves a value to one record: both engines refuse with
    the same message; the Spark release measured it in the kernel, after writing into the temporary
    folder, which is deleted."""
    df = _source(300, 3)
    write_parquet(df, tmp_path / "src.parquet")
    columns = {"id": {"rule": "keep", "identifying": False}, "s": "keep", "x": {"method": "ranking_round", "k": 3}, "y": "keep",
               "w": {"method": "efd_round", "c": 40}, "g1": "drop", "g2": "drop", "b1": "drop", "b2": "drop"}
    docs = [{"source": {"files": "src.parquet", "key": "id"}, "output": {"database": out, "table": "t"},
             "masking": {"strata": ["s"]}, "columns": columns} for out in ("duck.duckdb", "out")]
    with pytest.raises(SpecError) as duck:
        release(parse_spec(docs[0], base=tmp_path))
    before = previous_release(tmp_path / "out", "t")
    with pytest.raises(SpecError) as ours:
        spark_release(parse_spec(docs[1], base=tmp_path), spark, options=SPLIT)
    assert str(ours.value) == str(duck.value)
    assert "shared by 1 record: a set of attraction below 2" in str(ours.value)
    assert tree(tmp_path / "out") == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_the_measured_k_of_split_strata_equals_the_duckdb_release(tmp_path, spark):
    """The manifest (its measured k of every rule among the rest) of a release with split strata
    equals the DuckDB release's, and so do the values."""
    df = _source(360, 4)
    write_parquet(df, tmp_path / "src.parquet")
    columns = {**COLUMNS, "w": {"method": "efd_round", "c": 3}}
    docs = [{"source": {"files": "src.parquet", "key": "id"}, "output": {"database": out, "table": "t"},
             "masking": {"strata": ["s"]}, "columns": columns, "groups": GROUPS} for out in ("duck.duckdb", "out")]
    release(parse_spec(docs[0], base=tmp_path))
    con = duckdb.connect(str(tmp_path / "duck.duckdb"), read_only=True)
    duck = con.execute("SELECT * FROM t ORDER BY id").fetchdf()
    duck_manifest = con.execute("SELECT * FROM release_manifest").fetchdf()
    con.close()
    spark_release(parse_spec(docs[1], base=tmp_path), spark, options=SPLIT)
    con = duckdb.connect()
    ours = con.execute(f"SELECT * FROM read_parquet('{tmp_path}/out/t/*.parquet') ORDER BY id").fetchdf()
    con.close()
    pd.testing.assert_frame_equal(ours, duck, check_dtype=False)
    manifest = read_manifest(tmp_path / "out")
    same = [c for c in duck_manifest.columns if c not in ("duckdb_version", "created_at", "spec", "release_id")]
    pd.testing.assert_frame_equal(manifest[same], duck_manifest[same], check_dtype=False)
    measured = int(ours.dropna(subset=["w"]).groupby(["s", "w"], dropna=False).size().min())
    assert manifest.set_index("column_name")["guarantee"]["w"].startswith(f"{measured}-anonymity of w")
