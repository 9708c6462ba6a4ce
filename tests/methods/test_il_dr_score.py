"""The IL-DR score of the rounding paper with its two documented variants (the interval-disclosure
term as sdcMicro's dRisk code counts it, and sdcMicro's old IL1 constant), against the slow
references of tests/reference_measures.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

import reference_measures as ref
from duckdb_sdc import SdcError
from duckdb_sdc import measures as m
from duckdb_sdc.measures.risk import standardise


def _pairs(seed):
    rng = np.random.default_rng(seed)
    for _ in range(40):
        n, p = int(rng.integers(3, 40)), int(rng.integers(1, 5))
        x = rng.normal(size=(n, p)) * 10.0 ** rng.integers(-2, 3)
        xm = x + rng.normal(size=(n, p)) * rng.choice([0.01, 0.3, 2.0]) * x.std(axis=0)
        yield x, xm


def _reference(x, xm, k, max_outside, il1s_factor):
    Z, ZM = standardise("t", x, xm)
    ddr = ref.linkage_credit(Z, ZM) if Z.shape[1] else 1.0 / x.shape[0]
    return 0.25 * (ref.il_metrics(x, xm)["composite"] + 100 * il1s_factor * ref.il1s(x, xm) + 100 * ddr
                   + 100 * ref.interval_disclosure(x, xm, k, max_outside))


@pytest.mark.parametrize("max_outside, form, factor", [(0, "yancey", 1.0), (1, "yancey", 1.0),
                                                       (0, "sdcmicro", 2.0), (1, "sdcmicro", 2.0)])
def test_score_variants_equal_the_reference(max_outside, form, factor):
    for x, xm in _pairs(1):
        got = m.il_dr_score(x, xm, 0.1, max_outside=max_outside, il1s_form=form)
        assert got == pytest.approx(_reference(x, xm, 0.1, max_outside, factor), rel=1e-10)


def test_the_default_is_the_literature_form_and_evaluate_reports_it():
    x, xm = next(_pairs(2))
    assert m.il_dr_score(x, xm) == m.il_dr_score(x, xm, 0.05, max_outside=0, il1s_form="yancey")
    rows = {(r.measure, r.column): r.value for r in m.evaluate(x, xm)}
    assert rows["il_dr_score", None] == pytest.approx(m.il_dr_score(x, xm), rel=1e-12)


def test_the_dRisk_variant_counts_every_record_of_one_column_at_risk():
    x = np.arange(10.0)
    xm = x[::-1].copy()
    score_literature = m.il_dr_score(x, xm, max_outside=0)
    score_sdcmicro = m.il_dr_score(x, xm, max_outside=1)
    idr_literature = m.interval_disclosure(x, xm)
    assert m.interval_disclosure(x, xm, max_outside=1) == 1.0
    assert score_sdcmicro - score_literature == pytest.approx(25 * (1 - idr_literature))


def test_the_sdcmicro_il1s_term_is_twice_yancey():
    x, xm = next(_pairs(3))
    gap = m.il_dr_score(x, xm, il1s_form="sdcmicro") - m.il_dr_score(x, xm)
    assert gap == pytest.approx(25 * m.il1s(x, xm), rel=1e-12)
    assert math.isclose(gap, 25 * ref.il1s(x, xm), rel_tol=1e-10)


def test_bad_options_are_refused():
    x, xm = next(_pairs(4))
    with pytest.raises(SdcError, match="il_dr_score: il1s_form must be one of 'yancey', 'sdcmicro', 'sum', got 'sdc'"):
        m.il_dr_score(x, xm, il1s_form="sdc")
    with pytest.raises(SdcError, match="il_dr_score: max_outside must be an integer >= 0, got -1"):
        m.il_dr_score(x, xm, max_outside=-1)


def test_the_sum_form_takes_sdcmicros_summed_il1s_as_the_term():
    """il1s_form = 'sum': the term is dUtility's IL1s since sdcMicro 5.0.3, the un-normalised sum, as it is."""
    for x, xm in _pairs(5):
        got = m.il_dr_score(x, xm, 0.05, max_outside=1, il1s_form="sum")
        want = _reference(x, xm, 0.05, 1, x.size / 100)  # 100 * factor * mean = the sum
        assert got == pytest.approx(want, rel=1e-10)
        assert got - m.il_dr_score(x, xm, 0.05, max_outside=1) == pytest.approx(
            0.25 * (m.il1s_sum(x, xm) - 100 * m.il1s(x, xm)), rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("max_outside, form", [(0, "yancey"), (1, "yancey"), (1, "sdcmicro"), (1, "sum"), (0, "sum")])
def test_sql_takes_max_outside_and_il1s_form_as_python_does(con, max_outside, form):
    """Issue 33 item 5: il_dr_score in SQL refused max_outside and il1s_form. One group and many small
    groups (the stacked path) give what Python gives."""
    rng = np.random.default_rng(7)
    x = rng.normal(size=(90, 2)) * [3.0, 50.0]
    xm = x + rng.normal(size=x.shape) * [1.0, 20.0]
    g = np.repeat(np.arange(9), 10)
    con.execute("CREATE OR REPLACE TABLE p AS SELECT * FROM (SELECT unnest(?) AS g, unnest(?) AS a, unnest(?) AS b, "
                "unnest(?) AS am, unnest(?) AS bm)", [g.tolist(), x[:, 0].tolist(), x[:, 1].tolist(),
                                                     xm[:, 0].tolist(), xm[:, 1].tolist()])
    args = f"max_outside := {max_outside}, il1s_form := '{form}'"
    whole = con.execute(f"SELECT il_dr_score([a, b], [am, bm], {args}) FROM p").fetchone()[0]
    assert whole == pytest.approx(m.il_dr_score(x, xm, max_outside=max_outside, il1s_form=form), rel=1e-12)
    groups = con.execute(f"SELECT g, il_dr_score([a, b], [am, bm], {args}) FROM p GROUP BY g ORDER BY g").fetchall()
    for k, value in groups:
        part = g == k
        assert value == pytest.approx(m.il_dr_score(x[part], xm[part], max_outside=max_outside, il1s_form=form),
                                      rel=1e-9)
    with pytest.raises(Exception, match="il_dr_score: il1s_form must be one of 'yancey', 'sdcmicro', 'sum', got 'x'"):
        con.execute("SELECT il_dr_score([a, b], [am, bm], il1s_form := 'x') FROM p").fetchall()
