"""Dominance and p% rules, suppression and dynamic k on numpy arrays, against direct loops."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from duckdb_sdc._validate import SdcError
from duckdb_sdc.methods import protection
from duckdb_sdc.methods import sensitivity as sv
from reference import (
    canonical_sorted,
    cells_reference,
    dominance_reference,
    merge_reference,
    nearest_cluster_reference,
    p_percent_reference,
)

R_VALUES = [0.5, 0.6, 0.7, 0.75, 0.8, 0.55, 0.9, 1.0, 0.123456789]
P_VALUES = [0.1, 0.25, 0.3, 0.55, 0.6, 0.66, 0.7, 1.0, 2.5]


def _random_cells(seed, count):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        t = int(rng.integers(1, 9))
        scale = int(rng.choice([1, 10, 1000, 10**9]))
        yield rng.integers(0, scale + 1, t).astype(float)


def _split(amount, parts, cap=None):
    """amount as `parts` integers as equal as possible (each <= cap if given), largest first."""
    if cap is not None:
        parts = max(parts, -(-amount // cap)) if cap > 0 else parts
    base, extra = divmod(amount, parts)
    return [base + 1] * extra + [base] * (parts - extra)


def _boundary_cells(value, rule, n=1):
    """Integer cells whose rule statistic sits exactly at the threshold (and one unit either side),
    for many totals: plain floating point gets some of them wrong (0.7 * 10 rounds up, 0.55 * 20 too)."""
    frac = Fraction(repr(value))
    for m in range(1, 120):
        if rule == "dominance":
            total = frac.denominator * m
            top = int(frac * total)
            if top < n:
                continue
            largest = _split(top, n)
            rest = total - top
            if rest and largest[-1] == 0:
                continue
            fill = _split(rest, 1, cap=largest[-1]) if rest else []
            for shift in (-1, 0, 1):
                if largest[0] + shift >= 0:
                    yield [largest[0] + shift] + largest[1:] + fill
        else:
            c1 = frac.denominator * m  # T - c1 - c2 = p c1 exactly, with c1 the largest
            fill = _split(int(frac * c1), 1, cap=c1)
            for shift in (-1, 0, 1):
                if fill[-1] + shift >= 0:
                    yield [c1, c1] + fill[:-1] + [fill[-1] + shift]


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("r", R_VALUES)
def test_dominance_rule_equals_a_direct_loop(n, r):
    cells = list(_random_cells(n * 100 + int(r * 100), 60)) + list(_boundary_cells(r, "dominance", n))
    for c in cells:
        assert sv.dominance_sensitive(c, n, r) == dominance_reference(c, n, r), (c, n, r)


@pytest.mark.parametrize("p", P_VALUES)
def test_p_percent_rule_equals_a_direct_loop(p):
    cells = list(_random_cells(int(p * 1000), 80)) + list(_boundary_cells(p, "p%"))
    for c in cells:
        assert sv.p_percent_sensitive(c, p) == p_percent_reference(c, p), (c, p)


def test_boundaries_are_strict_and_decimal():
    # exactly r: not sensitive; 0.7 * 10 and 0.55 * 20 would round the wrong way in plain floating point
    assert sv.dominance_sensitive([7, 3], 1, 0.7) is False
    assert sv.dominance_sensitive([7.000001, 3], 1, 0.7) is True
    assert sv.dominance_sensitive([11, 9], 1, 0.55) is False
    assert sv.dominance_sensitive([6, 4, 3, 7], 2, 0.65) is False  # 7 + 6 = 13 = 0.65 * 20
    assert sv.p_percent_sensitive([10, 5, 1], 0.1) is False  # 16 - 15 = 1 = 0.1 * 10
    assert sv.p_percent_sensitive([10, 5, 0.999], 0.1) is True


def test_few_contributors_zero_totals_and_empty_cells():
    assert sv.dominance_sensitive([5, 5], 2, 0.99) is True  # t <= n
    assert sv.dominance_sensitive([5, 5, 5], 2, 0.99) is False
    assert sv.dominance_sensitive([0, 0, 0, 0], 1, 0.5) is False  # zero total: nothing dominates
    assert sv.dominance_sensitive([0], 1, 0.5) is True  # but t <= n still is sensitive
    assert sv.dominance_sensitive([], 1, 0.5) is None
    assert sv.p_percent_sensitive([9], 0.1) is True  # one contributor: c(2) = 0, T - c(1) = 0 < p c(1)
    assert sv.p_percent_sensitive([9, 1], 0.1) is True
    assert sv.p_percent_sensitive([0, 0, 0], 0.1) is False
    assert sv.p_percent_sensitive([], 0.1) is None


def test_negative_contributions_are_refused_or_taken_absolute():
    with pytest.raises(SdcError, match=r"dominance_sensitive: value contains -5; the rule needs contributions >= 0"):
        sv.dominance_sensitive([10, -5, 3], 1, 0.6)
    with pytest.raises(SdcError, match=r"p_percent_sensitive: value contains -1"):
        sv.p_percent_sensitive([10, -1], 0.1)
    assert sv.dominance_sensitive([10, -5, 3], 1, 0.6, absolute=True) == dominance_reference([10, 5, 3], 1, 0.6)
    assert sv.p_percent_sensitive([-10, 5, 3], 0.2, absolute=True) == p_percent_reference([10, 5, 3], 0.2)


@pytest.mark.parametrize("call, message", [
    (lambda: sv.dominance_sensitive([1], 1, 0), "dominance_sensitive: r must be in (0, 1], got 0"),
    (lambda: sv.dominance_sensitive([1], 1, 1.5), "dominance_sensitive: r must be in (0, 1], got 1.5"),
    (lambda: sv.dominance_sensitive([1], 0, 0.5), "dominance_sensitive: n must be an integer >= 1, got 0"),
    (lambda: sv.dominance_sensitive([1], 1.5, 0.5), "dominance_sensitive: n must be an integer, got 1.5"),
    (lambda: sv.dominance_sensitive([1], 1, None), "dominance_sensitive: r must not be NULL"),
    (lambda: sv.p_percent_sensitive([1], 0), "p_percent_sensitive: p must be in (0, 1000000], got 0"),
    (lambda: sv.p_percent_sensitive([1], -0.1), "p_percent_sensitive: p must be in (0, 1000000], got -0.1"),
    (lambda: sv.p_percent_sensitive([1, float("nan")], 0.1), "p_percent_sensitive: value contains nan"),
    (lambda: sv.p_percent_sensitive([1], float("nan")), "p_percent_sensitive: p must be in (0, 1000000], got nan"),
    (lambda: sv.p_percent_sensitive([1], 2e6), "p_percent_sensitive: p must be in (0, 1000000], got 2000000.0"),
    (lambda: sv.dominance_sensitive([1, float("inf")], 1, 0.5), "dominance_sensitive: value contains inf"),
    (lambda: sv.dominance_sensitive([1], float("nan"), 0.5), "dominance_sensitive: n must be an integer, got nan"),
    (lambda: sv.dominance_sensitive([1], 1, float("nan")), "dominance_sensitive: r must be in (0, 1], got nan"),
    (lambda: sv.sensitive_cells([[1.0], [float("nan")]], [0, 0], sv.p_percent_rule(0.1)), "sensitive_cells: rows contains nan"),
])
def test_bad_parameters(call, message):
    with pytest.raises(SdcError) as info:
        call()
    assert message in str(info.value)


@pytest.mark.parametrize("r", [0.5, 0.8, 0.625])
def test_p_percent_with_p_from_r_flags_a_subset_of_the_2_r_rule(r):
    p = sv.dominance_to_p_percent(r)
    assert p == pytest.approx((1 - r) / r)
    for c in _random_cells(int(r * 1000), 400):
        dom = sv.dominance_sensitive(c, 2, r)
        pp = sv.p_percent_sensitive(c, p)
        assert not pp or dom, c
        if c.sum() > 0 and Fraction(c.max()) >= Fraction(repr(r)) * Fraction(c.sum()) and len(c) > 2:
            assert pp == dom, c


def test_product_comparison_is_exact():
    rng = np.random.default_rng(9)
    x, y, u, v = (rng.normal(size=2000) * 10.0 ** rng.integers(-5, 6, 2000) for _ in range(4))
    u[:500], v[:500] = y[:500], x[:500]  # equal products
    v[500:1000] = x[500:1000] * y[500:1000] / u[500:1000]  # nearly equal products
    got = sv.product_gt(x, y, u, v)
    exact = [Fraction(a) * Fraction(b) > Fraction(c) * Fraction(d) for a, b, c, d in zip(x, y, u, v)]
    assert got.tolist() == exact


def _clustered(seed, n=240, p=3, k=4):
    rng = np.random.default_rng(seed)
    X = np.round(rng.lognormal(6, 1.2, size=(n, p)))
    labels = rng.permutation(np.repeat(np.arange(n // k), k))
    return X, labels


RULES = [sv.dominance_rule(1, 0.6), sv.dominance_rule(2, 0.8), sv.p_percent_rule(0.25)]


def _reference_rule(rule):
    if rule.kind == "dominance":
        return lambda c: dominance_reference(c, rule.n, rule.r)
    return lambda c: p_percent_reference(c, rule.p)


@pytest.mark.parametrize("rule", RULES, ids=str)
def test_sensitive_cells_equal_the_direct_loop(rule):
    X, labels = _clustered(1)
    got = sv.sensitive_cells(X, labels, rule)
    ref = cells_reference(X, labels, _reference_rule(rule))
    assert {(g, j): bool(got[g, j]) for g in range(got.shape[0]) for j in range(X.shape[1])} == ref


@pytest.mark.parametrize("rule", RULES, ids=str)
def test_suppression_releases_no_sensitive_cell(rule):
    from methods.test_sensitivity_protection import audited

    X, labels = _clustered(2)
    out = protection.suppress(X, labels, rule)
    ref = cells_reference(X, labels, _reference_rule(rule))
    g = out.primary.shape[0]
    assert out.primary.tolist() == [[ref[c, j] for j in range(X.shape[1])] for c in range(g)]
    assert not (out.primary & out.secondary).any()
    for c in range(g):
        for j in range(X.shape[1]):
            released = out.release[labels == c, j]
            if out.primary[c, j] or out.secondary[c, j]:
                assert np.isnan(released).all()
            else:
                assert released == pytest.approx(X[labels == c, j].mean()) and not ref[c, j]
    assert not out.unprotected.any()
    audited(X, labels, out, False)
    no_secondary = protection.suppress(X, labels, rule, secondary=False)
    assert not no_secondary.secondary.any() and (no_secondary.primary == out.primary).all()
    assert (no_secondary.unprotected.any(axis=0) == out.secondary.any(axis=0)).all()


@pytest.mark.parametrize("rule", RULES, ids=str)
def test_dynamic_k_equals_the_direct_loop_and_leaves_no_sensitive_cell(rule):
    for seed in range(3):
        X, labels = _clustered(10 + seed, n=120, k=3)
        got = sv.merge_sensitive(X, labels, rule)
        np.testing.assert_array_equal(got, merge_reference(X, labels, _reference_rule(rule)))
        assert not sv.sensitive_cells(X, got, rule).any()
        assert np.bincount(got).min() >= 3
        for g in np.unique(got):  # clusters only merge, never split
            assert np.unique(got[np.isin(labels, labels[got == g])]).tolist() == [g]


def test_dynamic_k_keeps_compliant_partitions_and_reports_impossible_ones():
    X = np.array([[10.0], [11.0], [12.0], [50.0], [51.0], [52.0]])
    labels = np.array([0, 0, 0, 1, 1, 1])
    assert sv.merge_sensitive(X, labels, sv.dominance_rule(1, 0.6)).tolist() == [0, 0, 0, 1, 1, 1]
    assert canonical_sorted(sv.merge_sensitive(X, np.array([7, 7, 7, 3, 3, 3]), sv.dominance_rule(1, 0.6))).tolist() \
        == [1, 1, 1, 0, 0, 0]
    dominated = np.array([[1.0], [1.0], [1.0], [1000.0], [1.0], [1.0]])
    with pytest.raises(SdcError, match="merge_sensitive: all 6 records in one cluster still leave a sensitive cell"):
        sv.merge_sensitive(dominated, labels, sv.dominance_rule(1, 0.6))


@pytest.mark.parametrize("seed", range(6))
def test_secondary_cells_protect_every_primary_cell_on_random_partitions(seed):
    from methods.test_sensitivity_protection import audited

    rng = np.random.default_rng(500 + seed)
    g, k, p = int(rng.integers(2, 25)), int(rng.integers(2, 5)), int(rng.integers(1, 4))
    X = np.round(rng.lognormal(3, 1.5, size=(g * k, p)))
    X[rng.random(X.shape) < 0.2] *= 40  # dominant contributions: many primary cells, also neighbours
    labels = rng.permutation(np.repeat(np.arange(g), k))
    rule = [sv.dominance_rule(1, 0.6), sv.p_percent_rule(0.3)][seed % 2]
    out = protection.suppress(X, labels, rule)
    assert not (out.primary & out.secondary).any()
    audited(X, labels, out, False)
    # what no pattern can protect is reported, and then every cell of its attribute is withheld
    for j in np.flatnonzero(out.unprotected.any(axis=0)):
        assert out.suppressed[:, j].all()


def test_two_sensitive_clusters_that_are_each_others_nearest_still_get_secondary_cells():
    # clusters 0 and 1 are close and both dominated, each other's protection falls short (102 of
    # 100 / 0.6 - 102 = 64.7 each way would do, but a total of 102 leaves the other at most 102 above
    # and itself only 102 below): cluster 2 (far, safe) is withheld too
    from methods.test_sensitivity_protection import audited

    X = np.array([[100.0], [1.0], [1.0], [101.0], [1.0], [1.0], [900.0], [905.0], [910.0]])
    labels = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2])
    out = protection.suppress(X, labels, sv.dominance_rule(1, 0.4))
    assert out.primary[:, 0].tolist() == [True, True, False]
    assert out.secondary[:, 0].tolist() == [False, False, True]
    audited(X, labels, out, False)
    assert np.isnan(out.release).all()  # with one safe cell left, its value would give both away
    # under (1, 0.6) each one's level (100 / 0.6 - 102 = 64.7) is covered by the other's 103
    out = protection.suppress(X, labels, sv.dominance_rule(1, 0.6))
    assert out.primary[:, 0].tolist() == [True, True, False] and not out.secondary.any()


@pytest.mark.parametrize("scale", [2.0**990, 2.0**-1040, 1.0])
def test_rules_answer_at_any_scale_as_in_exact_arithmetic(scale):
    cells = [np.asarray(c) * scale for c in _random_cells(31, 200)] + [np.array([1e308, 1e308, 1.0])]
    for c in cells:
        for n, r in ((1, 0.6), (2, 0.7)):
            assert sv.dominance_sensitive(c, n, r) == dominance_reference(c, n, r), (c, n, r)
        assert sv.p_percent_sensitive(c, 0.25) == p_percent_reference(c, 0.25), c
    # two contributions of 1e308 (and a third): the total 2e308 overflows; the cell is dominated
    assert sv.dominance_sensitive([1e308, 1e308, 1.0], 2, 0.7) is True
    assert sv.p_percent_sensitive([1e308, 1e308, 1.0], 0.1) is True


def test_cells_and_merging_at_extreme_scales_equal_the_normal_range():
    X, labels = _clustered(40, n=90, k=3)
    for rule in RULES:
        base = sv.sensitive_cells(X, labels, rule)
        for scale in (2.0**1000, 2.0**-1050):
            np.testing.assert_array_equal(sv.sensitive_cells(X * scale, labels, rule), base)
        # merging also standardises the attributes to find nearest clusters, which squares them
        merged = sv.merge_sensitive(X, labels, rule)
        for scale in (2.0**400, 2.0**-400):
            np.testing.assert_array_equal(sv.merge_sensitive(X * scale, labels, rule), merged)
    # cells of very different scales merge without overflow: a cluster of huge values beside small ones
    X = np.array([[1e308], [1.0], [1.0], [1e307], [1e307], [1e307]])
    got = sv.merge_sensitive(X, [0, 0, 0, 1, 1, 1], sv.dominance_rule(1, 0.8))
    assert got.tolist() == [0, 0, 0, 0, 0, 0]  # 1e308 dominates its cluster; 1e308 / 1.3e308 < 0.8
