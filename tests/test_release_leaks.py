"""Issue 13, "No silent leaks": one test per way identifiable data got out of a release (each failed
on the code before the fix), numbered as in the issue."""

from __future__ import annotations

import numpy as np
import pytest
from release_helpers import base_doc, people, write_db, write_spec

import duckdb_sdc
from duckdb_sdc.release import SpecError, load_spec, release

MASKING_WITH_K = ("mdav_round", "vmdav_round", "oma_round", "ranking_round")


@pytest.fixture
def source(tmp_path):
    df = people()
    write_db(tmp_path / "src.duckdb", "people", df)
    return tmp_path, df


# 1. k = 1 masks nothing -------------------------------------------------------------------------


@pytest.mark.parametrize("method", MASKING_WITH_K)
def test_1_k_of_one_is_refused_by_a_release(source, method):
    folder, _ = source
    doc = base_doc()
    doc["columns"]["income"] = {"method": method, "k": 1}
    with pytest.raises(SpecError, match=rf"columns\.income: {method}: k must be >= 2 \(a group of one record "
                                        r"releases its value unchanged\), got 1"):
        release(load_spec(write_spec(folder, doc)))
    assert not (folder / "out" / "release.duckdb").exists()


@pytest.mark.parametrize("call", [f"{m}([1, 2, 3.5], 1)" for m in MASKING_WITH_K]
                         + ["mdav_multi_round([[1.0], [2.0], [4.0]], 1)", "mondrian_round([[1.0], [2.0], [4.0]], 1)",
                            "box_release([[1.0], [2.0], [4.0]], 1, 'mean(1)')"])
def test_1_k_of_one_is_refused_in_sql(call):
    con = duckdb_sdc.connect()
    name = call.split("(")[0]
    with pytest.raises(Exception, match=rf"{name}: k must be >= 2"):
        con.execute(f"SELECT {call}").fetchall()
    con.close()


def test_1_noise_mechanisms_keep_k_of_one():
    con = duckdb_sdc.connect()
    for call in ("dp_um([1, 2, 3.5], 1, 1.0, 0, 10)", "idp_ls([1, 2, 3.5], 1, 1.0, 0, 10)"):
        assert len(con.execute(f"SELECT {call}").fetchall()[0][0]) == 3
    con.close()


# 2. 'auto' resolving to k = 1 -------------------------------------------------------------------


def test_2_auto_never_resolves_to_a_group_of_one():
    con = duckdb_sdc.connect()
    values = [float(v) for v in range(200)] + [1e6]
    c, k = con.execute("SELECT fd_intervals(v), fd_group_size(v) FROM (SELECT unnest(?::DOUBLE[]) v)",
                       [values]).fetchall()[0]
    assert (c, k) == (29289, 2)  # the rule gives c >= n, so ceil(n / c) would be 1
    out = con.execute("SELECT mdav_round(?::DOUBLE[], 'auto')", [values]).fetchall()[0][0]
    con.close()
    released, counts = np.unique(out, return_counts=True)
    assert counts.min() >= 2  # every released value is shared by at least two records
    assert not set(released) & {1e6}  # the outlier is not released as itself


def test_2_auto_refuses_a_single_value():
    con = duckdb_sdc.connect()
    with pytest.raises(Exception, match=r"mdav_round: k = 2 is larger than the number of non-NULL values \(1\)"):
        con.execute("SELECT mdav_round([5.0], 'auto')").fetchall()
    con.close()


# 6. DP-UM's per-record release is not epsilon-DP ----------------------------------------------


def _partition_event_frequency(con, x1: float, runs: int) -> float:
    """How often, over `runs` releases, ids 1, 2, 3 share one value and id 4 has another, with
    dp_um_table(t, 'x', 3, 1.0, 0, 10) of ids 1..6 and x = x1, 2, ..., 6."""
    con.execute("CREATE OR REPLACE TABLE t AS SELECT i AS id, CASE WHEN i = 1 THEN ? ELSE i END::DOUBLE AS x "
                "FROM range(1, 7) r(i)", [x1])
    hits = 0
    for _ in range(runs):
        v = dict(con.execute("SELECT id, x FROM dp_um_table('t', 'x', 3, 1.0, 0, 10)").fetchall())
        hits += v[1] == v[2] == v[3] != v[4]
    return hits / runs


def test_6_dp_um_records_sharing_a_value_reveal_the_partition_and_the_guarantee_says_so():
    from duckdb_sdc import guarantees
    from duckdb_sdc.sql.registry import REGISTRY

    con = duckdb_sdc.connect()
    assert _partition_event_frequency(con, 1.0, 300) > 0.85  # about 0.95
    assert _partition_event_frequency(con, 10.0, 300) == 0.0  # id 1 is now in the upper cluster
    con.close()
    # so no epsilon holds for the per-record release: the words say what does
    g = guarantees.of("dp_um")
    assert g.model == guarantees.DP_FIXED_CLUSTERING
    assert "only for the fixed clustering" in g.statement and "reveal the partition" in g.statement
    doc = next(f.doc for f in REGISTRY if f.name == "dp_um")
    assert g.statement in doc and "also when a record's change moves values between clusters" not in doc
    assert guarantees.of(guarantees.CENTROIDS).model == guarantees.DP


# 8. a source column with a reserved internal name --------------------------------------------


@pytest.mark.parametrize("call", [
    "mdav_round_table('t', 'x', 3)", "efd_round_table('t', 'x', 3)", "dp_um_table('t', 'x', 3, 1.0, 0, 1e6)",
    "mdav_multi_round_table('t', ['x', 'y'], 3)", "box_release_table('t', ['x', 'y'], 3, 'mean(1)')",
    "mdav_round_table('t', 'x', 3, strata := 'g')"])
@pytest.mark.parametrize("reserved", ["__sdc_v", "__SDC_R", "__sdc_anything"])
def test_8_a_reserved_column_name_is_refused_and_never_reaches_a_masked_column(call, reserved):
    con = duckdb_sdc.connect()
    con.execute("SET enable_progress_bar = false")
    con.execute(f'CREATE TABLE t AS SELECT i AS id, i % 2 AS g, i * 1.5 AS x, i * 2.5 AS y, '
                f'(i * 1000 + 7)::DOUBLE AS "{reserved}" FROM range(12) r(i)')
    name = call.split("(")[0]
    with pytest.raises(Exception, match=rf"{name}: table t has a column named '{reserved}'; names starting with "
                                        r"__sdc_ are reserved for duckdb_sdc's internal columns: rename it"):
        con.execute(f"SELECT * FROM {call}").fetchall()
    con.close()
