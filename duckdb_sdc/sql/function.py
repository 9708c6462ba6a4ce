"""The row of one SQL function in the registry (`SqlFunction`), the Python UDF behind it (`Udf`) and its
contract for the registry-wide contract suite (`Contract`): plain data that the family modules of this
package declare and `registry.REGISTRY` collects (see registry.py for the three kinds of rows).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..params import Param

# how the result changes when the data (and the parameters whose kind `scales`) are multiplied by
# s > 0: the power p of s^p, e.g. 0 (unchanged: labels, scale-free measures), 1 (the data's unit),
# 2 (squared units); a dict of powers per field of a STRUCT result; None when it does not apply
Scale = int | dict | None


# What a parameter reads, as a function's Contract declares it (see Contract.reads).
READS = {
    "original": "the data the function masks or measures (a measure's original side)",
    "masked": "a measure's masked side, record by record beside 'original'",
    "second": "a second attribute, record by record beside 'original' (a covariance's y)",
    "lower": "the lower bounds of released boxes",
    "upper": "the upper bounds of released boxes, beside 'lower'",
    "weights": "sampling weights, one per record",
    "labels": "cluster ids of the records",
    "key": "the column(s) identifying a record (a join key)",
    "keys": ("key variables (quasi-identifiers) whose combinations are counted, of any type: a record with a "
             "NULL key takes part (the NULL matches any value, or is a value of its own, as the function's nulls "
             "says), and a table without records is refused"),
    "sensitive": "a sensitive categorical attribute (any type; not a key) whose values are counted within the key classes",
    "categories": "a categorical attribute (any type, values matched exactly) recoded or perturbed in place",
    "adds": "the name of a column the function adds to its result (it need not exist)",
    "names": "names the function reports (no table is read, so they need not exist)",
}

# What a table function returns (see Contract.result).
RESULTS = {
    "rows": "the input's rows, one per record: columns masked in place or columns added",
    "report": "rows of a summary (one per measure, attribute or table), not one per record",
}


@dataclass(frozen=True, eq=False)
class Contract:
    """What the registry-wide contract suite (tests/sql/test_contract.py) must know of a function beyond its
    parameters' kinds, declared on its registry row as plain data (so that a declared masking method or
    measure can pass it on to the rows made from it), much as scikit-learn declares estimator tags.

    * `reads`: the role (one of READS) of every data parameter and of every parameter that names a
      column, strata excepted (the STRATA kind says what they are): which of the test data it takes,
      and which columns must exist.
    * `result`: for a table function, one of RESULTS: whether its rows are the input's records (NULLs
      then stay in place, row by row) or a summary.
    * `no_data`: what an aggregate gives for no data or all-NULL data when that is not NULL (a count).
    * `expected_failures`: contract case -> reason, for a case the function does not meet yet (the case
      then must fail, and a test that starts to pass says so). Never weaken a check instead.

    A row without a contract, or whose contract leaves out a parameter's role, fails the suite's
    declaration test with a message saying what to declare."""

    reads: dict[str, str] = field(default_factory=dict)
    result: str | None = None
    no_data: int | float | None = None
    expected_failures: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Udf:
    """A vectorised (Arrow) Python UDF. `types` are DuckDB type names of its parameters after the
    reporting name (which is VARCHAR)."""

    fn: Callable
    types: tuple[str, ...]
    returns: str
    side_effects: bool = False  # True for random functions, so DuckDB never folds or reuses a call


@dataclass(frozen=True)
class SqlFunction:
    name: str
    kind: str  # 'scalar', 'table' or 'aggregate': how a user calls it
    params: tuple[Param, ...]
    returns: str
    doc: str
    udf: Udf | None = None
    body: str | None = None
    source: str | None = None
    example: str = ""
    group: str = ""
    scale: Scale = None  # see Scale; the contract suite's scale test reads it
    contract: Contract | None = None  # what the contract suite needs to know (see Contract)

    @property
    def udf_name(self) -> str:
        return f"__sdc_{self.name}"

    def signature(self) -> str:
        parts = []
        for p in self.params:
            parts.append(f"{p.name} {p.type}" if p.default is None else f"{p.name} := {p.default}")
        return f"{self.name}({', '.join(parts)})"

    def macro_sql(self) -> str:
        """CREATE statement of the public macro (for rows with `udf` or `body`)."""
        params = ", ".join(p.name if p.default is None else f"{p.name} := {p.default}" for p in self.params)
        if self.udf is not None and self.body is None:
            first, *rest = self.params
            args = [f"'{self.name}'", f"__sdc_numeric_list({first.name}, '{self.name}', pname := '{first.name}')"]
            args += [f"{p.name}::VARCHAR" for p in rest]
            body = f"{self.udf_name}({', '.join(args)})"
            return f"CREATE OR REPLACE TEMP MACRO {self.name}({params}) AS {body}"
        table = " TABLE" if self.kind == "table" else ""
        return f"CREATE OR REPLACE TEMP MACRO {self.name}({params}) AS{table} {self.body}"
