"""Equal-frequency discretisation that keeps ties together and still balances: the cut rule of
`duckdb_sdc.methods.discretisation` ('efd', `efd_split`) against brute force over every cut set, its
two exact programs against each other, and the classic nearest-gap split where there are no ties."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from duckdb_sdc import SdcError
from duckdb_sdc.methods import discretisation as disc
from reference_discretisation import efd_cuts_reference, efd_lowest_optimum, efd_nearest_gap, squared_sizes


def _positions(counts) -> list[int]:
    pos = [0]
    for k in counts:
        pos.append(pos[-1] + int(k))
    return pos


def brute_force_cuts(counts, c) -> list[int]:
    """Every set of c' - 1 gaps: the least sum of squared sizes; the nearest-gap cuts if they reach
    it, else the lexicographically smallest set that does."""
    pos = _positions(counts)
    n, gaps = pos[-1], pos[1:-1]
    near = efd_nearest_gap(counts, c)
    best = lowest_optimum_brute_force(counts, c)
    return near if squared_sizes(near, n) == squared_sizes(best, n) else best


def lowest_optimum_brute_force(counts, c) -> list[int]:
    pos = _positions(counts)
    n, gaps = pos[-1], pos[1:-1]
    ce = min(c, len(counts))
    return list(min((squared_sizes(cuts, n), cuts) for cuts in itertools.combinations(gaps, ce - 1))[1])


def split_cuts(counts, c) -> list[int]:
    """efd_split's bounds over the distinct values, as cut positions."""
    pos = _positions(counts)
    return [pos[d] for d in disc.efd_split(counts, c)[1:-1].tolist()]


def random_counts(rng, i, max_m=11):
    m = int(rng.integers(1, max_m + 1))
    kind = i % 4
    if kind == 0:
        counts = rng.integers(1, 4, m)
    elif kind == 1:
        counts = rng.integers(1, 30, m)
    elif kind == 2:  # mostly single values, a few large groups
        counts = np.where(rng.random(m) < 0.25, rng.integers(5, 60, m), 1)
    else:
        counts = np.ones(m, np.int64)
        counts[int(rng.integers(0, m))] = int(rng.integers(1, 5 * m))
    return counts.astype(np.int64), int(rng.integers(1, m + 2))


def forced(counts, c, program):
    """One of the two exact programs, run on every gap (no shortcut)."""
    pos = np.cumsum(counts)
    n, gaps = int(pos[-1]), pos[:-1].astype(np.int64)
    ce = min(c, len(counts))
    if ce <= 1:
        return []
    if program == "windowed":
        lo = np.zeros(ce - 1, np.int64)
        hi = np.full(ce - 1, gaps.shape[0], np.int64)
        cuts = disc._efd_windowed(gaps, np.int64(n), ce, lo, hi, np.iinfo(np.int64).max)
    else:
        cuts = disc._efd_aliens(gaps, n, ce, False)
    return [int(gaps[j]) for j in cuts]


def test_efd_split_equals_brute_force_over_every_cut_set():
    rng = np.random.default_rng(11)
    for i in range(3000):
        counts, c = random_counts(rng, i)
        assert split_cuts(counts, c) == brute_force_cuts(counts, c), f"counts={counts.tolist()} c={c}"


@pytest.mark.parametrize("program", ["windowed", "aliens"])
def test_each_exact_program_finds_the_lowest_optimum(program):
    rng = np.random.default_rng(12 if program == "windowed" else 13)
    for i in range(2000):
        counts, c = random_counts(rng, i)
        assert forced(counts, c, program) == lowest_optimum_brute_force(counts, c)[: max(0, min(c, len(counts)) - 1)], \
            f"counts={counts.tolist()} c={c}"


def test_the_reference_programs_agree_with_brute_force():
    """tests/reference_discretisation's dynamic program (used on larger inputs) is itself checked."""
    rng = np.random.default_rng(14)
    for i in range(1500):
        counts, c = random_counts(rng, i)
        assert efd_lowest_optimum(counts, c) == lowest_optimum_brute_force(counts, c)
        assert efd_cuts_reference(counts, c) == brute_force_cuts(counts, c)


def test_larger_inputs_with_heavy_ties_against_the_reference_program():
    rng = np.random.default_rng(15)
    for _ in range(120):
        m = int(rng.integers(10, 45))
        counts = np.where(rng.random(m) < 0.3, rng.integers(2, 80, m), 1).astype(np.int64)
        c = int(rng.integers(2, 16))
        assert split_cuts(counts, c) == efd_cuts_reference(counts, c), f"counts={counts.tolist()} c={c}"
        lowest = efd_lowest_optimum(counts, c)
        for program in ("windowed", "aliens"):
            assert forced(counts, c, program) == lowest


def test_without_ties_the_split_is_the_nearest_gap_rule():
    rng = np.random.default_rng(16)
    for _ in range(300):
        n = int(rng.integers(1, 400))
        c = int(rng.integers(1, 30))
        counts = np.ones(n, np.int64)
        assert split_cuts(counts, c) == efd_nearest_gap(counts, c)
    x = np.random.default_rng(4).normal(size=1003)
    sizes = np.bincount(disc.discretise_labels(x, 10, "efd"))
    assert sizes.tolist() == [100, 101, 100, 100, 100, 101, 100, 100, 101, 100]


def test_a_large_tie_group_no_longer_leaves_tiny_intervals():
    x = np.array([0.0] * 90 + list(range(1, 11)))
    assert np.bincount(disc.discretise_labels(x, 3, "efd")).tolist() == [90, 5, 5]
    assert disc.efd_split([90] + [1] * 10, 3).tolist() == [0, 1, 6, 11]
    # mirrored: the big group last
    x = np.array(list(range(1, 11)) + [11.0] * 90)
    assert np.bincount(disc.discretise_labels(x, 3, "efd")).tolist() == [5, 5, 90]


def test_labels_follow_the_split_of_the_counts():
    rng = np.random.default_rng(17)
    for _ in range(200):
        x = rng.integers(0, int(rng.integers(2, 40)), int(rng.integers(1, 300))).astype(float)
        c = int(rng.integers(1, 12))
        values, counts = np.unique(x, return_counts=True)
        bounds = disc.efd_split(counts, c)
        per_value = np.repeat(np.arange(bounds.shape[0] - 1), np.diff(bounds))
        want = per_value[np.searchsorted(values, x)]
        np.testing.assert_array_equal(disc.discretise_labels(x, c, "efd"), want)


def test_zero_inflated_column_balances_the_rest_and_both_programs_agree():
    """20% zeros: the zeros form one interval and the remaining values are split evenly, whichever
    exact program runs."""
    rng = np.random.default_rng(18)
    for n, c in ((200_000, 50), (20_000, 20)):
        zeros = n // 5
        x = np.concatenate([np.zeros(zeros), np.exp(rng.normal(size=n - zeros))])
        sizes = np.bincount(disc.discretise_labels(x, c, "efd"))
        assert sizes[0] == zeros
        rest = n - zeros
        assert set(sizes[1:].tolist()) <= {rest // (c - 1), rest // (c - 1) + 1}
        counts = np.unique(x, return_counts=True)[1]
        assert split_cuts(counts, c) == forced(counts, c, "aliens")
    assert forced(counts, c, "aliens") == forced(counts, c, "windowed")


def test_counts_beyond_2_to_the_30_are_exact_python_integers():
    rng = np.random.default_rng(19)
    for _ in range(40):
        m = int(rng.integers(2, 9))
        counts = [int(k) for k in rng.integers(1, 2**33, m)]
        counts[int(rng.integers(0, m))] = 1
        c = int(rng.integers(2, m + 1))
        pos = _positions(counts)
        n = pos[-1]
        assert split_cuts(counts, c) == brute_force_cuts(counts, c), f"counts={counts} c={c}"
        gaps = np.array(pos[1:-1], dtype=object)
        ce = min(c, m)
        lowest = lowest_optimum_brute_force(counts, c)
        assert [pos[1:-1][j] for j in disc._efd_aliens(gaps, n, ce, True)] == lowest
        lo = np.zeros(ce - 1, np.int64)
        hi = np.full(ce - 1, len(gaps), np.int64)
        assert [pos[1:-1][j] for j in disc._efd_windowed.py_func(gaps, n, ce, lo, hi, 1 << 200)] == lowest


def test_tarragona_paid_up_capital_at_25_intervals(shared_data):
    v = pd.read_csv(shared_data / "Tarragona.csv")["PAID.UP.CAPITAL"].to_numpy(float)
    sizes = np.bincount(disc.discretise_labels(v, 25, "efd"))
    assert sizes.shape[0] == 25
    # the nearest-gap rule gave intervals of 1, 1, 2, 2 and 2 firms; the largest group of equal
    # values (199 firms) stays one interval and every other interval holds 21 firms or more
    assert sizes.min() >= 21 and sizes.max() == 199
    counts = np.unique(v, return_counts=True)[1]
    assert split_cuts(counts, 25) == forced(counts, 25, "aliens") == forced(counts, 25, "windowed")


@pytest.mark.parametrize("counts, c, message", [
    ([], 2, "efd_split: counts must be a non-empty 1-D array"),
    ([3, 0, 2], 2, "efd_split: every count must be >= 1, got 0"),
    ([1.5, 2], 2, "efd_split: counts must be integers"),
    ([1, 2], 0, "efd_split: c must be >= 1, got 0"),
    ([1, 2], None, "efd_split: c must not be NULL"),
])
def test_efd_split_refuses_bad_input(counts, c, message):
    with pytest.raises(SdcError, match=message.replace("(", r"\(")):
        disc.efd_split(counts, c)
