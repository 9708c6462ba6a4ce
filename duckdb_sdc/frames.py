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

from ._validate import SdcError
from ._frames import check_frame


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


__all__ = ["check_frame", "frame_spec", "release_frame"]
