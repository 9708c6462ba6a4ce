"""The optimal generalisation search (duckdb_sdc.methods.generalisation) equals the brute-force optimum
over every combination of levels on small lattices, for each measure, with strata and suppression
limits; the pruning skips only infeasible nodes; bad input is refused by name."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from duckdb_sdc import SdcError, datasets
from duckdb_sdc.methods import generalisation as gz

import reference_recoding as ref


def _hierarchy(values, widths):
    """Rows value, value // w1, value // (w1 w2), ..., '*' over `values`."""
    rows = []
    for v in values:
        row, scale = [v], 1
        for w in widths:
            scale *= w
            row.append(f"{v // scale}/{scale}")
        rows.append(row + ["*"])
    return rows


def _levels_table(rows):
    """hierarchies[level][value] as the reference wants them."""
    return [{r[0]: r[lv] for r in rows} for lv in range(len(rows[0]))]


def _measure(name, rows, n, strata):
    def value(gen, small, levels):
        gen = [(s,) + g for s, g in zip(strata, gen)]
        small = set(small)
        kept = {}
        for i, g in enumerate(gen):
            if i not in small:
                kept[g] = kept.get(g, 0) + 1
        if name == "discernibility":
            return sum(v * v for v in kept.values()) + n * len(small)
        if name == "average_class_size":
            groups = len(kept) + (1 if small else 0)
            return n / groups
        total = 0.0
        for c in range(len(rows[0])):
            orig = {}
            for r in rows:
                orig[r[c]] = orig.get(r[c], 0) + 1
            genc = {}
            for g in gen:
                genc[g[c + 1]] = genc.get(g[c + 1], 0) + 1
            sup = {}
            for i in small:
                sup[gen[i][c + 1]] = sup.get(gen[i][c + 1], 0) + 1
            for i, r in enumerate(rows):
                total -= math.log2(orig[r[c]] / genc[gen[i][c + 1]])
                if i in small:
                    total -= math.log2(sup[gen[i][c + 1]] / len(small))
        return total
    return value


cases = st.tuples(
    st.integers(2, 3),  # keys
    st.integers(6, 30),  # records
    st.integers(2, 4),  # k
    st.sampled_from([0.0, 0.1, 0.25]),
    st.sampled_from(gz.MEASURES),
    st.booleans(),  # strata
    st.integers(0, 2**32 - 1))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases)
def test_the_search_equals_the_brute_force_optimum(case):
    p, n, k, share, measure, with_strata, seed = case
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 6, (n, p))
    widths = [[2, 3], [3], [2]][:p]
    hierarchies = [_hierarchy(range(6), w) for w in widths]
    strata = rng.integers(0, 2, n) if with_strata else np.zeros(n, np.int64)
    rows = [tuple(int(v) for v in r) for r in X]
    limit = math.floor(share * n + 1e-9)
    # the stratum is a first key that is never generalised (height 0)
    tables = [[{0: 0, 1: 1}]] + [_levels_table(h) for h in hierarchies]
    best = ref.brute_generalisation([(int(s),) + r for s, r in zip(strata, rows)], tables,
                                    (0,) + tuple(len(w) + 1 for w in widths), k, limit,
                                    lambda gen, small, levels: _measure(measure, rows, n, strata)(
                                        [g[1:] for g in gen], small, levels))
    if best is None:
        with pytest.raises(SdcError, match="no generalisation is k-anonymous"):
            gz.generalisation_search([X[:, c] for c in range(p)], hierarchies, k, share, measure,
                                     strata=[strata] if with_strata else None)
        return
    levels, loss = best
    got = gz.generalisation_search([X[:, c] for c in range(p)], hierarchies, k, share, measure,
                                   strata=[strata] if with_strata else None)
    assert math.isclose(got.loss, loss, rel_tol=1e-9, abs_tol=1e-9)
    if measure != "entropy":  # exact values: the tie-break (fewer levels, then lexicographic) decides alike
        assert got.levels == levels[1:]
    else:  # sums of logarithms in another order may differ in the last bits: got is an optimum
        gen = ref.classes_after([(int(s),) + r for s, r in zip(strata, rows)], (0,) + got.levels, tables)
        sizes = {}
        for g in gen:
            sizes[g] = sizes.get(g, 0) + 1
        small = [i for i, g in enumerate(gen) if sizes[g] < k]
        value = _measure(measure, rows, n, strata)([g[1:] for g in gen], small, got.levels)
        assert len(small) <= limit and math.isclose(value, loss, rel_tol=1e-9, abs_tol=1e-9)
    for node in got.lattice:  # an unevaluated node is one the brute force finds infeasible
        if node.suppressed is None:
            gen = ref.classes_after([(int(s),) + r for s, r in zip(strata, rows)], (0,) + node.levels, tables)
            sizes = {}
            for g in gen:
                sizes[g] = sizes.get(g, 0) + 1
            assert sum(1 for g in gen if sizes[g] < k) > limit


def test_released_values_and_suppressed_records():
    x = np.array([0, 1, 2, 3, 4, 5, 0, 1])
    h = _hierarchy(range(6), [2, 3])  # levels: v, v//2, v//6, *
    got = gz.generalisation_search([x], [h], 2, 0.25, "discernibility")
    assert got.levels == (1,) and got.suppressed.sum() == 0
    assert got.released[0].tolist() == ["0/2", "0/2", "1/2", "1/2", "2/2", "2/2", "0/2", "0/2"]
    limited = gz.generalisation_search([x], [h], 2, 0.0, "average_class_size")
    assert limited.suppressed.sum() == 0


def test_testdata_k5_with_two_percent_suppressed():
    d = datasets.load("testdata")
    keys = ["urbrur", "water", "relat", "sex", "age"]
    star = [[[v, "*"] for v in sorted(set(d[c]))] for c in keys[:-1]]
    ages = sorted(set(d["age"]))
    hage = [[a, f"{a // 10 * 10}-{a // 10 * 10 + 9}", f"{a // 20 * 20}-{a // 20 * 20 + 19}", "*"] for a in ages]
    got = gz.generalisation_search(d[keys], star + [hage], 5, 0.02, "discernibility")
    assert got.suppressed.sum() <= 0.02 * len(d)
    classes = {}
    released = list(zip(*got.released))
    for r, s in zip(released, got.suppressed):
        if not s:
            classes[r] = classes.get(r, 0) + 1
    assert min(classes.values()) >= 5
    assert len(got.lattice) == 2 ** 4 * 4


@pytest.mark.parametrize("call, message", [
    (lambda: gz.generalisation_search([[1, 2]], [[[1, "*"]]], 2), "generalisation_search: hierarchy of column key1 lacks 2"),
    (lambda: gz.generalisation_search([[1, 2]], [], 2), "generalisation_search: hierarchies must give one hierarchy per"),
    (lambda: gz.generalisation_search([[1, 2]], [[[1, "*"], [2, "*"]]], 3),
     "generalisation_search: k = 3 is larger than the number of records (2)"),
    (lambda: gz.generalisation_search([[1, 2]], [[[1, "*"], [2, "*"]]], 2, 1.5),
     "generalisation_search: max_suppressed must be a share in [0, 1]"),
    (lambda: gz.generalisation_search([[1, 2]], [[[1, "*"], [2, "*"]]], 2, 0, "loss"),
     "generalisation_search: measure must be one of"),
    (lambda: gz.generalisation_search([[1, 2, 3]], [[[1, "a"], [2, "b"], [3, "c"]]], 2),
     "generalisation_search: no generalisation is k-anonymous with at most 0 suppressed records"),
    (lambda: gz.generalisation_search([list(range(4))] * 2, [[[v, v, v, v, "*"] for v in range(4)]] * 2, 2,
                                      max_nodes=10), "generalisation_search: the lattice has 25 nodes"),
])
def test_bad_input_is_refused(call, message):
    with pytest.raises(SdcError) as info:
        call()
    assert str(info.value).startswith(message), str(info.value)
