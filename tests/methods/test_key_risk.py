"""The risk of key combinations on numpy (duckdb_sdc.measures.keys) against the slow references of
tests/reference_keys.py on random tables with many ties and NULLs: key frequencies, individual risk,
SUDA2, l-diversity, t-closeness and the utility measures; and the refusals of bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference_keys as ref
from duckdb_sdc._validate import SdcError
from duckdb_sdc.measures import keys as km

NULLS = ("any", "category")


@st.composite
def tables(draw, max_n=14, max_keys=4, max_value=3, null_share=True):
    """(columns, rows, strata, weights): m key columns of small integers with NULLs (None), and
    rows the records as tuples."""
    n = draw(st.integers(1, max_n))
    m = draw(st.integers(1, max_keys))
    value = st.one_of(st.none(), st.integers(0, max_value)) if null_share else st.integers(0, max_value)
    cols = [draw(st.lists(value, min_size=n, max_size=n)) for _ in range(m)]
    strata = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    weights = draw(st.lists(st.sampled_from([1.0, 1.5, 2.0, 7.25, 100.0]), min_size=n, max_size=n))
    return cols, list(zip(*cols)), strata, weights


@settings(max_examples=300, deadline=None)
@given(tables(), st.sampled_from(NULLS), st.booleans(), st.booleans())
def test_frequencies_equal_pairwise_matching(table, nulls, weighted, stratified):
    cols, rows, strata, w = table
    got = km.key_frequencies(cols, w if weighted else None, strata=[strata] if stratified else None, nulls=nulls)
    fk, Fk = ref.frequencies(rows, w if weighted else None, strata if stratified else None, nulls)
    assert got.fk.tolist() == fk
    assert got.Fk.tolist() == pytest.approx(Fk, rel=1e-12)


def test_frequencies_of_text_dates_and_frames():
    frame = pd.DataFrame({"region": ["n", "n", None, "s", "s"],
                          "born": pd.to_datetime(["2000-01-01", "2000-01-01", "2001-05-05", None, "2001-05-05"]),
                          "ok": [True, True, False, False, None]})
    got = km.key_frequencies(frame)
    # n,2000,T twice; (NULL,2001,F) matches (s,NULL,F) and (s,2001,NULL); those two match each other
    assert got.fk.tolist() == [2, 2, 3, 3, 3]
    assert km.key_frequencies(frame, nulls="category").fk.tolist() == [2, 2, 1, 1, 1]
    assert km.key_frequencies(frame.to_numpy()).fk.tolist() == [2, 2, 3, 3, 3]


def test_an_all_null_record_matches_every_record():
    # sdcMicro's freqCalc leaves it out of the complete records' counts (module docstring); here it counts
    cols = [[1, 1, 2, None], [5, 6, 6, None]]
    assert km.key_frequencies(cols).fk.tolist() == [2, 2, 2, 4]


def test_weights_at_the_extremes_rescale_exactly():
    cols = [[1, 1, 2, None, 2], ["a", "a", "b", "b", None]]
    w = np.array([1.0, 3.0, 2.5, 4.0, 0.75])
    base = km.key_frequencies(cols, w).Fk
    for scale in (2.0 ** -1000, 2.0 ** 1000):
        assert km.key_frequencies(cols, w * scale).Fk.tolist() == (base * scale).tolist()


@pytest.mark.parametrize("call, words", [
    (lambda: km.key_frequencies([]), "key_frequencies: keys must hold at least one key column"),
    (lambda: km.key_frequencies([[], []]), "key_frequencies: keys has no records"),
    (lambda: km.key_frequencies([[1, 2], [1]]), "key_frequencies: keys has columns of different lengths [2, 1]"),
    (lambda: km.key_frequencies([[1, 2, 3]], [1.0, 0.0, -2.0]),
     "key_frequencies: weights must be finite numbers > 0 (NULL is refused: every record takes part); 2 are not: "
     "0.0, -2.0"),
    (lambda: km.key_frequencies([list(range(8))], [0.0] * 7 + [np.nan]),
     "8 are not: 0.0, 0.0, 0.0, 0.0, 0.0, ..."),
    (lambda: km.key_frequencies([[1, 2]], [1.0, None]), "1 are not: NULL"),
    (lambda: km.key_frequencies([[1, 2]], [1.0]), "key_frequencies: weights has 1 weights but there are 2 records"),
    (lambda: km.key_frequencies([[1, 2]], nulls="none"), "key_frequencies: nulls must be one of 'any', 'category'"),
    (lambda: km.key_frequencies([[1, 2]], strata=[[1]]), "key_frequencies: strata has 1 values but there are 2"),
])
def test_bad_input_is_refused_by_name(call, words):
    with pytest.raises(SdcError) as info:
        call()
    assert words in str(info.value), str(info.value)


@settings(max_examples=250, deadline=None)
@given(tables(max_n=12, max_keys=4, max_value=2), st.sampled_from(NULLS), st.booleans(), st.sampled_from(["elliot", "suda2"]))
def test_suda2_msus_equal_brute_force_over_all_subsets(table, nulls, stratified, scores):
    cols, rows, strata, _ = table
    got = km.suda2(cols, strata=[strata] if stratified else None, nulls=nulls, scores=scores)
    expected = ref.msus(rows, nulls, strata if stratified else None)
    names = [f"key{j}" for j in range(len(cols))]
    assert got.msus == [[tuple(names[j] for j in S) for S in found] for found in expected]
    assert got.suda_score.tolist() == pytest.approx([ref.suda_score(f, len(cols), scores) for f in expected])


def test_dis_suda_follows_sdcmicros_formula():
    cols = [[1, 1, 2, 3, 3, 4], [1, 2, 2, 1, 1, 1], [1, 1, 1, 2, 2, 2]]
    got = km.suda2(cols, dis_fraction=0.1)
    fk = km.key_frequencies(cols).fk
    pairs, q = float((fk == 2).sum()), 1 + (8 - 3) / 20
    scored = got.suda_score > 0
    adj = (got.suda_score[scored] ** -q).sum()
    expected = np.where(scored, 1 / (1 + pairs * 0.9 / 0.1 / (np.where(scored, got.suda_score, 1) ** q * adj)), 0.0)
    assert got.dis_suda_score.tolist() == pytest.approx(expected.tolist(), rel=1e-14)
    assert got.msus[0] == [("key0", "key1"), ("key1", "key2")] and got.msus[5] == [("key0",)]
    assert got.msus[3] == got.msus[4] == [] and got.dis_suda_score[3] == 0.0  # a pair: no MSU


@settings(max_examples=200, deadline=None)
@given(tables(max_n=16, max_keys=3), st.sampled_from(NULLS), st.booleans(), st.data())
def test_l_diversity_and_t_closeness_equal_pairwise_matching(table, nulls, stratified, data):
    cols, rows, strata, _ = table
    sens = data.draw(st.lists(st.one_of(st.none(), st.sampled_from(["a", "b", "c"])), min_size=len(rows),
                              max_size=len(rows)))
    g = [strata] if stratified else None
    got = km.l_diversity(cols, sens, strata=g, nulls=nulls)
    distinct, entropy = ref.l_diversity(rows, sens, nulls, strata if stratified else None)
    assert got.distinct.tolist() == distinct
    assert got.entropy.tolist() == pytest.approx(entropy, rel=1e-12)
    t = km.t_closeness(cols, sens, strata=g, nulls=nulls)
    assert t.tolist() == pytest.approx(ref.t_closeness(rows, sens, nulls, strata if stratified else None), abs=1e-12)


def test_a_sensitive_column_that_is_a_key_is_refused():
    frame = pd.DataFrame({"a": [1, 2, 2], "b": ["x", "y", "y"]})
    for f in (km.l_diversity, km.t_closeness):
        with pytest.raises(SdcError, match=f"{f.__name__}: sensitive column 'b' is also a key"):
            f(frame, frame["b"])


@settings(max_examples=200, deadline=None)
@given(tables(max_n=16, max_keys=3, null_share=False), st.booleans(), st.data())
def test_utility_measures_equal_their_definitions(table, stratified, data):
    cols, rows, strata, _ = table
    n = len(rows)
    # the release: some values suppressed (NULL), some categories merged (value // 2)
    suppress = [data.draw(st.lists(st.booleans(), min_size=n, max_size=n)) for _ in cols]
    released = [[None if s else v // 2 for v, s in zip(c, sup)] for c, sup in zip(cols, suppress)]
    got = km.suppression(cols, released)
    for j, name in enumerate(f"key{j}" for j in range(len(cols))):
        assert got.per_column[name][:2] == (n, sum(suppress[j]))
    assert got.per_record.tolist() == [sum(s[i] for s in suppress) for i in range(n)]
    assert got.record_share.tolist() == pytest.approx([sum(s[i] for s in suppress) / len(cols) for i in range(n)])
    g = [strata] if stratified else None
    loss = km.class_loss(released, strata=g)
    dm, aecs = ref.class_loss(list(zip(*released)), strata if stratified else None)
    assert loss["discernibility"] == dm and loss["average_class_size"] == pytest.approx(aecs)
    nue = km.non_uniform_entropy(cols, released, strata=g)
    expected = ref.non_uniform_entropy(cols, released, strata if stratified else None)
    assert [nue[f"key{j}"] for j in range(len(cols))] == pytest.approx(expected, abs=1e-9)
    assert nue["total"] == pytest.approx(sum(expected), abs=1e-9)
