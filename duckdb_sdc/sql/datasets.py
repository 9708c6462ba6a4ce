"""SQL row for the bundled reference data sets (`duckdb_sdc.datasets`): the table macro sdc_dataset.

The macro is generated at registration with the absolute paths of the installed CSV files and each
set's declared column types (no type sniffing), so `FROM sdc_dataset('tarragona')` returns exactly
what `duckdb_sdc.datasets.load('tarragona')` returns. It is a TEMP macro like every other one: nothing
is written into the database file, and a plain DuckDB client reads the files with read_csv.
"""

from __future__ import annotations

from ..datasets import DATASETS, path
from ..params import Param, choice
from .function import Contract, SqlFunction

GROUP = "Reference data sets"


def _ql(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def read_csv_sql(name: str) -> str:
    """The query that reads data set `name` with its declared column types."""
    data = DATASETS[name]
    return (f"SELECT * FROM read_csv({_ql(str(path(name)))}, header = true, delim = ',', quote = '\"', "
            f"auto_detect = false, columns = {data.sql_columns})")


def _body() -> str:
    known = ", ".join(_ql(n) for n in DATASETS)
    whens = " ".join(f"WHEN {_ql(n)} THEN {_ql(read_csv_sql(n))}" for n in DATASETS)
    refuse = (f"error('sdc_dataset: name must be one of ' || {_ql(known)} || ', got ' || "
              "coalesce('''' || name::VARCHAR || '''', 'NULL'))")
    wrong_type = "error('sdc_dataset: name must be a VARCHAR, got ' || typeof(name))"
    # as the kind (a choice): NULL refused as such, case and surrounding blanks ignored
    return (f"FROM query(CASE WHEN name IS NULL THEN error('sdc_dataset: name must not be NULL') "
            f"WHEN typeof(name) <> 'VARCHAR' THEN {wrong_type} "
            f"ELSE CASE lower(trim(name::VARCHAR)) {whens} ELSE {refuse} END END)")


FUNCTIONS = [
    SqlFunction(
        name="sdc_dataset",
        kind="table",
        params=(Param("name", choice(*DATASETS, doc="one of " + ", ".join(_ql(n) for n in DATASETS)
                                     + " (case-insensitive)")),),
        returns="table",
        group=GROUP,
        doc=("A reference data set of the SDC literature bundled with duckdb_sdc, as a table: 'tarragona' "
             "(834 firms x 13 financial variables), 'census' (1080 x 13, CASC reference microdata), 'eia' "
             "(4092 x 15, electric utilities), 'testdata' (4580 x 15, a household survey) and 'free1' "
             "(4000 x 34, the mu-Argus demo set). From the data folder of sdcMicro (GPL-2), originally the "
             "CASC project and mu-Argus; columns and types as documented in duckdb_sdc.datasets."),
        example="SELECT count(*) FROM sdc_dataset('tarragona')  -- 834",
        body=_body(),
        contract=Contract(result="report"),
    ),
]
