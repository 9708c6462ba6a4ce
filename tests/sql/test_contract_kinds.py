"""The parameter kinds (duckdb_sdc.params), the error type and the masking path, on their own: every
kind refuses its invalid examples in Python as the SQL functions do, errors are renamed and never a raw
Python exception, the release spec reads the kinds, and the masking path of duckdb_sdc.masking is the
one the SQL functions take."""

from __future__ import annotations

import duckdb
import numpy as np
import pytest

from duckdb_sdc import masking, methods, params
from duckdb_sdc._validate import SdcError, fail, named
from duckdb_sdc.params import Param, stratum_seed
from duckdb_sdc.release.methods import METHODS as RELEASE_METHODS
from duckdb_sdc.release.methods import check_value
from duckdb_sdc.sql import REGISTRY


def _python(literal: str):
    """A kind's SQL literal as SQL hands it to a UDF: text (parameters arrive as VARCHAR), None for NULL."""
    con = duckdb.connect()
    value = con.execute(f"SELECT ({literal})::VARCHAR").fetchone()[0]
    con.close()
    return value


def _scalar_kinds():
    seen = {}
    for row in REGISTRY:
        for p in row.params:
            if isinstance(p.kind, (params.Data, params.Name, params.ColumnNames,
                                   params.Weights, params.PerColumn, params.SqlTyped)):
                continue
            seen.setdefault(id(p.kind), (row, p))
    return list(seen.values())


@pytest.mark.parametrize("row, param", _scalar_kinds(), ids=lambda v: getattr(v, "name", ""))
def test_every_kind_refuses_its_invalid_examples_in_python(row, param):
    for literal in param.kind.invalid:
        if literal == "1000000":  # too large for the data, which the check is given as n
            with pytest.raises(SdcError, match=rf"^f: {param.name} = 1000000 is larger"):
                param.check(_python(literal), "f", n=12)
            continue
        with pytest.raises(SdcError) as info:
            param.check(_python(literal), "f")
        assert str(info.value).startswith(f"f: {param.name} "), str(info.value)
        assert info.value.func == "f" and info.value.param == param.name


_NUMBER_KINDS = (params.GroupSize, params.Count, params.Integer, params.Number, params.Seed, params.PerColumn)


@pytest.mark.parametrize("row, param", [(r, p) for r in REGISTRY for p in r.params
                                        if isinstance(p.kind, _NUMBER_KINDS)], ids=lambda v: getattr(v, "name", ""))
def test_every_number_kind_tries_null_a_negative_and_nan(row, param):
    """The generated contract tries a number parameter's kind's invalid examples: NULL (unless the kind
    allows it), a negative value (unless its range holds one) and NaN must be among them."""
    kind = param.kind
    bad = kind.invalid
    assert params.NAN in bad, (row.name, param.name, bad)
    nullable = getattr(kind, "nullable", False) or isinstance(kind, params.Seed)
    assert ("NULL" in bad) != nullable, (row.name, param.name, bad)
    number = kind.each if isinstance(kind, params.PerColumn) else kind
    try:
        number.check(-1, "f", param.name, n=12)
        negative_allowed = True
    except SdcError:
        negative_allowed = False
    assert negative_allowed or any(b.startswith("-") and b != "-inf" for b in bad), (row.name, param.name, bad)


@pytest.mark.parametrize("row, param", _scalar_kinds(), ids=lambda v: getattr(v, "name", ""))
def test_every_kind_accepts_its_valid_example(row, param):
    param.check(_python(param.valid), "f", n=12)


def test_kind_checks_convert_what_sql_hands_over():
    assert params.GROUP_SIZE_AUTO.check("5", "f", "k", n=10) == 5
    assert params.GROUP_SIZE_AUTO.check(" AUTO ", "f", "k") == params.AUTO
    assert params.INTERVALS.check(3.0, "f", "c") == 3
    assert params.FLAG.check("true", "f", "x") is True and params.FLAG.check(False, "f", "x") is False
    assert params.SEED.check(None, "f", "seed") is None and params.SEED.check("7", "f", "seed") == 7
    assert params.FRACTION.check("1", "f", "r") == 1.0
    assert params.DISTANCE.check("[1.5, 2]", "f", "eps", n=2).tolist() == [1.5, 2.0]
    assert params.DISTANCE.check("3", "f", "eps", n=2).tolist() == [3.0, 3.0]
    assert params.ATTRIBUTE_NAMES.check('["a", "b"]', "f", "names") == ["a", "b"]
    with pytest.raises(SdcError, match=r"^f: seed must be an integer in \[0, 2\^63\), got 9223372036854775808$"):
        params.SEED.check(2**63, "f", "seed")
    with pytest.raises(SdcError, match=r"^f: k must be >= 3 \(iDP-CBLS"):
        params.CBLS_CLUSTER_SIZE.check(2, "f", "k")
    with pytest.raises(SdcError, match=r"^f: eps must be one number or one per attribute \(2\), got 3$"):
        params.DISTANCE.check([1, 2, 3], "f", "eps", n=2)


def test_a_release_spec_value_is_checked_against_the_kind():
    k = RELEASE_METHODS["mdav_round"].param("k")
    assert check_value(k, 5) is None and check_value(k, "auto") is None
    assert check_value(k, "five") == "INTEGER or 'auto'" and check_value(k, 2.5) == "INTEGER or 'auto'"
    assert check_value(k, True) == "INTEGER or 'auto'"
    eps = RELEASE_METHODS["box_release"].param("eps")
    assert check_value(eps, [1, 2.5]) is None and check_value(eps, 0.5) is None
    assert check_value(eps, "wide") == "DOUBLE or DOUBLE[]"
    assert check_value(RELEASE_METHODS["ewd_round"].param("stochastic"), 1) == "BOOLEAN"
    # a plug-in declares a parameter by its SQL type; a type the kinds cannot read is an error naming it
    assert check_value(Param("p", "INTEGER[]"), [1, 2]) is None
    with pytest.raises(ValueError, match="unknown SQL type 'INTEGR'"):
        Param("p", "INTEGR")


def test_every_registered_parameter_has_a_kind_and_a_doc():
    for row in REGISTRY:
        for p in row.params:
            assert isinstance(p.kind, params.Kind), (row.name, p.name)
            assert not isinstance(p.kind, params.SqlTyped), f"{row.name}.{p.name}: declare a kind, not a type"
            assert p.doc and p.type, (row.name, p.name)
            if p.default is not None:
                params.literal_value(p.default)  # a default the release can read


def test_the_same_names_mean_the_same_thing():
    """`seed` is one kind everywhere; `k` is always a group size (never an interval width); the
    standardisation switch is spelt as the package spells it."""
    for row in REGISTRY:
        for p in row.params:
            if p.name == "seed":
                assert p.kind is params.SEED, row.name
            if p.name == "k":
                assert isinstance(p.kind, params.GroupSize), row.name
            assert p.name != "standardize", row.name


def test_errors_are_renamed_with_their_parameter():
    err = fail("microaggregate", "x contains nan; NaN and infinite values are refused")
    assert err.func == "microaggregate" and err.param == "x"
    renamed = err.renamed("mdav_round", {"x": "xs"})
    assert str(renamed) == "mdav_round: xs contains nan; NaN and infinite values are refused"
    assert renamed.param == "xs" and type(renamed) is SdcError
    assert fail("f", "xs_other must be").renamed("g", {"xs": "ys"}).detail == "xs_other must be"
    plain = SdcError("spec.toml: bad")  # a message without a function stays as it is
    assert plain.renamed("g") is plain

    @named
    def outer(k):
        return params.GROUP_SIZE.check(k, "inner", "k")

    with pytest.raises(SdcError, match=r"^outer: k must be >= 2"):
        outer(1)


def test_public_numpy_functions_name_themselves_without_a_hidden_keyword():
    import importlib
    import inspect

    import pkgutil

    import duckdb_sdc.measures
    import duckdb_sdc.methods

    modules = [importlib.import_module(f"{package.__name__}.{info.name}")
               for package in (duckdb_sdc.methods, duckdb_sdc.measures)
               for info in pkgutil.iter_modules(package.__path__)]
    assert {"noise_addition", "rank_swap", "base_rounding"} <= {m.__name__.rsplit(".", 1)[1] for m in modules}
    for module in modules:
        for name, fn in inspect.getmembers(module, inspect.isfunction):
            assert "_func" not in inspect.signature(fn).parameters, f"{module.__name__}.{name}"
    with pytest.raises(SdcError, match=r"^mdav_partition: k must be >= 2"):
        methods.mdav_partition([1.0, 2.0, 3.0], 1)
    with pytest.raises(SdcError, match=r"^crisp_weights: A must be a finite number > 0"):
        methods.boxes.crisp_weights([1.0], 1, 0)
    with pytest.raises(SdcError, match=r"^idp_cbls: epsilon = 1e-13 is outside the sampler's range"):
        methods.dp.idp_cbls([1.0, 2.0, 3.0], 3, 1e-13)


@pytest.mark.parametrize("sql, name", [
    ("SELECT ewd_round([1e308, -1e308, 1e308], 2)", "ewd_round"),
    ("SELECT kmd_round([1e308, -1e308, 1e308, 0], 2)", "kmd_round"),
    ("SELECT rbd_round([1e308, -1e308, 1e308, 0], 2, seed := 1)", "rbd_round"),
    ("SELECT kmd_round([5e-324, 1e-323, 2e-323, 5e-323], 2)", "kmd_round"),
    ("SELECT efd_labels([1e308, -1e308, 0, 1], 1000000000000000000000)", "efd_labels"),
    ("SELECT ewd_labels([1e308, -1e308, 0, 1], 'auto')", "ewd_labels"),
])
def test_extreme_values_never_raise_a_raw_python_exception(con, sql, name):
    """Before, ValueError / OverflowError escaped the UDFs ('Python exception occurred while executing
    the UDF: ValueError: 'list' argument must have no negative elements'). A result is fine; an error
    must be an SdcError that names the function."""
    try:
        con.execute(sql).fetchall()
    except duckdb.Error as err:
        message = str(err)
        assert "SdcError" in message and f"{name}:" in message, message


def test_mask_is_what_the_list_functions_compute(con):
    rng = np.random.default_rng(3)
    x = rng.integers(0, 40, 30).astype(float)
    for name, args, sql_args in [("mdav_round", {"k": 3}, "3"), ("vmdav_round", {"k": 3, "gamma": 0.5}, "3, 0.5"),
                                 ("efd_round", {"c": 4, "stochastic": True, "seed": 9}, "4, stochastic := true, seed := 9"),
                                 ("idp_cbls", {"k": 4, "epsilon": 1.0, "seed": 2}, "4, 1.0, seed := 2")]:
        got = con.execute(f"SELECT {name}(?::DOUBLE[], {sql_args})", [x.tolist()]).fetchone()[0]
        np.testing.assert_array_equal(got, masking.mask(name, x, args))
    with pytest.raises(SdcError, match="^mdav_round: 'c' is not a parameter; its parameters: k, representative$"):
        masking.mask("mdav_round", x, {"c": 3})


def test_mask_stratum_derives_the_seed_per_column_and_stratum():
    x = np.arange(40.0)
    a = masking.mask_stratum("dp_laplace", x, {"epsilon": 1.0, "lb": 0, "ub": 40, "seed": 5}, column="a", stratum=0)
    b = masking.mask_stratum("dp_laplace", x, {"epsilon": 1.0, "lb": 0, "ub": 40, "seed": 5}, column="a", stratum=1)
    direct = masking.mask("dp_laplace", x, {"epsilon": 1.0, "lb": 0, "ub": 40, "seed": stratum_seed(5, "a", 0)})
    np.testing.assert_array_equal(a, direct)
    assert not np.array_equal(a, b)
    with pytest.raises(SdcError, match=r"^dp_laplace: seed must be an integer in \[0, 2\^63\), got -1$"):
        masking.mask_stratum("dp_laplace", x, {"epsilon": 1.0, "lb": 0, "ub": 40, "seed": -1}, column="a")


def test_the_masking_methods_are_the_release_methods():
    assert set(masking.METHODS) == set(RELEASE_METHODS)
    for name, m in masking.METHODS.items():
        assert [p.name for p in m.params] == [p.name for p in RELEASE_METHODS[name].params], name


def test_rank_measures_take_the_seed_kind(con):
    got = con.execute("SELECT rank_mae(x, -x, seed := NULL), rank_mae(x, -x, seed := 3) "
                      "FROM (VALUES (1), (1), (2), (2)) t(x)").fetchone()
    assert got[0] is not None and got[1] is not None
    with pytest.raises(duckdb.Error, match=r"rank_mae: seed must be an integer in \[0, 2\^63\), got -3"):
        con.execute("SELECT rank_mae(x, x, seed := -3) FROM (VALUES (1), (2)) t(x)").fetchall()


def test_the_table_form_checks_its_names_before_it_builds_sql(con):
    """Before: a NULL table name or duplicate columns were parser errors about the generated SQL. (Every
    invalid value of the names' kinds, and a missing column of every column parameter, are the
    generated contract's, tests/sql/test_contract.py.)"""
    con.execute("CREATE TABLE t AS SELECT range AS id, range::DOUBLE AS x, range % 2 AS s FROM range(6)")
    cases = [
        ("SELECT * FROM mdav_round_table('t', 'x', 2, strata := ['s', 'S'])", "mdav_round_table: strata names column 'S' twice"),
        ("SELECT * FROM box_release_table('t', ['x', NULL], 2, 'mean(1)')", "box_release_table: cols must not contain NULL"),
    ]
    for sql, message in cases:
        with pytest.raises(duckdb.Error) as info:
            con.execute(sql).fetchall()
        assert message in str(info.value) and "Parser Error" not in str(info.value), str(info.value)
    con.execute("CREATE TABLE r AS SELECT 1.0 AS x, 2 AS __sdc_v")
    with pytest.raises(duckdb.Error, match="mdav_round_table: table r has a column named '__sdc_v'; names starting "
                                           "with __sdc_ are reserved"):
        con.execute("SELECT * FROM mdav_round_table('r', 'x', 2)").fetchall()
