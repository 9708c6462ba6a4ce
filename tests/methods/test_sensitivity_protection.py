"""Protection levels, secondary suppression and the audit of suppression patterns (tau-ARGUS), against
exact references: every pattern a test produces is audited by the LP audit and the vertex reference."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from duckdb_sdc import methods
from duckdb_sdc._validate import SdcError
from duckdb_sdc.methods import protection
from duckdb_sdc.methods import sensitivity as sv
from duckdb_sdc import datasets
from reference_protection import (
    cheapest_reference,
    interval_reference,
    level_reference,
    protected_reference,
    sensitive_reference,
)

DATA = datasets.path("tarragona").parent  # the bundled reference data (duckdb_sdc.datasets)


def _rule_dict(rule: sv.Rule) -> dict:
    if rule.kind == "p%":
        return {"kind": "p%", "p": rule.p}
    if rule.kind == "pq":
        return {"kind": "pq", "p": rule.p, "q": rule.q}
    if rule.kind == "dominance":
        return {"kind": "dominance", "n": rule.n, "r": rule.r}
    return {"kind": "threshold", "n": rule.n, "safety": rule.safety}


def audited(X, labels, out, absolute):
    """The LP audit of a pattern: its intervals equal the closed form's, and every primary cell that
    the pattern reports protected is covered by its protection levels (HiGHS's tolerance aside)."""
    low, high = protection.audit_suppression(X, labels, out.suppressed, absolute=absolute)
    mask = out.suppressed
    assert np.array_equal(np.isnan(low), ~mask) and np.array_equal(np.isnan(high), ~mask)
    scale = float(np.abs(X).sum())
    np.testing.assert_allclose(low[mask], out.low[mask], rtol=0, atol=1e-7 * scale)
    np.testing.assert_allclose(high[mask], out.high[mask], rtol=0, atol=1e-7 * scale)
    _, lab = np.unique(labels, return_inverse=True)
    for c, j in zip(*np.nonzero(out.primary & ~out.unprotected)):
        y = X[lab == c, j].sum()
        assert high[c, j] >= y + min(out.upper[c, j], high[c, j] - y) - 1e-7 * scale
        assert low[c, j] <= y - out.lower[c, j] + 1e-7 * scale
    return low, high


# ---------------------------------------------------------------------------------------------
# the reproduced failures (issue 33)


def _nearest_cluster_pattern(X, labels, primary):
    """The pattern before protection levels: for each primary cell, the same attribute of the nearest
    cluster (standardised centroids) whose cell is not primary."""
    from reference import nearest_cluster_reference

    pattern = primary.copy()
    for c, j in zip(*np.nonzero(primary)):
        others = [o for o in range(primary.shape[0]) if o != c and not primary[o, j]]
        if others:
            pattern[nearest_cluster_reference(X, labels, c, others), j] = True
    return pattern


def test_a_dominant_contribution_among_zeros_gets_its_protection_level():
    # clusters of five zeros, [119, 0, 0, 0, 0] and [50 .. 90] under the p% rule at 0.2: the nearest
    # cluster of the dominated one is the zeros, so the old secondary cell added nothing: with the
    # total published the audit bounded 119 to [119, 119], where tau-ARGUS requires 23.8 either way
    X = np.array([0, 0, 0, 0, 0, 119, 0, 0, 0, 0, 50, 60, 70, 80, 90], float)[:, None]
    labels = np.repeat([0, 1, 2], 5)
    rule = sv.p_percent_rule(0.2)
    out = protection.suppress(X, labels, rule)
    old = _nearest_cluster_pattern(X, labels, out.primary)
    assert old[:, 0].tolist() == [True, True, False]
    low, high = protection.audit_suppression(X, labels, old)
    assert (low[1, 0], high[1, 0]) == (119.0, 119.0)  # no protection at all
    assert out.primary[:, 0].tolist() == [False, True, False]
    assert out.upper[1, 0] == out.lower[1, 0] == pytest.approx(23.8, rel=1e-15)
    assert out.secondary[:, 0].tolist() == [False, False, True]
    low, high = audited(X, labels, out, False)
    assert (low[1, 0], high[1, 0]) == (0.0, 469.0)  # [0, 119 + 350]: both levels met
    assert not out.unprotected.any()
    assert np.isnan(out.release[5:]).all() and not np.isnan(out.release[:5]).any()


def test_feasible_intervals_near_the_largest_double_are_the_rescaled_ones():
    """At 2^1017 the cell [50 .. 90] totals 350 x 2^1017, beyond float64: its feasible interval came out
    NaN (inf - inf, with a RuntimeWarning). Now every bound is the normal-range one times 2^1017, inf
    only where that product is beyond float64."""
    X = np.array([0, 0, 0, 0, 0, 119, 0, 0, 0, 0, 50, 60, 70, 80, 90], float)[:, None]
    labels = np.repeat([0, 1, 2], 5)
    rule = sv.p_percent_rule(0.2)
    normal = protection.suppress(X, labels, rule)
    f = 2.0 ** 1017
    with np.errstate(all="raise"):
        big = protection.suppress(X * f, labels, rule)
    suppressed = normal.primary | normal.secondary
    assert suppressed[:, 0].tolist() == [False, True, True]
    for got, want in ((big.low, normal.low), (big.high, normal.high)):
        assert np.isnan(got[~suppressed]).all()
        with np.errstate(over="ignore"):
            assert got[suppressed].tolist() == (want[suppressed] * f).tolist()
    assert normal.low[2, 0] * f == big.low[2, 0] and np.isfinite(big.low[2, 0])


def _tarragona_strata():
    df = pd.read_csv(DATA / "Tarragona.csv")
    return df, np.where(np.arange(len(df)) < len(df) // 2, "a", "b")


def test_tarragona_depreciation_in_stratum_b_is_protected():
    # the release of DEPRECIATION by mdav_round (k = 3) per stratum (the first and the second half of
    # the firms) with cells = { rule = "p_percent", p = 0.2, action = "suppress" }: in stratum b the
    # cell [120, 0, 0] was given a cell of zeros as its secondary: its feasible interval [120, 120]
    df, strata = _tarragona_strata()
    x = df.loc[strata == "b", "DEPRECIATION"].to_numpy(float)
    labels = np.unique(methods.mdav_round(x, 3), return_inverse=True)[1]
    X = x[:, None]
    rule = sv.p_percent_rule(0.2, absolute=True)
    out = protection.suppress(X, labels, rule)
    (a,) = np.flatnonzero(out.primary[:, 0])
    assert sorted(x[labels == a]) == [0.0, 0.0, 120.0]
    old = _nearest_cluster_pattern(X, labels, out.primary)
    low, high = protection.audit_suppression(X, labels, old, absolute=True)
    assert (low[a, 0], high[a, 0]) == (120.0, 120.0)
    assert out.upper[a, 0] == pytest.approx(24.0)
    low, high = audited(X, labels, out, True)
    assert high[a, 0] - 120 >= 24 and 120 - low[a, 0] >= 24 and out.secondary.sum() == 1
    # stratum a: [-119, 0, 0], the 23.8 of the issue (contributions taken absolute)
    x = df.loc[strata == "a", "DEPRECIATION"].to_numpy(float)
    labels = np.unique(methods.mdav_round(x, 3), return_inverse=True)[1]
    out = protection.suppress(x[:, None], labels, rule)
    (a,) = np.flatnonzero(out.primary[:, 0])
    assert sorted(x[labels == a]) == [-119.0, 0.0, 0.0] and out.upper[a, 0] == pytest.approx(23.8)
    low, high = audited(x[:, None], labels, out, True)
    assert high[a, 0] == 0.0 and low[a, 0] == -np.inf  # 0 is the a-priori bound: 119 above -119


# ---------------------------------------------------------------------------------------------
# against the references


RULES = [sv.p_percent_rule(0.2, absolute=True), sv.p_percent_rule(0.25, absolute=True),
         sv.pq_rule(0.25, 0.5, absolute=True), sv.dominance_rule(1, 0.6, absolute=True),
         sv.dominance_rule(2, 0.75, absolute=True), sv.threshold_rule(3, 0.3, absolute=True)]


def _random_table(rng, signs: bool):
    g = int(rng.integers(2, 7))
    sizes = rng.integers(1, 5, g)
    labels = np.repeat(np.arange(g), sizes)
    x = rng.integers(0, 6, labels.size) * rng.choice([1, 1, 1, 20, 60], labels.size)  # ties, zeros, dominants
    if signs:
        x = x * rng.choice([1, 1, 1, -1], labels.size)
    perm = rng.permutation(labels.size)
    return x[perm].astype(float)[:, None], labels[perm]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.describe())
def test_levels_patterns_and_intervals_equal_the_references(rule):
    rng = np.random.default_rng(33)
    ref_rule = _rule_dict(rule)
    checked = protected_any = 0
    for trial in range(40):
        X, labels = _random_table(rng, signs=trial % 3 == 0)
        cells = [X[labels == c, 0].tolist() for c in range(labels.max() + 1)]
        flags = [sensitive_reference(np.abs(cell), ref_rule) for cell in cells]
        levels = {c: level_reference(np.abs(cells[c]), ref_rule) for c in range(len(cells)) if flags[c]}
        primary = [c for c in range(len(cells)) if flags[c]]
        best_count, best_value = cheapest_reference(cells, primary, levels)
        alone = protection.suppress(X, labels, rule, secondary=False)  # the primary cells alone, audited too
        for a in primary:
            lo, hi = interval_reference(cells, primary, a)
            assert (alone.low[a, 0], alone.high[a, 0]) == (float(lo), float(hi))
        assert [not v for v in protected_reference(cells, primary, primary, levels).values()] == \
            alone.unprotected[primary, 0].tolist()
        audited(X, labels, alone, True)
        for cost in ("cells", "value"):
            out = protection.suppress(X, labels, rule, cost=cost)
            assert out.primary[:, 0].tolist() == flags
            assert out.upper[:, 0].tolist() == [float(levels.get(c, 0)) for c in range(len(cells))]
            S = np.flatnonzero(out.suppressed[:, 0]).tolist()
            for a in S:  # the closed form equals the vertex enumeration
                lo, hi = interval_reference(cells, S, a)
                assert (out.low[a, 0], out.high[a, 0]) == (float(lo), float(hi))
            audited(X, labels, out, True)
            protected = protected_reference(cells, S, primary, levels)
            assert [not protected[c] for c in primary] == out.unprotected[primary, 0].tolist()
            chosen = np.flatnonzero(out.secondary[:, 0])
            if best_count is None:  # nothing protects: every cell is withheld
                assert out.suppressed.all() and out.unprotected.any()
                continue
            assert not out.unprotected.any()
            value = sum(abs(Fraction(v)) for c in chosen for v in cells[c])
            if cost == "cells":
                assert len(chosen) == best_count
            else:
                assert value == best_value
            checked += 1
            protected_any += bool(primary)
    assert checked > 40 and protected_any > 15


def test_a_pattern_exactly_at_its_protection_level_is_protected():
    # p = 0.25 of 120 is 30 exactly: a cell of 30 covers it, one of 29 does not (29 + 3 does)
    labels = np.repeat([0, 1, 2, 3], 3)
    for third, expected in ((10.0, [1]), (9.0, [1, 2])):
        X = np.array([120, 0, 0, 10, 10, third, 1, 1, 1, 0, 0, 0], float)[:, None]
        out = protection.suppress(X, labels, sv.p_percent_rule(0.25))
        assert out.upper[0, 0] == 30.0 and out.primary[:, 0].tolist() == [True, False, False, False]
        assert np.flatnonzero(out.secondary[:, 0]).tolist() == expected
        audited(X, labels, out, False)
    # the fewest cells: 25 + 10 covers 30, where the smallest first would take 10 + 10 + 10
    X = np.array([120, 0, 0, 25, 0, 0, 4, 3, 3, 4, 3, 3, 4, 3, 3], float)[:, None]
    X[3:6, 0] = [10, 8, 7]
    out = protection.suppress(X, np.repeat([0, 1, 2, 3, 4], 3), sv.p_percent_rule(0.25))
    assert np.flatnonzero(out.secondary[:, 0]).tolist() == [1, 2] and out.secondary.sum() == 2
    # of the sets with the fewest cells: the m - 1 largest and the smallest that completes (25 + 6, not
    # 25 + 20); one cell alone: the smallest that covers (35, not 40)
    X = np.array([120, 0, 0, 10, 8, 7, 8, 6, 6, 3, 3, 2, 2, 2, 2], float)[:, None]
    out = protection.suppress(X, np.repeat([0, 1, 2, 3, 4], 3), sv.p_percent_rule(0.25))
    assert np.flatnonzero(out.secondary[:, 0]).tolist() == [1, 4]
    X = np.array([120, 0, 0, 20, 15, 5, 15, 10, 10, 4, 3, 3], float)[:, None]
    out = protection.suppress(X, np.repeat([0, 1, 2, 3], 3), sv.p_percent_rule(0.25))
    assert np.flatnonzero(out.secondary[:, 0]).tolist() == [2]
    # exact, not floating point: p = 0.2 of 5.5 is 1.1, and 0.5 + 0.3 + 0.3 is 1.0999999999999999778 in
    # binary (its double sum rounds to 1.1000000000000000888, the double 0.2 * 5.5 rounds to): short
    assert Fraction(0.5) + 2 * Fraction(0.3) < Fraction(11, 10) and 0.5 + 0.3 + 0.3 == 0.2 * 5.5
    X = np.array([5.5, 0, 0, 0.5, 0.3, 0.3, 0.01, 0.01, 0.01], float)[:, None]
    out = protection.suppress(X, np.repeat([0, 1, 2], 3), sv.p_percent_rule(0.2))
    assert np.flatnonzero(out.secondary[:, 0]).tolist() == [1, 2]
    X[3:6, 0] = [0.4, 0.4, 0.3]  # 1.1000000000000000333 exactly: enough
    out = protection.suppress(X, np.repeat([0, 1, 2], 3), sv.p_percent_rule(0.2))
    assert np.flatnonzero(out.secondary[:, 0]).tolist() == [1]


def test_sensitive_cells_protect_each_other_and_the_cost_changes_the_choice():
    # two dominated cells whose totals cover each other's levels need no secondary cell
    X = np.array([100, 0, 0, 100, 0, 0, 5, 5, 5], float)[:, None]
    out = protection.suppress(X, np.repeat([0, 1, 2], 3), sv.p_percent_rule(0.2))
    assert out.primary[:, 0].tolist() == [True, True, False] and not out.secondary.any()
    assert not out.unprotected.any()
    # level 20: one cell of 25 (fewest cells) or two cells of 10 and 11 (least value)
    X = np.array([100, 0, 0, 25, 25, 25, 4, 4, 2, 4, 4, 3], float)[:, None]
    labels = np.repeat([0, 1, 2, 3], 3)
    cells = protection.suppress(X, labels, sv.p_percent_rule(0.2), cost="cells")
    value = protection.suppress(X, labels, sv.p_percent_rule(0.2), cost="value")
    assert np.flatnonzero(cells.secondary[:, 0]).tolist() == [1]
    assert np.flatnonzero(value.secondary[:, 0]).tolist() == [2, 3]
    for out in (cells, value):
        audited(X, labels, out, False)
    # least value: one cell of 31 beats the two smaller ones (20 + 15) that also cover 30
    X = np.array([100, 0, 0, 11, 10, 10, 8, 6, 6, 6, 5, 4], float)[:, None]
    value = protection.suppress(X, labels, sv.p_percent_rule(0.3), cost="value")
    assert np.flatnonzero(value.secondary[:, 0]).tolist() == [1]


def test_the_lower_protection_level_stops_at_the_a_priori_bound():
    # (1, 0.3) dominance: [10, 0, 0] needs 10 / 0.3 - 10 = 23.3 upwards, but downwards the cell cannot go
    # below 0, so the lower level is 10: met by any further cell with a positive contribution
    X = np.array([10, 0, 0, 5, 5, 5, 6, 6, 6, 7, 7, 7], float)[:, None]
    labels = np.repeat([0, 1, 2, 3], 3)
    out = protection.suppress(X, labels, sv.dominance_rule(1, 0.3))
    assert out.primary[:, 0].tolist() == [True, True, True, True]  # every cell: 1 / 3 > 0.3
    assert out.upper[0, 0] == pytest.approx(10 / 0.3 - 10) and out.lower[0, 0] == 10.0
    assert not out.unprotected.any()
    audited(X, labels, out, False)
    # a cell of zeros absorbs nothing: with [0, 0] (sensitive: t <= n) as the only other suppressed cell,
    # [-119, 0, 0] is known exactly
    X = np.array([-119, 0, 0, 0, 0], float)[:, None]
    out = protection.suppress(X, [0, 0, 0, 1, 1], sv.dominance_rule(2, 0.75, absolute=True), secondary=False)
    assert out.primary[:, 0].tolist() == [True, True] and out.upper[1, 0] == 0.0
    assert (out.low[0, 0], out.high[0, 0]) == (-119.0, -119.0) and out.unprotected[:, 0].tolist() == [True, False]
    audited(X, [0, 0, 0, 1, 1], out, True)


def test_a_cell_of_both_signs_covers_without_bound():
    # a secondary cell with contributions of both signs has no a-priori bound: one is enough
    X = np.array([100, 0, 0, 3, -2, 1, 50, 50, 50], float)[:, None]
    out = protection.suppress(X, np.repeat([0, 1, 2], 3), sv.p_percent_rule(0.2, absolute=True))
    assert np.flatnonzero(out.secondary[:, 0]).tolist() == [1]
    assert out.high[0, 0] == np.inf and out.low[0, 0] == 0.0
    audited(X, np.repeat([0, 1, 2], 3), out, True)


def test_a_cell_of_the_other_sign_covers_one_direction_without_bound():
    # [100, 0, 0] needs 20 up and 20 down; cells >= 0 give any room downwards, cells <= 0 any room
    # upwards: the positive cells alone need three (8 + 7 + 6), one of each sign does with two
    X = np.array([100, 0, 0, 3, 3, 2, 3, 2, 2, 2, 2, 2, -5, -5, -5], float)[:, None]
    labels = np.repeat([0, 1, 2, 3, 4], 3)
    out = protection.suppress(X, labels, sv.p_percent_rule(0.2, absolute=True))
    assert np.flatnonzero(out.secondary[:, 0]).tolist() == [3, 4]  # the smallest positive one and [-5, -5, -5]
    assert (out.low[0, 0], out.high[0, 0]) == (0.0, np.inf)
    audited(X, labels, out, True)


def test_a_dominated_stratum_cannot_be_protected():
    X = np.array([1000, 0, 0, 1, 1, 1, 2, 0, 0], float)[:, None]
    labels = np.repeat([0, 1, 2], 3)
    out = protection.suppress(X, labels, sv.p_percent_rule(0.2))
    assert out.suppressed.all() and out.unprotected[:, 0].tolist() == [True, False, False]
    audited(X, labels, out, False)
    single = protection.suppress(X[:3], [0, 0, 0], sv.p_percent_rule(0.2))
    assert single.primary.all() and single.unprotected.all() and (single.low, single.high) == (1000.0, 1000.0)


def test_without_secondary_cells_the_primary_ones_are_reported_unprotected():
    X = np.array([0, 0, 0, 0, 0, 119, 0, 0, 0, 0, 50, 60, 70, 80, 90], float)[:, None]
    out = protection.suppress(X, np.repeat([0, 1, 2], 5), sv.p_percent_rule(0.2), secondary=False)
    assert not out.secondary.any() and out.unprotected[:, 0].tolist() == [False, True, False]
    upper, lower = protection.protection_levels(X, np.repeat([0, 1, 2], 5), sv.p_percent_rule(0.2))
    assert upper[:, 0].tolist() == [0.0, pytest.approx(23.8), 0.0] and (upper == lower).all()


def test_many_attributes_and_clusters_against_the_lp_audit():
    rng = np.random.default_rng(7)
    X = np.round(rng.lognormal(4, 1.5, size=(300, 4)))
    X[rng.random(X.shape) < 0.1] *= 30
    X[rng.random(X.shape) < 0.2] = 0
    labels = rng.permutation(np.repeat(np.arange(100), 3))
    for rule in (sv.p_percent_rule(0.3), sv.dominance_rule(1, 0.6), sv.pq_rule(0.2, 0.6)):
        for cost in ("cells", "value"):
            out = protection.suppress(X, labels, rule, cost=cost)
            assert out.primary.sum() > 20 and not out.unprotected.any()
            audited(X, labels, out, False)


def test_extreme_scales_give_the_same_pattern():
    rng = np.random.default_rng(3)
    X = np.round(rng.lognormal(3, 1.5, size=(60, 2)))
    labels = rng.permutation(np.repeat(np.arange(20), 3))
    base = protection.suppress(X, labels, sv.p_percent_rule(0.2))
    for scale in (2.0**1000, 2.0**-1060):
        out = protection.suppress(X * scale, labels, sv.p_percent_rule(0.2))
        assert (out.primary == base.primary).all() and (out.secondary == base.secondary).all()
        np.testing.assert_allclose(out.upper, base.upper * scale, rtol=1e-15)
        audited(X * scale, labels, out, False)


def test_parameters_are_checked():
    X = np.array([[1.0], [2.0]])
    with pytest.raises(SdcError, match="suppress: cost must be one of 'cells', 'value', got 'cheap'"):
        protection.suppress(X, [0, 0], sv.p_percent_rule(0.2), cost="cheap")
    with pytest.raises(SdcError, match="pq_rule: p must be less than q, got p = 0.5 and q = 0.5"):
        sv.pq_rule(0.5, 0.5)
    with pytest.raises(SdcError, match=r"pq_rule: q must be in \(0, 1\], got 1.5"):
        sv.pq_rule(0.5, 1.5)
    with pytest.raises(SdcError, match=r"threshold_rule: safety must be in \(0, 1000000\], got 0"):
        sv.threshold_rule(3, 0)
    with pytest.raises(SdcError, match=r"audit_suppression: suppressed must have shape \(1, 1\), got \(2, 1\)"):
        protection.audit_suppression(X, [0, 0], np.ones((2, 1), bool))
    with pytest.raises(SdcError, match="audit_suppression: rows contains -2"):
        protection.audit_suppression([[1.0], [-2.0]], [0, 0], np.ones((1, 1), bool))
