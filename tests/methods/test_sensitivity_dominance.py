"""Clusters without sensitive cells (issue 33 item 2): dynamic k by removing the records that make a cell
sensitive, and MDAV whose groups are formed under the rule; against exact references, with every
suppression pattern audited."""

from __future__ import annotations

import numpy as np
import pytest

from duckdb_sdc._validate import SdcError
from duckdb_sdc.methods import multivariate as mv
from duckdb_sdc.methods import sensitivity as sv
from duckdb_sdc.methods.dominance import mdav_cells_partition, remove_sensitive
from reference_dominance import mdav_cells_reference, remove_reference
from methods.test_sensitivity_protection import RULES, _rule_dict, audited

PLAIN = [sv.Rule(r.kind, n=r.n, r=r.r, p=r.p, q=r.q, safety=r.safety) for r in RULES]  # contributions >= 0


def _data(rng, n, p):
    X = rng.integers(0, 6, size=(n, p)) * rng.choice([1, 1, 1, 1, 15], size=(n, p))
    return X.astype(float)


# ---------------------------------------------------------------------------------------------
# the reproduction: what dynamic k and suppression do to one dominant record


def test_removing_the_dominant_record_instead_of_merging_or_suppressing():
    # [119, 0, 0, 0, 0] among five zeros and [50 .. 90]: merging absorbs the zeros and still leaves
    # 119 dominant, so all three clusters become one; removal takes 119 out (its cluster of four
    # zeros joins the other zeros) and, since a lone 119 would follow from the total, suppresses
    # the cell [50 .. 90] that protects it
    X = np.array([0, 0, 0, 0, 0, 119, 0, 0, 0, 0, 50, 60, 70, 80, 90], float)[:, None]
    labels = np.repeat([0, 1, 2], 5)
    rule = sv.p_percent_rule(0.2)
    assert sv.merge_sensitive(X, labels, rule).tolist() == [0] * 15
    out = remove_sensitive(X, labels, rule)
    assert out.removed.tolist() == [False] * 5 + [True] + [False] * 9
    assert out.labels.tolist() == [0] * 5 + [-1] + [0] * 4 + [1] * 5
    # the removed records are the last cell: sensitive, suppressed, protected by [50 .. 90]
    assert out.suppression.primary[:, 0].tolist() == [False, False, True]
    assert out.suppression.secondary[:, 0].tolist() == [False, True, False]
    assert not out.suppression.unprotected.any()
    assert np.isnan(out.release[[5, 10, 11, 12, 13, 14], 0]).all() and (out.release[[0, 1, 2, 3, 4, 6, 7, 8, 9], 0] == 0).all()
    audited(X, np.where(out.removed, 2, out.labels), out.suppression, False)


# ---------------------------------------------------------------------------------------------
# against the references


@pytest.mark.parametrize("rule", PLAIN, ids=lambda r: r.describe())
def test_removal_equals_the_reference_and_leaves_no_sensitive_cell(rule):
    rng = np.random.default_rng(21)
    for trial in range(12):
        n, k = int(rng.integers(8, 40)), int(rng.integers(2, 5))
        X = _data(rng, n, int(rng.integers(1, 3)))
        labels = mv.mdav_multi_partition(X, k, standardise=False)
        out = remove_sensitive(X, labels, rule)
        ref_labels, ref_removed = remove_reference(X, labels, _rule_dict(rule))
        np.testing.assert_array_equal(out.removed, ref_removed)
        np.testing.assert_array_equal(out.labels, ref_labels)
        kept = ~out.removed
        if kept.any():
            assert not sv.sensitive_cells(X[kept], out.labels[kept], rule).any()
            assert np.bincount(out.labels[kept]).min() >= np.bincount(labels).min()
        with_removed = np.where(out.removed, out.labels.max() + 1, out.labels)
        audited(X, with_removed, out.suppression, False)
        # only the removed records' cell can be sensitive
        assert not out.suppression.primary[: out.labels.max() + 1].any()


@pytest.mark.parametrize("rule", PLAIN, ids=lambda r: r.describe())
def test_mdav_with_the_rule_equals_the_reference(rule):
    rng = np.random.default_rng(22)
    for trial in range(10):
        n, k = int(rng.integers(6, 45)), int(rng.integers(2, 5))
        X = _data(rng, n, int(rng.integers(1, 3)))
        try:
            ref = mdav_cells_reference(X, k, _rule_dict(rule))
        except ValueError:  # one group of all the records is still sensitive
            with pytest.raises(SdcError, match="no merging of clusters can satisfy the rule"):
                mdav_cells_partition(X, k, rule, standardise=False)
            continue
        got = mdav_cells_partition(X, k, rule, standardise=False)
        np.testing.assert_array_equal(got, ref)
        assert not sv.sensitive_cells(X, got, rule).any()
        assert np.bincount(got).min() >= k


def test_mdav_with_the_rule_is_mdav_when_no_group_is_sensitive():
    rng = np.random.default_rng(5)
    X = rng.uniform(100, 110, size=(90, 3))
    for k in (3, 5):
        np.testing.assert_array_equal(mdav_cells_partition(X, k, sv.p_percent_rule(0.2)),
                                      mv.mdav_multi_partition(X, k))


def test_mdav_with_the_rule_keeps_more_groups_than_dynamic_k():
    rng = np.random.default_rng(1)
    X = np.round(rng.lognormal(4, 1.5, (300, 3)))
    rule = sv.p_percent_rule(0.2)
    formed = mdav_cells_partition(X, 3, rule)
    merged = sv.merge_sensitive(X, mv.mdav_multi_partition(X, 3), rule)
    assert not sv.sensitive_cells(X, formed, rule).any() and not sv.sensitive_cells(X, merged, rule).any()
    assert formed.max() + 1 > merged.max() + 1  # finer: 81 groups against 67
    assert (formed.max() + 1, merged.max() + 1) == (81, 67)


def test_removal_parameters_and_a_stratum_removed_whole():
    X = np.array([[1.0], [2.0], [100.0]])
    with pytest.raises(SdcError, match="remove_sensitive: min_size must be an integer >= 1, got 0"):
        remove_sensitive(X, [0, 0, 0], sv.p_percent_rule(0.2), min_size=0)
    with pytest.raises(SdcError, match="remove_sensitive: cost must be one of 'cells', 'value'"):
        remove_sensitive(X, [0, 0, 0], sv.p_percent_rule(0.2), cost="few")
    with pytest.raises(SdcError, match=r"mdav_cells_partition: k = 4 is larger than the number of records"):
        mdav_cells_partition(X, 4, sv.p_percent_rule(0.2))
    # one cluster, 100 dominant: removed; [1, 2] is too few for the p% rule and has nothing to merge
    # with, so it goes too: the removed cell [1, 2, 100] is itself sensitive and nothing protects it
    out = remove_sensitive(X, [0, 0, 0], sv.p_percent_rule(0.2))
    assert out.removed.all() and (out.labels == -1).all()
    assert out.suppression.unprotected.all()


def test_extreme_scales_give_the_same_clusters():
    rng = np.random.default_rng(9)
    X = np.round(rng.lognormal(4, 1.5, (60, 2)))
    labels = mv.mdav_multi_partition(X, 3)
    rule = sv.p_percent_rule(0.2)
    formed, out = mdav_cells_partition(X, 3, rule), remove_sensitive(X, labels, rule)
    for scale in (2.0**1000, 2.0**-1040):
        np.testing.assert_array_equal(mdav_cells_partition(X * scale, 3, rule), formed)
        scaled = remove_sensitive(X * scale, labels, rule)
        np.testing.assert_array_equal(scaled.labels, out.labels)
        np.testing.assert_array_equal(scaled.suppression.suppressed, out.suppression.suppressed)
