"""Locations as a Spark release is given them: a URI (with a scheme) is passed to Spark as written, a
plain path or a file: URI is a path of this machine. The preflight and the ledger share these."""

from __future__ import annotations

import re

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def is_uri(text: str) -> bool:
    """A location with a scheme (hdfs://, s3a://, file:/...): passed to Spark as written."""
    return bool(_SCHEME.match(text)) and not re.match(r"^[A-Za-z]:[\\/]", text)  # not C:\ on Windows


def local_path(text: str) -> str | None:
    """The file system path of a location on this machine (a plain path or file:), else None."""
    if not is_uri(text):
        return text
    if text.startswith("file:"):
        return re.sub(r"^file:(//)?", "", text) or "/"
    return None


__all__ = ["is_uri", "local_path"]
