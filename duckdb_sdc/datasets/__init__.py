"""The reference microdata sets of the statistical disclosure control literature, bundled.

    from duckdb_sdc import datasets
    firms = datasets.load("tarragona")          # a pandas DataFrame, 834 x 13
    datasets.path("census")                     # the installed CSV file
    datasets.names()                            # ('tarragona', 'census', 'eia', 'testdata', 'free1')

and in SQL, after `duckdb_sdc.register(con)`: `SELECT * FROM sdc_dataset('tarragona')`.

The five sets are those of the data folder of the R package sdcMicro (sdcTools/sdcMicro, GPL-2),
converted to CSV (a header row, no index, no missing values); they come from the CASC project and
the mu-Argus demo and are redistributed with sdcMicro. `ORIGIN.md` beside the files says so. Each
set's columns and their types are declared once here (`DATASETS`): `load` and `sdc_dataset` read the
files with exactly these types, so Python and SQL see the same values.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from .._validate import SdcError

__all__ = ["DATASETS", "Dataset", "load", "names", "path"]


@dataclass(frozen=True)
class Dataset:
    name: str  # what load() and sdc_dataset() take
    file: str  # the CSV file in this folder (the file name of sdcMicro's set)
    rows: int
    columns: tuple[tuple[str, str], ...]  # (name, DuckDB type) in file order
    title: str
    description: str

    @property
    def sql_columns(self) -> str:
        """The `columns` argument of DuckDB's read_csv: {'name': 'TYPE', ...}."""
        return "{" + ", ".join(f"{_ql(c)}: {_ql(t)}" for c, t in self.columns) + "}"


def _ql(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _all(names: str, sql_type: str) -> tuple[tuple[str, str], ...]:
    return tuple((n, sql_type) for n in names.split())


_EIA_REVENUE = "RESREVENUE RESSALES COMREVENUE COMSALES INDREVENUE INDSALES OTHREVENUE OTHRSALES TOTREVENUE TOTSALES"

DATASETS: dict[str, Dataset] = {d.name: d for d in (
    Dataset(
        "tarragona", "Tarragona.csv", 834,
        _all("FIXED.ASSETS CURRENT.ASSETS TREASURY UNCOMMITTED.FUNDS PAID.UP.CAPITAL SHORT.TERM.DEBT SALES "
             "LABOR.COSTS DEPRECIATION OPERATING.PROFIT FINANCIAL.OUTCOME GROSS.PROFIT NET.PROFIT", "BIGINT"),
        "Tarragona firms",
        "13 numeric financial variables of 834 firms (whole numbers; some negative, many zeros); the CASC "
        "project's reference set and a standard benchmark of microaggregation heuristics."),
    Dataset(
        "census", "CASCrefmicrodata.csv", 1080,
        _all("AFNLWGT AGI EMCONTRB FEDTAX PTOTVAL STATETAX TAXINC POTHVAL INTVAL PEARNVAL FICA WSALVAL ERNVAL",
             "BIGINT"),
        "Census (CASC reference microdata)",
        "13 numeric income and tax variables of 1080 records of the U.S. Current Population Survey 1995 "
        "(CASC project). Some columns are exact linear combinations of others (a singular correlation "
        "matrix)."),
    Dataset(
        "eia", "EIA.csv", 4092,
        (("UTILITYID", "BIGINT"), ("UTILNAME", "VARCHAR"), ("STATE", "VARCHAR"), ("YEAR", "BIGINT"),
         ("MONTH", "BIGINT")) + _all(_EIA_REVENUE, "BIGINT"),
        "EIA electric utilities",
        "U.S. Energy Information Authority: electric utilities by month (ids, name, state, year, month and "
        "revenue and sales columns). The 11-variable EIA set of the microaggregation literature is "
        "UTILITYID and the ten revenue and sales columns, TOTREVENUE and TOTSALES included."),
    Dataset(
        "testdata", "testdata.csv", 4580,
        _all("urbrur roof walls water electcon relat sex age hhcivil expend", "BIGINT")
        + (("income", "DOUBLE"), ("savings", "DOUBLE"), ("ori_hid", "BIGINT"), ("sampling_weight", "BIGINT"),
           ("household_weights", "DOUBLE")),
        "Household survey test set",
        "sdcMicro's household survey test set: categorical keys (urbrur, roof, walls, water, electcon, relat, "
        "sex, hhcivil), numeric age, expend, income and savings, the household id ori_hid and weights. "
        "Good for stratified masking (for example by urbrur)."),
    Dataset(
        "free1", "free1.csv", 4000,
        _all("REGION SEX AGE MARSTAT KINDPERS NUMYOUNG NUMOLD AGEYOUNG EDUC1 EDUC2 ETNI PRIOCCU POSLABM REGJOBC "
             "RECBEN RECUNBEN RECODBEN RECBILL RECSOSEC RECPENS POSLABLY POSFACT COMPCODE OCCUCODE KINDFACT "
             "TENURE FTPTIME ADDJOB JOBFIND WEIGHT INCOME MONEY ASSETS DEBTS", "DOUBLE"),
        "mu-Argus demo set (free1)",
        "The mu-Argus demo set: 30 coded categorical variables and a weight (written as decimals in the "
        "file, so every column is DOUBLE) and the four numeric variables INCOME, MONEY, ASSETS and DEBTS."),
)}


def names() -> tuple[str, ...]:
    """The names `load` and `sdc_dataset` accept."""
    return tuple(DATASETS)


def _dataset(name, func: str) -> Dataset:
    key = name.lower() if isinstance(name, str) else None
    if key not in DATASETS:
        raise SdcError(f"{func}: name must be one of {', '.join(map(repr, DATASETS))}, got {name!r}")
    return DATASETS[key]


def path(name: str) -> Path:
    """The installed CSV file of the data set `name` (case-insensitive)."""
    found = resources.files(__name__) / _dataset(name, "datasets.path").file
    return Path(str(found))


def load(name: str):
    """The data set `name` (case-insensitive; one of `names()`) as a pandas DataFrame with the declared
    column types: BIGINT as int64, DOUBLE as float64, VARCHAR as str."""
    import pandas as pd

    data = _dataset(name, "datasets.load")
    kinds = {"BIGINT": "int64", "DOUBLE": "float64", "VARCHAR": "str"}
    types = {c: kinds[t] for c, t in data.columns}
    frame = pd.read_csv(path(name), dtype=types, keep_default_na=False)
    if list(frame.columns) != [c for c, _ in data.columns] or len(frame) != data.rows:
        raise SdcError(f"datasets.load: the installed file {data.file!r} does not hold the declared "
                       f"{data.rows} rows x {len(data.columns)} columns; reinstall duckdb-sdc")
    return frame
