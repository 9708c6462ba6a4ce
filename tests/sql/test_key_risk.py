"""The SQL forms of the risk of key combinations (sql/65_keys.sql, duckdb_sdc.sql.keys) against the numpy
layer and the slow references on random tables with NULL keys of several types, strata and weights;
sdcMicro 5.8.1's figures on testdata (measured with R beside these tests, docs/methods/key-risk.md),
also after its local suppression (tests/sdcmicro_testdata_suppressed.csv: the values sdcMicro's
localSuppression set to NA at k = 2, 3, 5); and the refusals of bad input."""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

import duckdb_sdc
import reference_keys as ref
from duckdb_sdc import datasets
from duckdb_sdc.measures import keys as km

KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
SUPPRESSED = Path(__file__).resolve().parents[1] / "sdcmicro_testdata_suppressed.csv"
# sdcMicro 5.8.1 on testdata, weight sampling_weight: sum fk, sum fk^2, sum Fk, sum of indivRisk's rk, max rk
# (freqCalc and indivRisk(method = "approx"); after localSuppression(k) of the seven keys with its default
# importance, for k = 2, 3, 5)
SDCMICRO = {
    None: (275484, 27791234, 27548400, 10.778298918734835, 0.046516870565536286),
    2: (287988, 29529960, 28798800, 3.0822605477319303, 0.0096311427215602409),
    3: (301384, 31579708, 30138400, 2.1208039565636674, 0.0049751243781094535),
    5: (325154, 36371576, 32515400, 1.5269515010116697, 0.0024937655860349131),
}


def suppressed_testdata(k: int | None) -> pd.DataFrame:
    td = datasets.load("testdata")
    td.insert(0, "id", np.arange(len(td)))
    if k is None:
        return td
    na = pd.read_csv(SUPPRESSED)
    na = na[na["k"] == k]
    td[KEYS] = td[KEYS].astype("Int64")
    for key, rows in na.groupby("key")["row"]:
        td.loc[rows.to_numpy(), key] = pd.NA
    return td


@pytest.fixture(scope="module")
def con():
    c = duckdb_sdc.connect(threads=2)
    for k in (None, 2, 3, 5):
        frame = suppressed_testdata(k)
        c.register("frame", frame)
        c.execute(f"CREATE TABLE td{'' if k is None else k} AS SELECT * FROM frame")
        c.unregister("frame")
    yield c
    c.close()


@pytest.mark.parametrize("k", [None, 2, 3, 5])
def test_testdata_equals_sdcmicro(con, k):
    table = f"td{'' if k is None else k}"
    sfk, sfk2, sFk, srisk, mrisk = con.execute(
        f"SELECT sum(sample_fk), sum(sample_fk * sample_fk), sum(population_fk), fsum(individual_risk), "
        f"max(individual_risk) FROM individual_risk_table('{table}', {KEYS}, 'sampling_weight')").fetchone()
    expected = SDCMICRO[k]
    assert (sfk, sfk2) == expected[:2]
    assert sFk == pytest.approx(expected[2], rel=1e-15)
    assert srisk == pytest.approx(expected[3], rel=1e-13) and mrisk == pytest.approx(expected[4], rel=1e-14)
    summary = con.execute(f"SELECT * FROM global_risk_summary('{table}', {KEYS}, 'sampling_weight')").fetchdf()
    assert summary["expected_reidentifications"][0] == pytest.approx(expected[3], rel=1e-13)
    assert summary["global_risk"][0] == pytest.approx(expected[3] / 4580, rel=1e-13)
    frame = con.execute(f"SELECT * FROM {table} ORDER BY id").fetchdf()
    risk = km.individual_risk(frame[KEYS], frame["sampling_weight"])
    assert float(risk.risk.sum()) == pytest.approx(expected[3], rel=1e-13)
    assert (int(risk.fk.sum()), int((risk.fk ** 2).sum())) == expected[:2]


def test_population_frequencies_equal_freqcalc_with_suppressed_values(con):
    got = con.execute(f"SELECT sum(sample_fk), sum(sample_fk * sample_fk), sum(population_fk) "
                      f"FROM population_frequencies_table('td3', {KEYS}, 'sampling_weight')").fetchone()
    assert got[:2] == SDCMICRO[3][:2] and got[2] == pytest.approx(SDCMICRO[3][2], rel=1e-15)


def _random_table(rng, n: int, m: int, null_share: float) -> pd.DataFrame:
    cols = {"id": np.arange(n)}
    for j in range(m):
        values = rng.integers(0, 3, n)
        col = pd.Series(values).map({0: "x", 1: "y", 2: "z"}) if j % 2 else pd.Series(values, dtype="Int64")
        col = col.astype(object).where(rng.random(n) >= null_share, None)
        cols[f"k{j}"] = col
    cols["g"] = rng.choice(["a", "b", None], n)
    cols["w"] = rng.choice([1.0, 1.5, 2.0, 10.0, 250.0], n)
    return pd.DataFrame(cols)


@pytest.mark.parametrize("seed", range(12))
def test_sql_equals_numpy_and_pairwise_matching(seed):
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(1, 40)), int(rng.integers(1, 4))
    frame = _random_table(rng, n, m, [0.0, 0.2, 0.5][seed % 3])
    keys = [f"k{j}" for j in range(m)]
    c = duckdb_sdc.connect(threads=1)
    c.register("frame", frame)
    c.execute("CREATE TABLE r AS SELECT id, " + ", ".join(f"{k}::{'BIGINT' if j % 2 == 0 else 'VARCHAR'} AS {k}"
                                                          for j, k in enumerate(keys)) + ", g, w FROM frame")
    rows = list(frame[keys].itertuples(index=False, name=None))
    for nulls in ("any", "category"):
        for strata in (None, "g"):
            st = None if strata is None else [None if pd.isna(v) else v for v in frame["g"]]
            fk, Fk = ref.frequencies(rows, list(frame["w"]), st, nulls)
            sql = (f"SELECT id, sample_fk, population_fk, individual_risk FROM individual_risk_table('r', {keys}, 'w', "
                   f"strata := {'NULL' if strata is None else repr(strata)}, nulls := '{nulls}') ORDER BY id")
            got = c.execute(sql).fetchall()
            assert [g[1] for g in got] == fk
            assert [g[2] for g in got] == pytest.approx(Fk, rel=1e-12)
            assert [g[3] for g in got] == pytest.approx([ref.benedetti_franconi(a, b) for a, b in zip(fk, Fk)],
                                                        rel=1e-12)
            pf = c.execute(f"SELECT sample_fk, population_fk FROM population_frequencies_table('r', {keys}, 'w', "
                           f"strata := {'NULL' if strata is None else repr(strata)}, nulls := '{nulls}') "
                           "ORDER BY id").fetchall()
            assert pf == [(g[1], g[2]) for g in got]
            numpy = km.individual_risk(frame[keys], frame["w"], strata=None if strata is None else frame[[strata]],
                                       nulls=nulls)
            assert numpy.fk.tolist() == fk and numpy.risk.tolist() == pytest.approx([g[3] for g in got], rel=1e-14)
            summary = c.execute(f"SELECT * FROM global_risk_summary('r', {keys}, 'w', "
                                f"strata := {'NULL' if strata is None else repr(strata)}, nulls := '{nulls}')").fetchdf()
            assert summary["records"].sum() == n
            assert summary["expected_reidentifications"].sum() == pytest.approx(sum(g[3] for g in got), rel=1e-12)
            assert summary["sample_uniques"].sum() == sum(1 for f in fk if f == 1)
    unweighted = c.execute(f"SELECT individual_risk, sample_fk FROM individual_risk_table('r', {keys}, NULL)").fetchall()
    assert all(r == pytest.approx(1 / f) for r, f in unweighted)
    c.close()


def test_risk_near_equal_frequencies_loses_no_digits():
    # F_k barely above f_k: p/(1-p) is huge and the fk = 2 formula cancels; the limits are 1 and 1/2
    fk = np.array([1, 2, 1, 2])
    Fk = np.array([1 + 1e-12, 2 + 2e-12, 1 + 1e-6, 2 + 2e-6])
    risk = km.benedetti_franconi(fk, Fk)
    assert risk.tolist() == pytest.approx([1 - 5e-13, 0.5 - 1e-12 / 3, 1 - 5e-7, 0.5 - 1e-6 / 3], rel=1e-12)
    c = duckdb_sdc.connect(threads=1)
    got = c.execute("SELECT __sdc_bf_risk(f, p) FROM (VALUES (1, 1 + 1e-12), (2, 2 + 2e-12), (1, 1 + 1e-6), "
                    "(2, 2 + 2e-6), (3, 7.5), (1, 20.0), (2, 20.0)) v(f, p)").fetchall()
    expected = km.benedetti_franconi(np.array([1, 2, 1, 2, 3, 1, 2]),
                                     np.array([1 + 1e-12, 2 + 2e-12, 1 + 1e-6, 2 + 2e-6, 7.5, 20.0, 20.0]))
    assert [g[0] for g in got] == pytest.approx(expected.tolist(), rel=1e-13)
    assert expected[4:].tolist() == pytest.approx([ref.benedetti_franconi(3, 7.5), ref.benedetti_franconi(1, 20.0),
                                                   ref.benedetti_franconi(2, 20.0)], rel=1e-14)
    c.close()


@pytest.fixture
def bad():
    c = duckdb_sdc.connect(threads=1)
    c.execute("CREATE TABLE b AS SELECT * FROM (VALUES (1, 'a', 1, 2.0, 'p'), (2, 'a', 2, 0.0, 'q'), "
              "(3, 'b', 1, -1.0, 'p'), (4, 'b', 2, NULL, 'q'), (5, 'a', 1, 'nan'::DOUBLE, 'p'), "
              "(6, 'a', 2, 0.5, 'q'), (7, 'b', 1, -3.0, 'p')) v(id, k1, k2, w, s)")
    c.execute("CREATE TABLE good AS SELECT id, k1, k2, 1.0 + id AS w, s FROM b")
    c.execute("CREATE TABLE small AS SELECT id, k1, k2, 0.5 AS w FROM b")
    c.execute("CREATE TABLE empty AS SELECT * FROM good LIMIT 0")
    yield c
    c.close()


@pytest.mark.parametrize("sql, words", [
    ("SELECT * FROM individual_risk_table('good', ['k1', 'nope'], 'w')",
     'Table "individual_risk_table: keys of table good" does not have a column named "nope"'),
    ("SELECT * FROM individual_risk_table('good', ['k1'], 'nope')",
     'Table "individual_risk_table: weight of table good" does not have a column named "nope"'),
    ("SELECT * FROM global_risk_summary('good', ['k1'], 'w', strata := 'nope')",
     'Table "global_risk_summary: strata of table good" does not have a column named "nope"'),
    ("SELECT * FROM individual_risk_table('b', ['k1', 'k2'], 'w')",
     "individual_risk_table: weight column w must hold finite numbers > 0 (NULL is refused: every record takes "
     "part); 5 are not: NULL, -3.0, -1.0, 0.0, nan"),
    ("SELECT * FROM population_frequencies_table('b', ['k1'], 'w')",
     "population_frequencies_table: weight column w must hold finite numbers > 0"),
    ("SELECT * FROM individual_risk_table('good', ['k1'], 's')",
     "individual_risk_table: weight column s must be numeric, got VARCHAR"),
    ("SELECT * FROM individual_risk_table('small', ['k1', 'k2'], 'w')",
     "individual_risk_table: weights make the estimated population frequency F_k = "),
    ("SELECT * FROM individual_risk_table('empty', ['k1'], 'w')",
     "individual_risk_table: table empty has no records; the measures need at least one record"),
    ("SELECT * FROM global_risk_summary('empty', ['k1'], NULL)", "global_risk_summary: table empty has no records"),
    ("SELECT * FROM weighted_risk_summary('empty', ['k1'], 'w', 10)", "weighted_risk_summary: table empty has no"),
    ("SELECT * FROM individual_risk_table('good', ['k1'], 'w', nulls := 'none')",
     "individual_risk_table: nulls must be one of 'any', 'category', got 'none'"),
    ("SELECT * FROM individual_risk_table('good', [], 'w')", "individual_risk_table: keys must name at least one"),
])
def test_bad_input_is_refused_naming_function_and_parameter(bad, sql, words):
    with pytest.raises(duckdb.Error) as info:
        bad.execute(sql).fetchall()
    assert words in str(info.value), str(info.value)


def test_suda2_on_testdata_equals_sdcmicro(con):
    # sdcMicro 5.8.1: suda2(testdata[, keys]): scores sum 4890 over 157 records, largest 720; DIS-SUDA sum
    # 9.8310909212751056, largest 0.67814255374299959 (its DIS step in float32: agreement to 1e-6)
    got = con.execute(f"SELECT sum(suda_score), count(*) FILTER (WHERE suda_score > 0), max(suda_score), "
                      f"sum(dis_suda_score), max(dis_suda_score), sum(len(msus)) "
                      f"FROM suda2_table('td', {KEYS})").fetchone()
    assert got[:3] == (4890.0, 157, 720.0)
    assert got[3] == pytest.approx(9.8310909212751056, rel=1e-6) and got[4] == pytest.approx(0.67814255374299959, rel=1e-6)
    frame = con.execute("SELECT * FROM td ORDER BY id").fetchdf()
    numpy = km.suda2(frame[KEYS])
    assert sum(len(m) for m in numpy.msus) == got[5]


@pytest.mark.parametrize("seed", range(6))
def test_suda2_table_equals_numpy(seed):
    rng = np.random.default_rng(100 + seed)
    n, m = int(rng.integers(1, 60)), int(rng.integers(1, 5))
    frame = _random_table(rng, n, m, [0.0, 0.15][seed % 2])
    keys = [f"k{j}" for j in range(m)]
    c = duckdb_sdc.connect(threads=1)
    c.register("frame", frame)
    c.execute("CREATE TABLE r AS SELECT * FROM frame")
    for nulls in ("any", "category"):
        for strata in (None, "g"):
            got = c.execute(f"SELECT msus, suda_score, dis_suda_score FROM suda2_table('r', {keys}, "
                            f"strata := {'NULL' if strata is None else repr(strata)}, nulls := '{nulls}', "
                            f"dis_fraction := 0.2) ORDER BY id").fetchall()
            numpy = km.suda2(frame[keys], strata=None if strata is None else frame[[strata]], nulls=nulls,
                             dis_fraction=0.2)
            assert [[tuple(x) for x in g[0]] for g in got] == numpy.msus
            assert [g[1] for g in got] == numpy.suda_score.tolist()
            assert [g[2] for g in got] == pytest.approx(numpy.dis_suda_score.tolist(), rel=1e-14)
    c.close()


def test_l_diversity_on_testdata_equals_sdcmicro(con):
    # sdcMicro 5.8.1: ldiversity(testdata, keyVars = the seven keys, ldiv_index = "hhcivil"): the
    # per-record Distinct_Ldiversity sums to 7762 and Entropy_Ldiversity to 5069.243074157015
    got = con.execute(f"SELECT sum(distinct_l_diversity), sum(entropy_l_diversity), min(distinct_l_diversity) "
                      f"FROM l_diversity_table('td', {KEYS}, 'hhcivil')").fetchone()
    assert got[0] == 7762 and got[1] == pytest.approx(5069.243074157015, rel=1e-13) and got[2] == 1


@pytest.mark.parametrize("seed", range(8))
def test_l_diversity_and_t_closeness_tables_equal_numpy_and_reference(seed):
    rng = np.random.default_rng(200 + seed)
    n, m = int(rng.integers(1, 50)), int(rng.integers(1, 4))
    frame = _random_table(rng, n, m, [0.0, 0.25][seed % 2])
    frame["s"] = pd.Series(rng.choice(["p", "q", "r", None], n), dtype=object)
    keys = [f"k{j}" for j in range(m)]
    c = duckdb_sdc.connect(threads=1)
    c.register("frame", frame)
    c.execute("CREATE TABLE r AS SELECT * FROM frame")
    rows = list(frame[keys].itertuples(index=False, name=None))
    sens = list(frame["s"])
    for nulls in ("any", "category"):
        for strata in (None, "g"):
            arg = "NULL" if strata is None else repr(strata)
            st = None if strata is None else [None if pd.isna(v) else v for v in frame["g"]]
            ld = c.execute(f"SELECT distinct_l_diversity, entropy_l_diversity FROM l_diversity_table('r', {keys}, 's', "
                           f"strata := {arg}, nulls := '{nulls}') ORDER BY id").fetchall()
            distinct, entropy = ref.l_diversity(rows, sens, nulls, st)
            assert [g[0] for g in ld] == distinct
            assert [g[1] for g in ld] == pytest.approx(entropy, rel=1e-12)
            tc = c.execute(f"SELECT t_closeness FROM t_closeness_table('r', {keys}, 's', strata := {arg}, "
                           f"nulls := '{nulls}') ORDER BY id").fetchall()
            assert [g[0] for g in tc] == pytest.approx(ref.t_closeness(rows, sens, nulls, st), abs=1e-12)
            numpy = km.t_closeness(frame[keys], frame["s"], strata=None if strata is None else frame[[strata]],
                                   nulls=nulls)
            assert numpy.tolist() == pytest.approx([g[0] for g in tc], abs=1e-14)
    c.close()


@pytest.mark.parametrize("sql, words", [
    ("SELECT * FROM l_diversity_table('good', ['k1', 'k2'], 'k2')",
     "l_diversity_table: sensitive column 'k2' is also a key; a key's value is known to the intruder"),
    ("SELECT * FROM t_closeness_table('good', ['k1', 'K2'], 'k2')", "t_closeness_table: sensitive column 'k2' is also a key"),
    ("SELECT * FROM t_closeness_table('good', ['k1'], 'nope')",
     'Table "t_closeness_table: sensitive of table good" does not have a column named "nope"'),
    ("SELECT * FROM l_diversity_table('empty', ['k1'], 's')", "l_diversity_table: table empty has no records"),
    ("SELECT * FROM suda2_table('empty', ['k1'])", "suda2_table: table empty has no records"),
    ("SELECT * FROM suda2_table('good', ['k1', 'nope'])", 'Table "suda2_table: keys of table good" does not have'),
    ("SELECT * FROM suda2_table('good', ['k1'], dis_fraction := 1)", "suda2_table: dis_fraction must be"),
    ("SELECT * FROM suda2_table('good', ['k1'], scores := 'x')", "suda2_table: scores must be one of 'elliot', 'suda2'"),
])
def test_more_bad_input_is_refused(bad, sql, words):
    with pytest.raises(duckdb.Error) as info:
        bad.execute(sql).fetchall()
    assert words in str(info.value), str(info.value)


@pytest.mark.parametrize("seed", range(6))
def test_utility_tables_equal_numpy(seed):
    rng = np.random.default_rng(300 + seed)
    n, m = int(rng.integers(1, 50)), int(rng.integers(1, 4))
    frame = _random_table(rng, n, m, 0.1)
    keys = [f"k{j}" for j in range(m)]
    released = frame.copy()
    for k in keys:  # suppress some values, merge some categories
        released[k] = released[k].where(rng.random(n) > 0.3, None).map(lambda v: v if v in (None, "x", 0) else v)
    c = duckdb_sdc.connect(threads=1)
    c.register("o_frame", frame)
    c.register("r_frame", released.sample(frac=1.0, random_state=seed))  # another row order: paired by id
    c.execute("CREATE TABLE o AS SELECT * FROM o_frame")
    c.execute("CREATE TABLE r AS SELECT * FROM r_frame")
    ordered = c.execute("SELECT * FROM r ORDER BY id").fetchdf()
    sup = km.suppression(frame[keys], ordered[keys])
    got = c.execute(f"SELECT column_name, records, \"values\", suppressed FROM suppression_table('o', 'r', 'id', {keys})").fetchall()
    assert got == [(k, n, *sup.per_column[k][:2]) for k in keys]
    per = c.execute(f"SELECT suppressed, suppressed_share FROM record_suppression_table('o', 'r', 'id', {keys}) "
                    "ORDER BY id").fetchall()
    assert [p[0] for p in per] == sup.per_record.tolist()
    assert [np.nan if p[1] is None else p[1] for p in per] == pytest.approx(sup.record_share.tolist(), nan_ok=True)
    for strata in (None, "g"):
        arg = "NULL" if strata is None else repr(strata)
        loss = c.execute(f"SELECT * FROM class_loss_summary('r', {keys}, strata := {arg})").fetchdf().iloc[0].to_dict()
        expected = km.class_loss(ordered[keys], strata=None if strata is None else ordered[[strata]])
        for name, value in expected.items():
            assert loss[name] == pytest.approx(value, rel=1e-14), name
        nue = c.execute(f"SELECT column_name, non_uniform_entropy FROM non_uniform_entropy_table('o', 'r', 'id', {keys}, "
                        f"strata := {arg})").fetchall()
        expected = km.non_uniform_entropy(frame[keys], ordered[keys], strata=None if strata is None else frame[[strata]])
        assert [k for k, _ in nue] == keys
        assert [v for _, v in nue] == pytest.approx([expected[k] for k in keys], abs=1e-9)
    c.close()


def test_unpaired_records_are_refused(bad):
    bad.execute("CREATE TABLE r1 AS SELECT * FROM good WHERE id <> 3 UNION ALL SELECT * FROM good WHERE id = 1")
    for f in ("suppression_table", "record_suppression_table", "non_uniform_entropy_table"):
        with pytest.raises(duckdb.Error, match=f"{f}: original and released must hold the same records, one per value of "
                                               r"the key id \(not NULL\); 2 keys do not: 1, 3"):
            bad.execute(f"SELECT * FROM {f}('good', 'r1', 'id', ['k1'])").fetchall()
    with pytest.raises(duckdb.Error, match="class_loss_summary: table empty has no records"):
        bad.execute("SELECT * FROM class_loss_summary('empty', ['k1'])").fetchall()
