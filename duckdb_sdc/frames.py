"""Releases of a data frame: a pandas, polars or Arrow frame in memory, masked by a release spec
whose source is the frame, through the same pipeline as a file (the key check, masking, safeguards,
the policy gate, the secret row order, the manifest, the column comments, the atomic write).

    import duckdb_sdc
    result = duckdb_sdc.release_frame(df, "people.toml")   # [source] frame = "people"

    from duckdb_sdc.frames import frame_spec
    from duckdb_sdc.release import report, format_report
    spec = frame_spec(df, "people.toml")                   # the spec with its frame bound
    print(format_report(report(spec)))                     # evaluate, tradeoff.sweep, dry_run alike

The spec's `[source]` says `frame = "<name>"` (the name the manifest records as the source, with
the frame's kind: "pandas data frame 'people'") instead of a database table or files, beside the
optional `key` and `weight`. The frame is copied once into a temporary table of the release's own
connection when the release starts (a snapshot: changing the frame afterwards changes nothing), and
nothing of it is written anywhere else.

What is missing: a pandas frame is read as pandas reads it. NaN in a NumPy-backed float column,
None or NaN in an object column, and pd.NA / NaT in nullable and datetime columns are missing
values (`DataFrame.isna()` is true), and they become NULL: kept in place, never masked into a
group, counted as the report counts NULLs. In a pyarrow-backed pandas column (`double[pyarrow]`),
and in polars and Arrow frames, a missing value is a null, and NaN is a floating-point number
(`isna()`, `is_null()` are false for it): it reaches the masking methods as NaN, and they refuse it
as they refuse NaN from SQL or numpy (turn it into a null first, e.g. polars' `fill_nan(None)`).
The numpy layer (`duckdb_sdc.methods`) refuses NaN whatever its origin: there, NULL does not exist.

Refused, with a message that says what to do: an object that is not one of the three frames (a
polars LazyFrame: collect it first), a pandas frame with a named index (its values would not be
read: `reset_index()` makes them columns), column names that are not text or that repeat.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from ._validate import SdcError, show

FRAME_VIEW = "__sdc_frame"  # the frame's name on the release connection while it is copied


def _kind(frame) -> str | None:
    """'pandas', 'polars' or 'arrow' for a frame this module releases, else None."""
    module = type(frame).__module__.split(".")[0]
    name = type(frame).__name__
    if module == "pandas" and name == "DataFrame":
        return "pandas"
    if module == "polars" and name == "DataFrame":
        return "polars"
    if module == "pyarrow" and name == "Table":
        return "arrow"
    return None


def check_frame(frame, function: str = "release_frame") -> str:
    """The frame's kind; an SdcError naming the function and the parameter when it cannot be released."""
    kind = _kind(frame)
    if kind is None:
        hint = (": collect it first (frame.collect())" if type(frame).__name__ == "LazyFrame"
                else "; pass a pandas DataFrame, a polars DataFrame or a pyarrow Table")
        raise SdcError(f"{function}: frame must be a data frame, got a {type(frame).__module__}.{type(frame).__name__}"
                       f"{hint}")
    names = list(frame.column_names if kind == "arrow" else frame.columns)
    if kind == "pandas":
        index = [n for n in frame.index.names if n is not None]
        if index:
            raise SdcError(f"{function}: frame has a named index ({', '.join(map(repr, map(str, index)))}), whose "
                           "values a release does not read; make it columns with frame.reset_index() (or drop it "
                           "with frame.reset_index(drop=True))")
    bad = [n for n in names if not isinstance(n, str)]
    if bad:
        raise SdcError(f"{function}: frame has column names that are not text: {show(bad)}; rename them "
                       "(a spec names every column)")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise SdcError(f"{function}: frame has columns named twice: {', '.join(map(repr, repeated))}")
    if not names:
        raise SdcError(f"{function}: frame has no column")
    return kind


def _load(spec, function: str):
    """A Spec from a Spec, a spec file's path, or a parsed TOML document (paths relative to the
    current folder)."""
    from .release.spec import Spec, load_spec, parse_spec

    if isinstance(spec, Spec):
        return spec
    if isinstance(spec, (str, Path)):
        return load_spec(spec)
    if isinstance(spec, dict):
        return parse_spec(spec, base=Path.cwd(), name="spec")
    raise SdcError(f"{function}: spec must be a Spec, the path of a TOML spec or a parsed TOML document (dict), "
                   f"got a {type(spec).__name__}")


def frame_spec(frame, spec, *, function: str = "frame_spec"):
    """The spec (a Spec, a path or a parsed TOML document) with `frame` bound as its source, ready
    for `release`, `report`, `dry_run` and `sweep`. Its [source] must say `frame = "<name>"`."""
    check_frame(frame, function)
    spec = _load(spec, function)
    if spec.source.frame is None:
        where = "a DuckDB table" if spec.source.database is not None else "files"
        raise SdcError(f"{function}: {spec.name}: [source] reads {where}; a spec for a frame says "
                       "[source] frame = \"<a name for it>\" instead (with key and weight as for any source)")
    return dataclasses.replace(spec, source=dataclasses.replace(spec.source, data=frame))


def release_frame(frame, spec, *, progress=None):
    """Release a pandas, polars or Arrow frame with a spec whose source is the frame (`[source]
    frame = "<name>"`): the same release as `duckdb_sdc.release.release` of a file source, the
    ReleaseResult it returns (see the module's docstring for what counts as missing)."""
    from .release.run import release

    return release(frame_spec(frame, spec, function="release_frame"), progress=progress)


def describe(source) -> str:
    """The source as the manifest records it: "<kind> data frame '<name>'"."""
    kind = _kind(source.data) if source.data is not None else None
    return f"{kind + ' ' if kind else ''}data frame {source.frame!r}"


def check_bound(spec) -> None:
    """A frame source has its frame (bound by frame_spec or release_frame)."""
    from .release.spec import SpecError

    if spec.source.data is None:
        raise SpecError(f"{spec.name}: source.frame: the source is a data frame ({spec.source.frame!r}), which a spec "
                        "file cannot hold; release it from Python: duckdb_sdc.release_frame(frame, spec) (or bind "
                        "it for report() and sweep() with duckdb_sdc.frames.frame_spec)")
    check_frame(spec.source.data, spec.name)


def source_step(spec, raw: str):
    """The plan's step that reads the frame: copied once into the temporary table `raw`."""
    from sqlglot import exp

    from .release.plan import DIALECT, Step, table, temporary

    copy = temporary(raw, exp.select(exp.Star()).from_(table(FRAME_VIEW)))

    def action(con):
        import duckdb

        from .release.run import error_message
        from .release.spec import SpecError

        check_bound(spec)
        try:
            con.register(FRAME_VIEW, spec.source.data)
            try:
                con.execute(copy.sql(dialect=DIALECT)).fetchall()
            finally:
                con.unregister(FRAME_VIEW)
        except duckdb.Error as e:
            raise SpecError(f"{spec.name}: source.frame: cannot read the {describe(spec.source)}: "
                            f"{error_message(e)}") from None

    return Step("reading the data frame", None, action=action,
                comment=f"the {describe(spec.source)} is copied once into the temporary table {raw} "
                        f"({copy.sql(dialect=DIALECT)}, with the frame registered as {FRAME_VIEW})")


__all__ = ["check_frame", "frame_spec", "release_frame"]
