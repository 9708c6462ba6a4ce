"""Global recoding (duckdb_sdc.methods.recoding) against obvious references: bands by scanning the
breaks, top and bottom coding, merging by a mapping, a hierarchy's ancestors, dates truncated by
calendar arithmetic, completed years by the birthday rule; NULLs stay NULL; bad input refused by
name with the offending values."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from duckdb_sdc import SdcError
from duckdb_sdc.methods import recoding as rc

import reference_recoding as ref


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-20, 20), min_size=2, max_size=6, unique=True).map(sorted),
       st.lists(st.integers(-20, 20), max_size=30), st.sampled_from(["left", "right"]))
def test_bands_equal_a_scan_of_the_breaks(breaks, xs, closed):
    inside = [x for x in xs if breaks[0] <= x <= breaks[-1]]
    labels = [f"b{j}" for j in range(len(breaks) - 1)]
    got = rc.band(inside + [None], breaks, labels, closed)
    assert got.tolist() == [labels[ref.band_of(x, breaks, closed)] for x in inside] + [None]


def test_band_labels_say_the_closed_side():
    assert rc.band([0, 18, 19, 65, 100], [0, 18, 65, 100]).tolist() == ["[0, 18]", "[0, 18]", "(18, 65]", "(18, 65]",
                                                                       "(65, 100]"]
    assert rc.band([0, 18, 64.5, 100], [0, 18, 65, 100], closed="left").tolist() == ["[0, 18)", "[18, 65)",
                                                                                    "[18, 65)", "[65, 100]"]
    assert rc.band([0.25], [0, 0.5, 1.0]).tolist() == ["[0, 0.5]"]


@pytest.mark.parametrize("call, message", [
    (lambda: rc.band([1, 150, 200, 7, -3, 500, 600, 700], [0, 100]),
     "band: breaks do not cover column x: -3, 150, 200, 500, 600 and 1 more outside [0, 100]"),
    (lambda: rc.band([1], [0, 0, 1]), "band: breaks must be strictly increasing, got 0 then 0"),
    (lambda: rc.band([1], [5]), "band: breaks must hold at least two numbers (one band), got 1"),
    (lambda: rc.band([1], [0, 10], labels=["a", "b"]), "band: labels must give one label per band (1), got 2"),
    (lambda: rc.band([1], [0, 10], closed="up"), "band: closed must be one of 'right', 'left', got 'up'"),
    (lambda: rc.band(["a"], [0, 10]), "band: column x must be numeric, got 'a'"),
    (lambda: rc.band([float("inf")], [0, 10]), "band: column x contains inf; NaN and infinite values are refused"),
])
def test_band_refuses_bad_input(call, message):
    with pytest.raises(SdcError) as info:
        call()
    assert str(info.value).startswith(message), str(info.value)


def test_top_and_bottom_coding_follow_sdcmicro():
    x = [1.0, 5.0, 10.0, None, 12.0]
    assert np.array_equal(rc.top_code(x, 10), [1, 5, 10, np.nan, 10], equal_nan=True)
    assert np.array_equal(rc.top_code(x, 9, 99), [1, 5, 99, np.nan, 99], equal_nan=True)
    assert np.array_equal(rc.bottom_code(x, 5), [5, 5, 10, np.nan, 12], equal_nan=True)
    with pytest.raises(SdcError, match="^top_code: top must be a finite number"):
        rc.top_code(x, float("nan"))


def test_merging_categories_renames_the_mapped_ones_only():
    got = rc.merge_categories(["a", "b", None, "c", "a"], {"a": "ab", "b": "ab"})
    assert got.tolist() == ["ab", "ab", None, "c", "ab"]
    with pytest.raises(SdcError, match="^merge_categories: mapping must not map to NULL"):
        rc.merge_categories(["a"], {"a": None})


HIERARCHY = [["1", "1-2", "*"], ["2", "1-2", "*"], ["3", "3-4", "*"], ["4", "3-4", "*"]]


def test_a_hierarchy_gives_each_value_its_ancestor():
    x = ["1", "3", None, "4"]
    assert rc.generalise(x, HIERARCHY, 0).tolist() == ["1", "3", None, "4"]
    assert rc.generalise(x, HIERARCHY, 1).tolist() == ["1-2", "3-4", None, "3-4"]
    assert rc.generalise(x, HIERARCHY, 2).tolist() == ["*", "*", None, "*"]


@pytest.mark.parametrize("call, message", [
    (lambda: rc.generalise(["1", "5", "6", "7", "8", "9", "10"], HIERARCHY, 1, column="age"),
     "generalise: hierarchy of column age lacks '5', '6', '7', '8', '9' and 1 more"),
    (lambda: rc.generalise(["1"], HIERARCHY + [["1", "0-1", "*"]], 1),
     "generalise: hierarchy of column x is not a tree: '1' at level 0 has two parents at level 1, '1-2' and '0-1'"),
    (lambda: rc.generalise(["1"], [["1", "a", "top"], ["2", "a", "other"]], 2),
     "generalise: hierarchy of column x is not a tree: 'a' at level 1 has two parents at level 2, 'top' and 'other'"),
    (lambda: rc.generalise(["1"], HIERARCHY, 3), "generalise: level must be in 0..2"),
    (lambda: rc.generalise(["1"], [["1", "a"], ["2"]], 1), "generalise: hierarchy of column x must have rows of one"),
])
def test_bad_hierarchies_are_refused(call, message):
    with pytest.raises(SdcError) as info:
        call()
    assert str(info.value).startswith(message), str(info.value)


def test_an_arx_hierarchy_file_is_read(tmp_path):
    path = tmp_path / "age.csv"
    path.write_text("1;1-2;*\n2;1-2;*\n", encoding="utf-8")
    assert rc.read_hierarchy(str(path)) == [["1", "1-2", "*"], ["2", "1-2", "*"]]


@settings(max_examples=200, deadline=None)
@given(st.dates(dt.date(1900, 1, 1), dt.date(2100, 12, 31)), st.sampled_from(["month", "quarter", "year"]))
def test_dates_truncate_to_the_first_day_of_their_period(day, unit):
    got = rc.truncate_dates(np.array([day, None], dtype="datetime64[D]"), unit)
    month = {"month": day.month, "quarter": (day.month - 1) // 3 * 3 + 1, "year": 1}[unit]
    assert got[0] == np.datetime64(dt.date(day.year, month, 1))
    assert np.isnat(got[1])


def test_timestamps_keep_their_unit():
    t = np.array(["2024-05-17T13:45:00"], dtype="datetime64[us]")
    got = rc.truncate_dates(t, "quarter")
    assert got.dtype == t.dtype and got[0] == np.datetime64("2024-04-01T00:00:00", "us")


@settings(max_examples=300, deadline=None)
@given(st.dates(dt.date(1900, 1, 1), dt.date(2020, 12, 31)), st.dates(dt.date(2020, 12, 31), dt.date(2100, 1, 1)))
def test_ages_are_completed_years(birth, reference):
    got = rc.age_in_years([birth], reference)
    assert got[0] == ref.completed_years(birth, reference)


def test_ages_on_29_february():
    births = [dt.date(2000, 2, 29)] * 3
    refs = [dt.date(2001, 2, 28), dt.date(2001, 3, 1), dt.date(2004, 2, 29)]
    assert rc.age_in_years(births, refs).tolist() == [0, 1, 4]
    assert np.isnan(rc.age_in_years([None], dt.date(2001, 1, 1))[0])
    with pytest.raises(SdcError, match="^age_in_years: column birth has birth dates after the reference date: '2030-01-01'"):
        rc.age_in_years([dt.date(2030, 1, 1)], dt.date(2020, 1, 1))
