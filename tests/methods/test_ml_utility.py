"""ml_utility (train on masked, test on original, and the reverse) against a plain loop over the
folds with scikit-learn, its reproducibility, the error without the extra, and the report section."""

from __future__ import annotations

import importlib
import subprocess
import sys
import textwrap

import duckdb
import numpy as np
import pandas as pd
import pytest

from duckdb_sdc import SdcError
from duckdb_sdc.measures.ml_utility import ml_utility
from duckdb_sdc.release import SpecError, load_spec, release
from duckdb_sdc.release.report import KEY, MASKED, ORIGINAL, Evaluation
from duckdb_sdc.release.report_ml import ML_UTILITY, ml_section
from release_helpers import base_doc, people, write_db, write_spec

report_module = importlib.import_module("duckdb_sdc.release.report")  # the package exports a function of that name

sklearn = pytest.importorskip("sklearn")
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor  # noqa: E402
from sklearn.metrics import accuracy_score, r2_score  # noqa: E402
from sklearn.model_selection import KFold  # noqa: E402
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor  # noqa: E402


def reference(x, xm, y, ym, task, model, folds, seed):
    """Every fold by hand: fit on the other folds of one side, predict the fold on each side."""
    classes = {("classification", "decision_tree"): DecisionTreeClassifier,
               ("regression", "decision_tree"): DecisionTreeRegressor,
               ("classification", "random_forest"): RandomForestClassifier,
               ("regression", "random_forest"): RandomForestRegressor}
    make = classes[task, model]
    kw = {"random_state": seed} | ({"n_estimators": 100, "n_jobs": 1} if model == "random_forest" else {})
    side = {"original": (x, y), "masked": (xm, ym)}
    pred = {w: [None] * len(y) for w in ("original", "masked_to_original", "original_to_masked", "masked")}
    for train, test in KFold(folds, shuffle=True, random_state=seed).split(x):
        for a in ("original", "masked"):
            fitted = make(**kw).fit(side[a][0][train], side[a][1][train])
            for b in ("original", "masked"):
                way = a if a == b else f"{a}_to_{b}"
                for i, p in zip(test, fitted.predict(side[b][0][test])):
                    pred[way][i] = p
    score = accuracy_score if task == "classification" else r2_score
    truth = {"original": y, "masked_to_original": y, "original_to_masked": ym, "masked": ym}
    return {w: score(truth[w], np.array(p)) for w, p in pred.items()}


def _data(seed, n=300):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3))
    label = (x[:, 0] + 0.5 * x[:, 1] > 0).astype(int) + (x[:, 2] > 1).astype(int)
    xm = x + rng.normal(size=x.shape) * 0.7
    target = 2 * x[:, 0] - x[:, 1] + rng.normal(size=n) * 0.1
    return x, xm, label, target, target + rng.normal(size=n) * 0.5


@pytest.mark.parametrize("task, model", [("classification", "decision_tree"), ("regression", "decision_tree"),
                                         ("classification", "random_forest"), ("regression", "random_forest")])
def test_scores_equal_a_plain_loop_over_the_folds(task, model):
    x, xm, label, target, target_m = _data(1, n=200 if model == "random_forest" else 300)
    y, ym = (label, label) if task == "classification" else (target, target_m)
    got = ml_utility(x, xm, y, ym, task=task, model=model, folds=4, seed=3)
    want = reference(x, xm, y, ym, task, model, 4, 3)
    for way, value in want.items():
        assert got[way] == value, way
    assert got["metric"] == ("accuracy" if task == "classification" else "r2")
    assert got["difference"] == want["original"] - want["masked_to_original"]


def test_unmasked_data_lose_nothing_and_noise_costs_utility():
    x, xm, label, *_ = _data(2)
    same = ml_utility(x, x, label)
    assert same["original"] == same["masked_to_original"] == same["original_to_masked"] == same["masked"]
    assert same["difference"] == 0
    noisy = ml_utility(x, xm, label)
    assert noisy["masked_to_original"] < noisy["original"] - 0.05


def test_reproducible_with_a_seed():
    x, xm, _, target, target_m = _data(3, n=120)
    a = ml_utility(x, xm, target, target_m, task="regression", model="random_forest", seed=5)
    assert a == ml_utility(x, xm, target, target_m, task="regression", model="random_forest", seed=5)
    assert a != ml_utility(x, xm, target, target_m, task="regression", model="random_forest", seed=6)


@pytest.mark.parametrize("call, message", [
    (lambda x, y: ml_utility(x, x[:-1], y), r"ml_utility: x and xm must have the same shape"),
    (lambda x, y: ml_utility(x, x, y[:-1]), r"ml_utility: y must hold one value per record \(300\)"),
    (lambda x, y: ml_utility(x, x, y, folds=1), "ml_utility: folds must be an integer >= 2, got 1"),
    (lambda x, y: ml_utility(x, x, y, folds=301), r"ml_utility: folds = 301 is larger than the number of records \(300\)"),
    (lambda x, y: ml_utility(x, x, y, task="ranking"), "ml_utility: task must be one of 'classification', 'regression'"),
    (lambda x, y: ml_utility(x, x, y, model="svm"), "ml_utility: model must be one of 'decision_tree', 'random_forest'"),
    (lambda x, y: ml_utility(np.where(x > 2, np.nan, x), x, y), "ml_utility: x contains nan"),
    (lambda x, y: ml_utility(x, x, np.array(["a"] * 300), task="regression"), "ml_utility: y must be numeric"),
    (lambda x, y: ml_utility(x, x, y, seed=-1), r"ml_utility: seed must be an integer in \[0, 2\^63\), got -1"),
])
def test_bad_input_is_refused(call, message):
    x, _, label, *_ = _data(4)
    with pytest.raises(SdcError, match=message):
        call(x, label)


def test_without_scikit_learn_the_error_names_the_extra():
    code = textwrap.dedent("""
        import sys
        sys.modules["sklearn"] = None  # what an environment without the package gives: ImportError
        import numpy as np
        from duckdb_sdc.measures.ml_utility import ml_utility
        try:
            ml_utility(np.zeros((6, 1)), np.zeros((6, 1)), np.arange(6) % 2)
        except Exception as e:
            print(e)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.stdout.strip() == ("ml_utility: needs scikit-learn, which is the optional extra 'ml': "
                                   "pip install 'duckdb-sdc[ml]'"), done.stderr


# --- the report section -----------------------------------------------------------------------


def _evaluation(con, original: pd.DataFrame, masked: pd.DataFrame, names) -> Evaluation:
    con.register("o_df", original)
    con.register("m_df", masked)
    con.execute(f'CREATE TEMP VIEW {ORIGINAL} AS SELECT id AS {KEY}, * FROM o_df')
    con.execute(f'CREATE TEMP VIEW {MASKED} AS SELECT id AS {KEY}, * FROM m_df')
    return Evaluation(con=con, spec=None, masked=tuple(names), quasi_identifiers=tuple(names))


def test_section_rows_equal_ml_utility_per_target_column():
    x, xm, *_ = _data(5)
    ids = np.arange(300)
    original = pd.DataFrame({"id": ids, "a": x[:, 0], "b": x[:, 1], "c": x[:, 2]})
    masked = pd.DataFrame({"id": ids[::-1], "a": xm[::-1, 0], "b": xm[::-1, 1], "c": xm[::-1, 2]})  # joined on the key
    masked.loc[3, "b"] = np.nan  # record 296 is incomplete: left out
    con = duckdb.connect()
    rows = ml_section(_evaluation(con, original, masked, ["a", "b", "c"]))
    keep = ids != 296
    for j, name in enumerate(["a", "b", "c"]):
        others = [i for i in range(3) if i != j]
        want = ml_utility(x[keep][:, others], xm[keep][:, others], x[keep, j], xm[keep, j], task="regression", seed=0)
        got = {r.measure: r.value for r in rows if r.column == name}
        assert got == {f"ml_utility.{w}": want[w] for w in ("original", "masked_to_original", "original_to_masked",
                                                            "difference")}
    assert {r.section for r in rows} == {ML_UTILITY}


def test_section_explains_when_it_has_no_values():
    con = duckdb.connect()
    df = pd.DataFrame({"id": [1, 2, 3], "a": [1.0, 2.0, 3.0], "b": [1.0, 2.0, 3.0]})
    one = ml_section(_evaluation(con, df, df, ["a"]))
    assert [(r.value, r.note) for r in one] == [(None, "needs at least two columns masked as values (one is the "
                                                       "target, the others the features)")]
    few = ml_section(_evaluation(duckdb.connect(), df, df, ["a", "b"]))
    assert few[0].note == "3 complete records; 5 folds need at least 5"


def test_section_in_the_report_of_a_real_release(tmp_path):
    """[evaluation] ml_utility = true adds the section to the report; without it there is none."""
    write_db(tmp_path / "src.duckdb", "people", people(300))
    doc = base_doc()
    spec = load_spec(write_spec(tmp_path, doc))
    release(spec)
    assert ML_UTILITY not in set(report_module.report(spec)["section"])
    doc["evaluation"] = {"ml_utility": True}
    spec = load_spec(write_spec(tmp_path, doc))
    df = report_module.report(spec)
    section = df[(df["section"] == ML_UTILITY) & (df["measure"] != "verdict")]
    assert dict(zip(section["measure"], section["direction"]))["ml_utility.difference"] == "lower"
    assert sorted(section["column"].unique()) == ["expenses", "income"]
    values = dict(zip(section["measure"] + "/" + section["column"], section["value"]))
    # income and expenses are strongly related, and MDAV / optimal microaggregation keep that
    assert values["ml_utility.original/expenses"] > 0.5
    assert values["ml_utility.masked_to_original/expenses"] > 0.5


def test_the_spec_key_takes_only_a_boolean(tmp_path):
    write_db(tmp_path / "src.duckdb", "people", people(20))
    doc = base_doc()
    doc["evaluation"] = {"ml_utility": "yes"}
    with pytest.raises(SpecError, match=r"evaluation\.ml_utility: must be true or false, got 'yes'"):
        load_spec(write_spec(tmp_path, doc))
