"""Releases as code: a TOML spec declares what to release; duckdb_sdc builds the SQL with sqlglot,
masks in DuckDB and writes a separate release database file with a manifest.

    from duckdb_sdc.release import load_spec, release, dry_run
    spec = load_spec("people.toml")
    print(dry_run(spec))          # the SQL that would run
    release(spec)                 # writes the output file atomically
    print(format_report(report(spec)))   # the risk/utility report of that file (a tidy DataFrame)
    data = sweep(spec, "k", parse_values("k", "3..50"))   # the report for every k, in memory

Modules: `spec` (the TOML format and its checks), `methods` (the masking methods a spec can name,
derived from the SQL registry), `plan` (the sqlglot script), `safeguards` (cell protection, sets of
attraction, what 'auto' resolved to, unlinked DP-UM centroids), `manifest` (the manifest and its
guarantees), `policy` (the [policy] gate), `run` (materialisation), `progress`, `report` (the
risk/utility report and its verdicts), `tradeoff` (parameter sweeps) and `plot` (their PNG and HTML).
"""

from __future__ import annotations

from .methods import METHODS, ReleaseMethod
from .policy import Policy, PolicyBreach
from .report import format_report, report
from .run import ReleaseResult, dry_run, plan_release, release
from .spec import Spec, SpecError, load_spec, parse_spec
from .tradeoff import parse_values, sweep

__all__ = ["METHODS", "Policy", "PolicyBreach", "ReleaseMethod", "ReleaseResult", "Spec", "SpecError", "dry_run",
           "format_report", "load_spec", "parse_spec", "parse_values", "plan_release", "release", "report", "sweep"]
