"""Small strata (duckdb_sdc.strata): the pooling decision against a slow, obviously correct reference
on random stratum sizes, and what each method needs of a stratum."""

from __future__ import annotations

import numpy as np
import pytest

from duckdb_sdc import masking, strata
from duckdb_sdc._validate import SdcError
from duckdb_sdc.strata import REST_TARGET, Need


def _small(counts, needs) -> bool:
    return any(0 < c < nd.minimum for c, nd in zip(counts, needs))


def reference_nearest(rows, counts, needs):
    """The definition, step by step on explicit lists of member strata."""
    pools = [[i] for i in range(len(rows))]
    size = lambda p: sum(rows[i] for i in p)  # noqa: E731
    usable = lambda p: [sum(counts[i][r] for i in p) for r in range(len(needs))]  # noqa: E731
    while True:
        small = [j for j, p in enumerate(pools) if _small(usable(p), needs)]
        if not small:
            break
        if len(pools) == 1:
            return None  # refused
        j = min(small, key=lambda j: (size(pools[j]), pools[j][0]))
        neighbours = [x for x in (j - 1, j + 1) if 0 <= x < len(pools)]
        b = min(neighbours, key=lambda x: (size(pools[x]), x))
        lo, hi = sorted((j, b))
        pools[lo] = pools[lo] + pools[hi]
        del pools[hi]
    target = [None] * len(rows)
    for p in pools:
        label = max(p, key=lambda i: (rows[i], -i))
        for i in p:
            target[i] = label
    return target


def reference_rest(rows, counts, needs, rest_index):
    small = [i for i in range(len(rows)) if _small(counts[i], needs)]
    if not small:
        return list(range(len(rows)))
    members = set(small) | ({rest_index} if rest_index is not None else set())
    if _small([sum(counts[i][r] for i in members) for r in range(len(needs))], needs):
        return None
    return [(REST_TARGET if rest_index is None else rest_index) if i in members else i for i in range(len(rows))]


def _random_strata(rng):
    m = int(rng.integers(1, 12))
    r = int(rng.integers(1, 3))
    rows = rng.integers(1, 12, m)
    counts = [[int(rng.integers(0, n + 1)) if rng.random() < 0.3 else int(n) for _ in range(r)] for n in rows]
    needs = [Need(f"c{j}", int(rng.integers(1, 9)), "mdav_round", "k", 0) for j in range(r)]
    return [int(x) for x in rows], counts, needs


def _labels(m):
    return [f"s = {i}" for i in range(m)]


def test_nearest_equals_the_reference_on_random_strata():
    rng = np.random.default_rng(17)
    refused = pooled = 0
    for _ in range(3000):
        rows, counts, needs = _random_strata(rng)
        expected = reference_nearest(rows, counts, needs)
        if expected is None:
            refused += 1
            with pytest.raises(SdcError, match=r"all \d+ strata pooled together"):
                strata.pool("nearest", rows, counts, needs, _labels(len(rows)))
            continue
        got = strata.pool("nearest", rows, counts, needs, _labels(len(rows)))
        assert got == expected, (rows, counts, needs)
        pooled += got != list(range(len(rows)))
        # every pool is large enough, and pools are runs of consecutive strata
        for t in set(got):
            members = [i for i, x in enumerate(got) if x == t]
            assert members == list(range(members[0], members[-1] + 1))
            assert not _small([sum(counts[i][r] for i in members) for r in range(len(needs))], needs)
    assert refused > 50 and pooled > 500  # the random inputs exercise both outcomes


def test_rest_equals_the_reference_on_random_strata():
    rng = np.random.default_rng(18)
    outcomes = set()
    for _ in range(3000):
        rows, counts, needs = _random_strata(rng)
        rest_index = None if rng.random() < 0.5 else int(rng.integers(0, len(rows)))
        expected = reference_rest(rows, counts, needs, rest_index)
        if expected is None:
            outcomes.add("refused")
            with pytest.raises(SdcError, match=r"the rest stratum 'other' \(strata .* pooled\)"):
                strata.pool("rest", rows, counts, needs, _labels(len(rows)), rest_index=rest_index,
                            rest_label="'other'")
            continue
        got = strata.pool("rest", rows, counts, needs, _labels(len(rows)), rest_index=rest_index, rest_label="'other'")
        assert got == expected
        outcomes.add("pooled" if got != list(range(len(rows))) else "unchanged")
    assert outcomes == {"refused", "pooled", "unchanged"}


def test_nearest_by_hand():
    need = [Need("income", 5, "mdav_round", "k", 5)]
    # sizes 3, 9, 2, 6: stratum 2 (2 records) is the smallest small one; its neighbours hold 9 and 6:
    # pooled into stratum 3 (fewer records); then stratum 0 (3) into 1, the only neighbour
    rows = [3, 9, 2, 6]
    assert strata.pool("nearest", rows, [[r] for r in rows], need, _labels(4)) == [1, 1, 3, 3]
    # equal neighbours: the preceding one; the pool is labelled by its largest stratum (ties: the first)
    rows, need4 = [4, 2, 4], [Need("income", 4, "mdav_round", "k", 4)]
    assert strata.pool("nearest", rows, [[r] for r in rows], need4, _labels(3)) == [0, 0, 2]
    rows = [2, 4, 4]  # only one neighbour
    assert strata.pool("nearest", rows, [[r] for r in rows], need4, _labels(3)) == [1, 1, 2]
    # a stratum without usable values is never small; NULLs count towards the records, not the values
    assert strata.pool("nearest", [3, 6], [[0], [6]], need, _labels(2)) == [0, 1]
    assert strata.pool("nearest", [9, 6], [[3], [6]], need, _labels(2)) == [0, 0]


def test_refusal_names_the_stratum_its_size_and_k():
    need = [Need("income", 5, "mdav_round", "k", 5)]
    with pytest.raises(SdcError) as info:
        strata.pool("refuse", [8, 3], [[8], [3]], need, ["region = 'north'", "region = 'south'"],
                    func="mdav_round_table", hint="small_strata := 'nearest' pools it")
    assert str(info.value) == ("mdav_round_table: k = 5 is larger than the number of non-NULL values (3) of income "
                               "in stratum region = 'south'; small_strata := 'nearest' pools it")
    floor = strata.need("rank_swap", {"p": 50}, "income")
    with pytest.raises(SdcError, match=r"^f: rank_swap needs at least 2 non-NULL values of income, stratum "
                                           r"region = 'a' has 1$"):
        strata.pool("refuse", [1, 4], [[1], [4]], [floor], ["region = 'a'", "region = 'b'"], func="f")


@pytest.mark.parametrize("method, params, minimum", [
    ("mdav_round", {"k": 5}, 5), ("mdav_round", {"k": "auto"}, 2), ("idp_cbls", {"k": 4, "epsilon": 1}, 4),
    ("base_round", {"alpha": 3}, 3), ("mdav_multi_round", {"k": 3}, 3), ("box_release", [6, "mean(1)"], 6),
    ("ewd_round", {"c": 4}, 2), ("add_noise", {"level": 0.1}, 2), ("rank_swap", {"p": 50}, 2), ("rank_swap", {"p": 10}, 10),
    ("rank_swap", {"p": 30}, 4),
    ("dp_laplace", {"epsilon": 1, "lb": 0, "ub": 1}, 1),
])
def test_what_each_method_needs(method, params, minimum):
    """The need is the least size the method accepts: one record fewer is refused by the method itself
    (except discretisation, which accepts one value and releases it unchanged: the release's set-of-
    attraction check refuses that)."""
    assert strata.need(method, params, "x").minimum == minimum
    m = masking.method(method)
    args = m.arguments(params)
    data = (lambda n: np.arange(1.0, n + 1)) if m.data == masking.COLUMN else \
        (lambda n: np.column_stack([np.arange(1.0, n + 1), np.arange(n, 0, -1.0)]))
    masking.mask(method, data(max(minimum, 2) if method != "dp_laplace" else 1), args)
    if method not in ("ewd_round", "dp_laplace"):
        with pytest.raises(Exception, match=method):
            masking.mask(method, data(minimum - 1), args)
