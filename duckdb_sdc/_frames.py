"""A data frame as a release's source (`[source] frame = "<name>"`, duckdb_sdc.frames): which frames are
released, the checks that refuse the others, and how the manifest names the source. The spec binds the
frame (`Source.data`), the plan copies it once into the release's connection (`plan.source_steps`)."""

from __future__ import annotations

from ._validate import SdcError, show

FRAME_VIEW = "__sdc_frame"  # the frame's name on the release connection while it is copied


def frame_kind(frame) -> str | None:
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
    kind = frame_kind(frame)
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


def describe_frame(source) -> str:
    """The source as the manifest records it: "<kind> data frame '<name>'"."""
    kind = frame_kind(source.data) if source.data is not None else None
    return f"{kind + ' ' if kind else ''}data frame {source.frame!r}"
