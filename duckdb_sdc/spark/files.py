"""Files of a Spark release through Hadoop's FileSystem API (local paths, HDFS, and any file system
Spark is configured for), so that the release folder is put in place by one rename.

A release is written into a hidden sibling `.<name>.<pid>-<random>.tmp` of the target folder; only
when everything is written is it renamed to the target. A previous release at the target is first
renamed aside (`.<name>.<pid>-<random>.old`) and deleted after the new one is in place, so at no
moment does the target hold a partial release. On any failure (also an interrupt) the temporary
folder is deleted. On object stores without an atomic rename (S3) write to a file system that has
one (HDFS, a local or network disk) and copy the finished folder.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path


def _is_uri(path: str) -> bool:
    return "://" in path or path.startswith("file:")


def normalise(path) -> str:
    """An absolute path for local paths; URIs (hdfs://, file:, ...) unchanged."""
    text = str(path)
    return text if _is_uri(text) else str(Path(text).expanduser().resolve())


class FileSystem:
    def __init__(self, spark, path: str):
        jvm = spark.sparkContext._jvm
        self._Path = jvm.org.apache.hadoop.fs.Path
        self.fs = self._Path(path).getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())

    def exists(self, path: str) -> bool:
        return bool(self.fs.exists(self._Path(path)))

    def is_dir(self, path: str) -> bool:
        return bool(self.fs.exists(self._Path(path)) and self.fs.getFileStatus(self._Path(path)).isDirectory())

    def rename(self, src: str, dst: str) -> bool:
        return bool(self.fs.rename(self._Path(src), self._Path(dst)))

    def delete(self, path: str) -> None:
        self.fs.delete(self._Path(path), True)

    def mkdirs(self, path: str) -> None:
        self.fs.mkdirs(self._Path(path))


def sibling(target: str, suffix: str) -> str:
    """A hidden sibling of the target: .<name>.<pid>-<random>.<suffix>"""
    parent, _, name = target.rstrip("/").rpartition("/")
    return f"{parent}/.{name}.{os.getpid()}-{secrets.token_hex(4)}.{suffix}"


__all__ = ["FileSystem", "normalise", "sibling"]
