"""Rank swapping (Moore 1996): the compiled process against a plain-Python one with the same words,
its distribution against the exact one for small n, the multiset and the rank bound on every output
(hypothesis), and the SQL forms."""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from duckdb_sdc import SdcError
from duckdb_sdc.methods import rank_swap as rs

MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


def mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def word(key, i, t):
    return mix((key + ((i * 65536 + t) * GOLDEN)) & MASK)


def uniform(key, i, t, w):
    """Lemire's multiply-and-shift with rejection, in Python integers."""
    while True:
        h = word(key, i, t)
        t += 1
        product = h * w
        if (product & MASK) < w and (product & MASK) < (-w) % (1 << 64) % w:
            continue
        return product >> 64, t


def reference_partners(n, P, key):
    """Moore's process in plain Python with the documented words: rejection draws (32) for a range
    of more than 64 ranks, then the r-th free rank of the range by counting."""
    taken = [False] * n
    partner = list(range(n))
    for i in range(n):
        if taken[i]:
            continue
        taken[i] = True
        w = min(P, n - 1 - i)
        if w == 0:
            continue
        t, j = 0, None
        if w > 64:
            for _ in range(32):
                r, t = uniform(key, i, t, w)
                if not taken[i + 1 + r]:
                    j = i + 1 + r
                    break
        if j is None:
            free = [k for k in range(i + 1, i + w + 1) if not taken[k]]
            if not free:
                continue
            r, t = uniform(key, i, t, len(free))
            j = free[r]
        taken[j] = True
        partner[i], partner[j] = j, i
    return partner


def test_the_compiled_process_equals_the_plain_one():
    rng = np.random.default_rng(1)
    for _ in range(400):
        n = int(rng.integers(2, 300))
        x = rng.integers(0, max(2, n // 4), n).astype(float) if rng.random() < 0.5 else rng.normal(size=n)
        p = float(rng.choice([1, 5, 10, 33.3, 50, 100]))
        if p * n // 100 < 1:
            continue
        seed = int(rng.integers(0, 2**63))
        order, partner = rs.rank_swap_partners(x, p, seed=seed)
        key = int(np.random.SeedSequence(seed).generate_state(1, np.uint64)[0])
        assert partner.tolist() == reference_partners(n, rs.swap_distance("t", p, n), key)
        np.testing.assert_array_equal(order, np.argsort(x, kind="stable"))
        out = rs.rank_swap(x, p, seed=seed)
        want = np.empty(n)
        want[order] = np.sort(x)[partner]
        np.testing.assert_array_equal(out, want)


def test_nearly_full_ranges_use_the_counting_tree_and_still_match():
    """p = 100 on 2000 values: late ranges fill up, the Fenwick tree is built and selects the same
    partners as counting in plain Python."""
    x = np.random.default_rng(2).normal(size=2000)
    for seed in (1, 2, 3):
        _, partner = rs.rank_swap_partners(x, 100, seed=seed)
        key = int(np.random.SeedSequence(seed).generate_state(1, np.uint64)[0])
        assert partner.tolist() == reference_partners(2000, 2000, key)


def exact_distribution(n, P):
    """The probability of every partner vector of Moore's process (uniform partner among the free
    ranks of the range), by following every branch with exact fractions."""
    out: Counter = Counter()

    def walk(i, taken, partner, prob):
        while i < n and i in taken:
            i += 1
        if i == n:
            out[tuple(partner)] += prob
            return
        taken = taken | {i}
        free = [k for k in range(i + 1, min(n - 1, i + P) + 1) if k not in taken]
        if not free:
            walk(i + 1, taken, partner, prob)
            return
        for j in free:
            p2 = list(partner)
            p2[i], p2[j] = j, i
            walk(i + 1, taken | {j}, p2, prob * Fraction(1, len(free)))

    walk(0, frozenset(), list(range(n)), Fraction(1))
    return out


@pytest.mark.parametrize("n, p", [(5, 40), (6, 50), (7, 100)])
def test_partners_follow_the_exact_distribution(n, p):
    P = rs.swap_distance("t", p, n)
    exact = exact_distribution(n, P)
    draws = 20_000
    seen = Counter(tuple(rs.rank_swap_partners(np.arange(n, dtype=float), p, seed=s)[1].tolist())
                   for s in range(draws))
    assert set(seen) <= set(exact)
    # Pearson's chi-square over the outcomes; 1e-6 upper quantile of chi-square with k - 1 degrees of
    # freedom, by the Wilson-Hilferty approximation (z = 4.75)
    chi2 = sum((seen[o] - draws * float(q)) ** 2 / (draws * float(q)) for o, q in exact.items())
    k = len(exact) - 1
    bound = k * (1 - 2 / (9 * k) + 4.75 * math.sqrt(2 / (9 * k))) ** 3
    assert chi2 < bound, (chi2, bound, len(exact))


@settings(max_examples=300, deadline=None)
@given(values=st.lists(st.integers(-5, 5) | st.floats(-1e6, 1e6, allow_nan=False), min_size=2, max_size=80),
       p=st.sampled_from([2.5, 5, 10, 25, 50, 100]), seed=st.integers(0, 2**63 - 1))
def test_every_output_keeps_the_multiset_and_the_rank_bound(values, p, seed):
    x = np.array(values, dtype=float)
    n = x.shape[0]
    P = math.floor(Fraction(str(p)) * n / 100)
    if P < 1:
        with pytest.raises(SdcError, match="no value would move"):
            rs.rank_swap(x, p, seed=seed)
        return
    out = rs.rank_swap(x, p, seed=seed)
    np.testing.assert_array_equal(np.sort(out), np.sort(x))  # the same multiset
    order, partner = rs.rank_swap_partners(x, p, seed=seed)
    assert (partner[partner] == np.arange(n)).all()  # disjoint swaps
    assert (np.abs(partner - np.arange(n)) <= P).all()  # at most P ranks apart
    rank = np.empty(n, np.int64)
    rank[order] = np.arange(n)
    v = np.sort(x)
    low = v[np.maximum(rank - P, 0)]
    high = v[np.minimum(rank + P, n - 1)]
    assert ((out >= low) & (out <= high)).all()  # by value: within the values P ranks away


def test_p_is_a_decimal_percentage_and_must_move_something():
    assert rs.swap_distance("f", 0.29, 10_000) == 29  # 0.29 * 10000 / 100 in floating point is 28.999...
    assert rs.swap_distance("f", 100, 7) == 7
    with pytest.raises(SdcError, match=r"rank_swap: p = 0.05 allows swaps only between ranks floor\(p n / 100\) = 0 "
                                       r"apart for n = 834 values, so no value would move; p must be at least "
                                       r"100 / n = 0.119904 here"):
        rs.rank_swap(np.arange(834.0), 0.05)
    for p, message in ((0, r"p must be in \(0, 100\], got 0"), (101, r"p must be in \(0, 100\], got 101"),
                       (None, "p must not be NULL")):
        with pytest.raises(SdcError, match="rank_swap: " + message):
            rs.rank_swap([1.0, 2.0, 3.0], p)
    with pytest.raises(SdcError, match="rank_swap: needs at least 2 values to swap, got 1 "):
        rs.rank_swap([1.0], 50)


def test_seeds_reproduce_and_differ():
    x = np.random.default_rng(3).normal(size=500)
    np.testing.assert_array_equal(rs.rank_swap(x, 5, seed=1), rs.rank_swap(x, 5, seed=1))
    assert not np.array_equal(rs.rank_swap(x, 5, seed=1), rs.rank_swap(x, 5, seed=2))
    assert not np.array_equal(rs.rank_swap(x, 5), rs.rank_swap(x, 5))


def test_small_cases_by_hand():
    """n = 4: with P = 1 the pairs (0 1)(2 3) are forced; with P = 2 rank 0 takes 1 or 2 with
    probability 1/2 each, and the rest is forced."""
    assert exact_distribution(4, 1) == {(1, 0, 3, 2): 1}
    assert exact_distribution(4, 2) == {(1, 0, 3, 2): Fraction(1, 2), (2, 3, 0, 1): Fraction(1, 2)}
    seen = Counter(tuple(rs.rank_swap_partners(np.arange(4.0), 50, seed=s)[1].tolist()) for s in range(400))
    assert set(seen) == {(1, 0, 3, 2), (2, 3, 0, 1)}
    assert {tuple(rs.rank_swap_partners(np.arange(4.0), 25, seed=s)[1].tolist()) for s in range(50)} == {(1, 0, 3, 2)}


# --- SQL --------------------------------------------------------------------------------------


def test_sql_list_form_matches_numpy_and_keeps_nulls(con):
    got = con.execute("SELECT rank_swap([5, NULL, 1, 4, 2, NULL, 3, 9, 8]::INTEGER[], 40, seed := 4)").fetchone()[0]
    assert got[1] is None and got[5] is None
    want = rs.rank_swap([5.0, 1, 4, 2, 3, 9, 8], 40, seed=4)
    np.testing.assert_array_equal([v for v in got if v is not None], want)


def test_sql_table_form_keeps_each_stratum_multiset(con):
    con.execute("CREATE TABLE t AS SELECT i AS id, i % 3 AS g, (i * 37) % 101 AS x FROM range(300) r(i)")
    before = con.execute("SELECT g, list(x ORDER BY x) FROM t GROUP BY g ORDER BY g").fetchall()
    after = con.execute("SELECT g, list(x ORDER BY x) FROM rank_swap_table('t', 'x', 10, seed := 1, strata := 'g') "
                        "GROUP BY g ORDER BY g").fetchall()
    assert [(g, [float(v) for v in xs]) for g, xs in before] == after
    moved = con.execute("SELECT count(*) FROM rank_swap_table('t', 'x', 10, seed := 1) s JOIN t USING (id) "
                        "WHERE s.x <> t.x").fetchone()[0]
    assert moved > 250


def test_sql_errors_name_the_function(con):
    with pytest.raises(Exception, match="rank_swap: p = 1.0 allows swaps only between ranks"):
        con.execute("SELECT rank_swap([1, 2, 3], 1)").fetchall()
