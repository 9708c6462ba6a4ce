"""The [ledger] table of a release spec: where the release ledger is and what the spec opts into
(release/ledger.py keeps the ledger; docs/releases/ledger.md)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

REPEAT_DP, ALLOW_LINKED = "repeat_dp", "allow_linked"


@dataclass(frozen=True)
class LedgerSettings:
    """[ledger]: where the ledger is, and what the spec opts into."""
    path: Path | None = None  # None: the default location (`ledger.default_path`)
    repeat_dp: bool = False  # a second DP release of a column of a source, without [policy] epsilon_budget
    allow_linked: bool = False  # a linked release whose composition breaches min_k / max_unique_share: warned


def parse_settings(table: dict, error, base: Path) -> LedgerSettings:
    """The [ledger] table of a spec. `error(where, message)` makes the exception."""
    allowed = ("path", REPEAT_DP, ALLOW_LINKED)
    unknown = [k for k in table if k not in allowed]
    if unknown:
        raise error("ledger", f"unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
                              f"allowed: {', '.join(allowed)}")
    path = None
    if "path" in table:
        value = table["path"]
        if not isinstance(value, str) or not value:
            raise error("ledger.path", f"must be a folder path, got {value!r}")
        path = Path(value).expanduser()
        path = path if path.is_absolute() else Path(base) / path
    flags = {}
    for key in (REPEAT_DP, ALLOW_LINKED):
        if key in table:
            if not isinstance(table[key], bool):
                raise error(f"ledger.{key}", f"must be true or false, got {table[key]!r}")
            flags[key] = table[key]
    return LedgerSettings(path, **flags)


__all__ = ["ALLOW_LINKED", "REPEAT_DP", "LedgerSettings", "parse_settings"]
