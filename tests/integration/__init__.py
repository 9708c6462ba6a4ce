"""The real components around the package: the command line, dbt, the docs, the examples, older DuckDB clients."""
