"""Every public function shows its registry doc in duckdb_functions() (the `comment` column)."""

from __future__ import annotations

import duckdb
import pytest

import duckdb_sdc
from duckdb_sdc.sql import REGISTRY, Param, SqlFunction
from duckdb_sdc.sql.comments import comment_sql, describe


def test_every_public_function_has_its_doc_as_comment(con):
    rows = dict(con.execute("SELECT function_name, comment FROM duckdb_functions() "
                            "WHERE function_type IN ('macro', 'table_macro') AND database_name = 'temp'").fetchall())
    for row in REGISTRY:
        assert rows[row.name] == " ".join(row.doc.split()), row.name


def test_a_cursor_and_a_second_registration_see_the_comments():
    con = duckdb_sdc.connect()
    cur = duckdb_sdc.register(con.cursor())
    query = "SELECT comment FROM duckdb_functions() WHERE function_name = 'mdav_round'"
    expected = [(" ".join(next(r for r in REGISTRY if r.name == "mdav_round").doc.split()),)]
    assert cur.execute(query).fetchall() == expected
    duckdb_sdc.register(con)
    assert con.execute(query).fetchall() == expected
    con.close()


def test_quotes_and_line_breaks_in_a_doc():
    fake = SqlFunction(name="sdc_quote_test", kind="scalar", params=(Param("x", "DOUBLE", doc="x"),),
                       returns="DOUBLE", doc="It's 'quoted';\n  and   spread -- over lines", body="x + 1")
    plain = duckdb.connect()
    plain.execute(fake.macro_sql())
    describe(plain, (fake,))
    assert plain.execute("SELECT comment FROM duckdb_functions() WHERE function_name = 'sdc_quote_test'"
                         ).fetchall() == [("It's 'quoted'; and spread -- over lines",)]
    plain.close()


@pytest.mark.parametrize("kind, statement", [("table", "COMMENT ON MACRO TABLE"), ("scalar", "COMMENT ON MACRO"),
                                             ("aggregate", "COMMENT ON MACRO")])
def test_the_statement_names_the_macro_kind(kind, statement):
    row = next(r for r in REGISTRY if r.kind == kind)
    assert comment_sql(row).startswith(f"{statement} {row.name} IS '")


# ---------------------------------------------------------------------------------------------
# a release's COMMENT ON TABLE / COLUMN: the manifest's words, read by 1.x clients

QUOTED = "it's \"odd\""  # a column name with both quotes


@pytest.fixture(scope="module")
def commented(tmp_path_factory):
    """A release with a kept key and its view, a masked column with an awkward name, a box group and
    a dp_um column released as an unlinked centroids table."""
    import json

    from release_helpers import base_doc, people, write_db, write_spec

    from duckdb_sdc.release import load_spec, release

    folder = tmp_path_factory.mktemp("comments")
    df = people(200).rename(columns={"age": QUOTED})
    df["height"] = df["income"].fillna(1.0) * 0.001 + 150
    write_db(folder / "src.duckdb", "people", df)
    doc = base_doc()
    del doc["columns"]["age"]
    doc["columns"][QUOTED] = {"method": "mdav_round", "k": 4}
    doc["columns"]["income"] = {"method": "dp_um", "k": 10, "epsilon": 0.5, "lb": 0, "ub": 100_000,
                                "centroids_table": "income_means"}
    del doc["columns"]["expenses"]
    path = write_spec(folder, doc)
    text = path.read_text() + ('\n[[groups]]\ncolumns = ["expenses", "height"]\nmethod = "box_release"\nk = 5\n'
                               f'characteristic = {json.dumps("corr(expenses, height)")}\n')
    path.write_text(text)
    return release(load_spec(path)).path


def _manifest_rows(path):
    from duckdb_sdc.release.manifest import MANIFEST_COLUMNS

    con = duckdb.connect(str(path), read_only=True)
    names = [n for n, _ in MANIFEST_COLUMNS]
    rows = [dict(zip(names, r)) for r in con.execute(f"SELECT {', '.join(names)} FROM release_manifest").fetchall()]
    con.close()
    for r in rows:
        r["created_at"] = r["created_at"].isoformat(sep=" ")
    return rows


def _expected(path):
    """{(relation, column or None): comment} as the manifest's rows give them."""
    from duckdb_sdc.release.manifest import MANIFEST_DESCRIPTIONS, column_comment

    rows = _manifest_rows(path)
    released = [r for r in rows if r["release_table"] == "people" and r["position"] is not None]
    out = {("people", r["column_name"]): column_comment(r) for r in released}
    out.update({("people_public", r["column_name"]): column_comment(r) for r in released if r["rule"] != "key"})
    out.update({("release_manifest", n): words for n, words in MANIFEST_DESCRIPTIONS.items()})
    centroids = next(r for r in rows if r["released_as"] == "centroids")
    out[("income_means", None)] = f"Unlinked noisy cluster means of income, {column_comment(centroids)}"
    out[("people_public", None)] = ("The release table people without its key column id; each column's guarantee: "
                                    "table release_manifest.")
    return out, rows


def test_the_release_comments_its_relations_in_the_manifests_words(commented):
    expected, rows = _expected(commented)
    con = duckdb.connect(str(commented), read_only=True)
    tables = dict(con.execute("SELECT table_name, comment FROM duckdb_tables() UNION ALL "
                              "SELECT view_name, comment FROM duckdb_views() WHERE NOT internal").fetchall())
    columns = {(t, c): words for t, c, words in con.execute(
        "SELECT table_name, column_name, comment FROM duckdb_columns() WHERE comment IS NOT NULL").fetchall()}
    con.close()
    assert tables["people"].startswith("Masked release of src.duckdb table main.people, written by duckdb-sdc ")
    assert (f"release {rows[0]['release_id']}; masked: {QUOTED}, income, expenses, height; total epsilon 0.5. Rows are "
            "in a secret random order. Each column's method, parameters and guarantee: table release_manifest."
            ) in tables["people"]
    assert tables["income_means"] == expected[("income_means", None)]
    assert "0.5-differential privacy of the cluster means of income" in tables["income_means"]
    assert tables["people_public"] == expected[("people_public", None)]
    assert columns == {k: v for k, v in expected.items() if k[1] is not None}
    assert columns[("people", QUOTED)].startswith(f"mdav_round (k-anonymity): 4-anonymity of {QUOTED}")
    assert columns[("people", "id")] == "none: the row key, released as in the source"
    assert {c for t, c in columns if t == "people"} == {"id", "region", QUOTED, "expenses_lower", "expenses_upper",
                                                       "height_lower", "height_upper", "expenses_height_box"}


def test_the_1x_cli_reads_the_comments(commented):
    import json
    import subprocess

    from integration.test_compat import compat_venv

    expected, _ = _expected(commented)
    query = ("SELECT table_name, column_name, comment FROM duckdb_columns() WHERE comment IS NOT NULL "
             "UNION ALL SELECT table_name, NULL, comment FROM duckdb_tables() WHERE table_name <> 'people' "
             "UNION ALL SELECT view_name, NULL, comment FROM duckdb_views() WHERE NOT internal")
    done = subprocess.run([str(compat_venv() / "bin" / "duckdb"), "-readonly", "-json", str(commented), "-c", query],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    seen = {(r["table_name"], r["column_name"]): r["comment"] for r in json.loads(done.stdout)}
    expected[("release_manifest", None)] = ("One row per column of the release (released or dropped): what was done "
                                            "to it and what that guarantees.")
    assert seen == expected


def test_a_sqlalchemy_inspector_reads_the_comments(commented):
    """What Superset and other SQLAlchemy tools show: duckdb-engine's inspector."""
    import warnings

    import sqlalchemy

    expected, _ = _expected(commented)
    engine = sqlalchemy.create_engine(f"duckdb:///{commented}", connect_args={"read_only": True})
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # duckdb-engine warns that it does not know DuckDB 2.0's version
            inspector = sqlalchemy.inspect(engine)
            assert inspector.get_table_comment("people")["text"].startswith("Masked release of src.duckdb")
            assert inspector.get_table_comment("people_public")["text"] == expected[("people_public", None)]
            for relation in ("people", "people_public", "release_manifest"):
                got = {c["name"]: c["comment"] for c in inspector.get_columns(relation)}
                assert got == {c: v for (t, c), v in expected.items() if t == relation and c is not None}, relation
    finally:
        engine.dispose()


def test_the_dry_run_shows_the_comments(commented):
    from duckdb_sdc.release import dry_run, load_spec

    script = dry_run(load_spec(commented.parent.parent / "spec.toml"))
    assert 'COMMENT ON TABLE "__sdc_release"."main"."people" IS \'Masked release of src.duckdb' in script
    assert ('COMMENT ON COLUMN "__sdc_release"."main"."people"."it\'s ""odd""" IS \'mdav_round (k-anonymity): '
            '4-anonymity of it\'\'s "odd" within each stratum of region') in script


def test_the_sql_files_carry_the_descriptions_of_their_macros():
    """sql/90_descriptions.sql is generated from the registry (python -m duckdb_sdc.sql.docs), so that a
    plain DuckDB shell that reads the files shows the same descriptions (tests/sql/test_compat.py)."""
    from duckdb_sdc.sql.docs import DESCRIPTIONS, render_descriptions

    assert DESCRIPTIONS.read_text(encoding="utf-8") == render_descriptions(), "run: python -m duckdb_sdc.sql.docs"
