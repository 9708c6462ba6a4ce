"""The `duckdb-sdc` command."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="duckdb-sdc", description="Statistical disclosure control in DuckDB")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="mask the package's generated demo microdata in SQL and summarise")
    demo.add_argument("--k", type=int, default=5, help="minimum group size (default 5)")
    args = parser.parse_args(argv)
    if args.command == "demo":
        from .demo import run_demo

        if args.k < 1:
            parser.error(f"--k must be >= 1, got {args.k}")
        print(run_demo(k=args.k))
    return 0


if __name__ == "__main__":
    sys.exit(main())
