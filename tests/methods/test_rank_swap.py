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


# --- top and bottom coding (sdcMicro's TopPercent / BottomPercent) and how sdcMicro's rankSwap relates ---


def reference_coded(x, p, top, bottom, seed):
    """sdcMicro's coding as its C++ (RankSwapping.h) defines it, in plain Python: the floor(n top / 100)
    largest and floor(n bottom / 100) smallest values (ties: the later records at the top, the earlier
    at the bottom) each replaced by their tail's mean, exactly; the m others swapped by Moore's process
    (reference_partners) within floor(p m / 100) ranks."""
    n = len(x)
    order = sorted(range(n), key=lambda i: x[i])  # stable: ties in input order
    v = [Fraction(x[i]) for i in order]
    t = math.floor(Fraction(str(top)) * n / 100)
    b = math.floor(Fraction(str(bottom)) * n / 100)
    if b:
        v[:b] = [sum(v[:b]) / b] * b
    if t:
        v[n - t:] = [sum(v[n - t:]) / t] * t
    m = n - t - b
    P = math.floor(Fraction(str(p)) * m / 100)
    key = int(np.random.SeedSequence(seed).generate_state(1, np.uint64)[0])
    partner = list(range(b)) + [b + j for j in reference_partners(m, P, key)] + list(range(n - t, n))
    out = [None] * n
    for rank, record in enumerate(order):
        out[record] = float(v[partner[rank]])
    return out


def test_top_and_bottom_coding_follows_sdcmicros_definition():
    rng = np.random.default_rng(11)
    for case in range(400):
        n = int(rng.integers(2, 200))
        x = rng.integers(0, max(2, n // 5), n).astype(float) if case % 2 else np.round(rng.lognormal(3, 1, n), 2)
        p, top, bottom = (float(rng.choice([5, 10, 25, 50, 100])), float(rng.choice([0, 2.5, 5, 10, 20])),
                          float(rng.choice([0, 1, 5, 10, 30])))
        t, b = math.floor(Fraction(str(top)) * n / 100), math.floor(Fraction(str(bottom)) * n / 100)
        m = n - t - b
        if m < 2 or math.floor(Fraction(str(p)) * m / 100) < 1:
            with pytest.raises(SdcError, match="rank_swap: "):
                rs.rank_swap(x, p, seed=case, top_percent=top, bottom_percent=bottom)
            continue
        got = rs.rank_swap(x, p, seed=case, top_percent=top, bottom_percent=bottom)
        want = reference_coded(x.tolist(), p, top, bottom, case)
        np.testing.assert_allclose(got, want, rtol=4.5e-16, atol=0)  # a tail mean within 2 ulps of the exact one
        assert math.isclose(got.sum(), x.sum(), rel_tol=1e-12)  # each tail keeps its sum
        if t + b == 0:
            np.testing.assert_array_equal(got, rs.rank_swap(x, p, seed=case))  # no coding: the plain swapping


def test_a_tie_across_the_edge_of_a_tail_codes_the_later_records_at_the_top():
    x = np.array([1.0, 9, 9, 9, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 0, 0, 0, 0, 0, 0])  # n = 20, top 10 %: t = 2
    out = rs.rank_swap(x, 50, seed=3, top_percent=10, bottom_percent=10)
    order, partner = rs.rank_swap_partners(x, 50, seed=3, top_percent=10, bottom_percent=10)
    assert order[-2:].tolist() == [3, 11] and partner[-2:].tolist() == [18, 19]  # the last two 9s, not swapped
    assert order[:2].tolist() == [12, 13] and partner[:2].tolist() == [0, 1]  # the first two 0s
    assert out[12] == out[13] == 0.0 and out[3] == out[11] == 9.0


def test_coded_tails_take_their_mean_at_the_extremes_of_the_range():
    for scale in (1.0, 1e300, 1e-300, 2.0 ** -1070):
        x = np.arange(1.0, 41.0) * scale
        out = rs.rank_swap(x, 50, seed=1, top_percent=10, bottom_percent=5)
        assert out[-4:].tolist() == [38.5 * scale] * 4 and out[:2].tolist() == [1.5 * scale] * 2
        assert np.array_equal(out, rs.rank_swap(np.arange(1.0, 41.0), 50, seed=1, top_percent=10,
                                                bottom_percent=5) * scale)


def test_coding_parameters_are_checked_by_name():
    x = np.arange(100.0)
    for kwargs, message in (({"top_percent": -1}, r"top_percent must be in \[0, 50\], got -1"),
                            ({"bottom_percent": 51}, r"bottom_percent must be in \[0, 50\], got 51"),
                            ({"top_percent": 30, "bottom_percent": 25},
                             r"top_percent \+ bottom_percent must be at most 50 \(the coded tails may hold at most "
                             r"half of the values\), got 30.0 \+ 25.0"),
                            ({"top_percent": None}, "top_percent must not be NULL")):
        with pytest.raises(SdcError, match="^rank_swap: " + message):
            rs.rank_swap(x, 10, **kwargs)
    with pytest.raises(SdcError, match=r"rank_swap: needs at least 2 values to swap besides the 1 top and bottom "
                                       r"coded, got 2"):
        rs.rank_swap([1.0, 2.0], 100, top_percent=50)
    with pytest.raises(SdcError, match=r"rank_swap: p = 10.0 allows swaps only between ranks floor\(p n / 100\) = 0 "
                                       r"apart for n = 9 values"):  # 10 values, one top-coded: 9 to swap
        rs.rank_swap(np.arange(10.0), 10, top_percent=10)


def test_least_values_is_the_first_size_from_which_every_list_can_be_swapped():
    """strata.need's minimum for rank swapping (small strata are pooled below it): brute force over n."""
    def ok(n, p, top, bottom):
        try:
            rs.rank_swap(np.arange(float(n)), p, seed=1, top_percent=top, bottom_percent=bottom)
            return True
        except SdcError:
            return False

    for p in (1, 2.5, 10, 33, 50, 100):
        for top, bottom in ((0, 0), (5, 5), (10, 0), (0, 12.5), (20, 30), (25, 25), (1, 49)):
            least = rs.least_values(p, top, bottom)
            hi = least + 60
            assert all(ok(n, p, top, bottom) for n in range(least, hi)), (p, top, bottom)
            assert not ok(least - 1, p, top, bottom), (p, top, bottom)
    assert rs.least_values(10) == 10 and rs.least_values(50) == 2 and rs.least_values(10, 5, 5) == 10


def sdcmicro_exact_distribution(n, P_fraction):
    """sdcMicro's rankSwap loop (RankSwapping.h, 5.8.1) without coding, by exact fractions: ranks from
    the largest value down (d = 0 the largest); each free d takes a partner uniform among the free d' in
    d + 1 .. r - 1, r = min(n, d + floor(n P)). Returned as partner vectors on ascending ranks."""
    reach = math.floor(Fraction(str(P_fraction)) * n)
    out: Counter = Counter()

    def walk(d, taken, partner, prob):
        while d < n and d in taken:
            d += 1
        if d == n:
            out[tuple(n - 1 - partner[n - 1 - a] for a in range(n))] += prob
            return
        taken = taken | {d}
        free = [k for k in range(d + 1, min(n, d + reach)) if k not in taken]
        if not free:
            walk(d + 1, taken, partner, prob)
            return
        for j in free:
            p2 = list(partner)
            p2[d], p2[j] = j, d
            walk(d + 1, taken | {j}, p2, prob * Fraction(1, len(free)))

    walk(0, frozenset(), list(range(n)), Fraction(1))
    return out


@pytest.mark.parametrize("n", [4, 5, 6, 7])
def test_sdcmicros_rankswap_is_this_one_mirrored_with_one_rank_less(n):
    """What docs/methods/perturbation.md says of sdcMicro 5.8.1: rankSwap(P) (a fraction) lets partners be
    at most floor(P n) - 1 ranks apart and ranks from the largest value down, so it is rank_swap with
    floor(p n / 100) = floor(P n) - 1 on the reversed ranking; rank_swap(p = 5) is not rankSwap(P = 0.05)."""
    mirror = lambda partner: tuple(n - 1 - partner[n - 1 - a] for a in range(n))  # noqa: E731
    for P in range(1, n):  # our distance P, theirs P + 1 ranks: P_fraction = (P + 1) / n
        ours = {mirror(k): q for k, q in exact_distribution(n, P).items()}
        assert sdcmicro_exact_distribution(n, Fraction(P + 1, n)) == ours
    assert sdcmicro_exact_distribution(n, Fraction(2, n)) != exact_distribution(n, 2)


def test_sql_forms_take_the_coding_options(con):
    got = con.execute("SELECT rank_swap(list(x ORDER BY i), 10, top_percent := 5, bottom_percent := 5, seed := 4) "
                      "FROM (SELECT i, (i * 37) % 101 AS x FROM range(200) r(i))").fetchone()[0]
    want = rs.rank_swap(((np.arange(200) * 37) % 101).astype(float), 10, seed=4, top_percent=5, bottom_percent=5)
    np.testing.assert_array_equal(got, want)
    con.execute("CREATE TABLE tc AS SELECT i AS id, (i * 37) % 101 AS x FROM range(200) r(i)")
    coded = con.execute("SELECT count(*) FILTER (WHERE x = 99.5), count(*) FILTER (WHERE x = 0.5) FROM "
                        "rank_swap_table('tc', 'x', 10, top_percent := 2, bottom_percent := 2)").fetchone()
    assert coded == (4, 4)  # the 4 largest (100, 100, 99, 99) and the 4 smallest (0, 0, 1, 1) by their means
    with pytest.raises(Exception, match=r"rank_swap: top_percent \+ bottom_percent must be at most 50"):
        con.execute("SELECT rank_swap([1, 2, 3, 4], 50, top_percent := 40, bottom_percent := 20)").fetchall()
