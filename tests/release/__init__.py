"""Releases with the DuckDB engine: spec, plan, gate, manifest, report, ledger."""
