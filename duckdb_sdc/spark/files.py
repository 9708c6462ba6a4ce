"""Files of a Spark release through Hadoop's FileSystem API (local paths, HDFS, and any file system
Spark is configured for), so that the release folder is put in place by one rename.

A release is written into a hidden sibling `.<name>.<pid>@<host>-<random>.tmp` of the target folder
(the driver's process id and host name, so that a later release can tell a leftover of a killed run
from a release still running). Only when everything is written does it take the target's place:

* on a local file system (Linux), by exchanging the two folders in one `renameat2(RENAME_EXCHANGE)`:
  the target names the previous release until the instant it names the new one, and the previous
  one, now at the hidden name, is deleted after;
* elsewhere (HDFS, object stores through Hadoop, a system without renameat2), a previous release is
  first renamed aside (`.<name>.<pid>@<host>-<random>.old`), the new one renamed to the target, the
  old one deleted: for the moment between the two renames the target does not exist (HDFS renames a
  folder atomically, but not over an existing one). On object stores without atomic renames (S3)
  write to a file system that has them and copy the finished folder.

On any failure (also an interrupt) the temporary folder is deleted. A driver killed with SIGKILL
cannot delete it; the next release to the same target does (`remove_residues`): a hidden sibling of
the target whose process, on this host, no longer runs.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import re
import secrets
import socket
from pathlib import Path

_HOST = re.sub(r"[^A-Za-z0-9.-]", "-", socket.gethostname()) or "host"
_SIBLING = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)(?:@(?P<host>[A-Za-z0-9.-]+))?-[0-9a-f]{8}\.(?:tmp|old)$")


def normalise(path) -> str:
    """An absolute path for local paths; URIs (hdfs://, file:, ...) unchanged."""
    from .preflight import is_uri

    text = str(path)
    return text if is_uri(text) else str(Path(text).expanduser().resolve())


class FileSystem:
    def __init__(self, spark, path: str):
        jvm = spark.sparkContext._jvm
        self._Path = jvm.org.apache.hadoop.fs.Path
        self.fs = self._Path(path).getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())

    @property
    def local(self) -> bool:
        return self.fs.getUri().getScheme() == "file"

    def local_path(self, path: str) -> str:
        """The operating system's path of a path on the local file system."""
        return str(self.fs.makeQualified(self._Path(path)).toUri().getPath())

    def exists(self, path: str) -> bool:
        return bool(self.fs.exists(self._Path(path)))

    def is_dir(self, path: str) -> bool:
        return bool(self.fs.exists(self._Path(path)) and self.fs.getFileStatus(self._Path(path)).isDirectory())

    def names(self, path: str) -> set[str]:
        """The names of the entries of a folder."""
        return {str(s.getPath().getName()) for s in self.fs.listStatus(self._Path(path))}

    def rename(self, src: str, dst: str) -> bool:
        return bool(self.fs.rename(self._Path(src), self._Path(dst)))

    def delete(self, path: str) -> None:
        self.fs.delete(self._Path(path), True)

    def mkdirs(self, path: str) -> None:
        self.fs.mkdirs(self._Path(path))


def sibling(target: str, suffix: str) -> str:
    """A hidden sibling of the target: .<name>.<pid>@<host>-<random>.<suffix>"""
    parent, _, name = target.rstrip("/").rpartition("/")
    return f"{parent}/.{name}.{os.getpid()}@{_HOST}-{secrets.token_hex(4)}.{suffix}"


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_residues(fs: FileSystem, target: str) -> list[str]:
    """Delete the hidden siblings of the target (`sibling`'s names, and those without a host that
    releases before this one wrote) left by releases that were killed: those of a process on this host
    that no longer runs. Returns what it cannot judge (a sibling of a driver on another host, which may
    still be running), for a message."""
    parent, _, name = target.rstrip("/").rpartition("/")
    if not fs.is_dir(parent or "/"):
        return []
    other = []
    for entry in sorted(fs.names(parent or "/")):
        found = _SIBLING.match(entry)
        if found is None or found["name"] != name:
            continue
        if found["host"] not in (None, _HOST):
            other.append(f"{parent}/{entry}")
        elif int(found["pid"]) != os.getpid() and not _running(int(found["pid"])):
            fs.delete(f"{parent}/{entry}")
    return other


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: str, b: str) -> bool:
    """Swap two paths of one local file system atomically (Linux renameat2 RENAME_EXCHANGE); False
    where the system cannot (no such call, or a file system without it)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        call = libc.renameat2
    except (OSError, AttributeError):
        return False
    call.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if call(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (22, 38, 95):  # EINVAL, ENOSYS, EOPNOTSUPP: not on this file system
        return False
    raise OSError(err, os.strerror(err), b)


def put_in_place(fs: FileSystem, tmp: str, target: str) -> str:
    """Make the finished folder `tmp` the target (see the module's docstring); returns how
    ('created', 'exchanged' or 'renamed aside'). Raises OSError when a rename fails, leaving the
    previous release at the target."""
    if not fs.exists(target):
        if not fs.rename(tmp, target):
            raise OSError(f"cannot rename {tmp!r} to {target!r}")
        return "created"
    if fs.local and _exchange(fs.local_path(tmp), fs.local_path(target)):
        fs.delete(tmp)  # the previous release, now at the hidden name
        return "exchanged"
    old = sibling(target, "old")
    if not fs.rename(target, old):
        raise OSError(f"cannot move the previous release {target!r} aside")
    if not fs.rename(tmp, target):
        fs.rename(old, target)
        raise OSError(f"cannot rename {tmp!r} to {target!r}")
    fs.delete(old)
    return "renamed aside"


__all__ = ["FileSystem", "normalise", "put_in_place", "remove_residues", "sibling"]
