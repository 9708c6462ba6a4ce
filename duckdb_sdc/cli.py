"""The `duckdb-sdc` command.

    duckdb-sdc demo [--k 5] [--out DIR]      the README's main job, on generated demo data
    duckdb-sdc release SPEC [--dry-run]      write the release declared by a TOML spec
    duckdb-sdc evaluate SPEC [--csv] [--check]  risk/utility report of that release
    duckdb-sdc tradeoff SPEC --k 3..50       sweep k (or --c, --epsilon): plot loss against risk
    duckdb-sdc sql [DB] [-c SQL] [-f FILE]   SQL with every duckdb_sdc function registered
    duckdb-sdc warmup                        compile every kernel into the cache (run once after install)
    duckdb-sdc --version

Exit codes: 0 success; 2 a user error (bad arguments, a bad spec, a masking parameter the data
refuse, a failing query, a file that is not UTF-8 text), printed as one line on standard error, never
a traceback; 3 the release breaches its [policy] (`release` writes nothing; `evaluate --check` judges
an existing release), each failed limit printed with its measured value; 130 interrupted (SIGINT,
Ctrl-C) and 143 terminated (SIGTERM), after cleaning up: a release being written leaves no file
behind (the handlers are installed first thing, before any import beyond the standard library; a
signal in the interpreter's own start-up, a few milliseconds, still ends the process by the signal).
Output to a closed pipe (`duckdb-sdc release --dry-run | head`) ends the command quietly, exit 0. In
the interactive prompt a failing statement prints its error and Ctrl-C cancels the current
statement; the prompt goes on.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
from contextlib import contextmanager
from pathlib import Path

USER_ERROR = 2
POLICY_BREACH = 3
STOPPED = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}  # exit code 128 + signal number


class UserError(Exception):
    """A mistake of the user's: printed as one line, exit code 2."""


class _Signals:
    """SIGINT and SIGTERM while a command runs: the first one is recorded and raised as
    KeyboardInterrupt in the main thread, so every `finally` and cleanup runs (DuckDB turns it into
    an interrupted query); a second one ends the process at once. Whatever error the interruption
    then surfaces as, the command exits with 128 + the signal's number."""

    def __init__(self):
        self.received: int | None = None
        self._deferring = False

    def _handle(self, signum, frame):
        if self.received is not None:
            os._exit(128 + signum)
        self.received = signum
        if not self._deferring:
            raise KeyboardInterrupt

    @contextmanager
    def deferred(self):
        """Record a signal without raising until the block ends: an exception raised inside the
        initialisation of a C extension (DuckDB's C++ module) aborts the process (SIGABRT) instead of
        unwinding, so the heavy imports run here and the signal takes effect right after them."""
        self._deferring = True
        try:
            yield
        finally:
            self._deferring = False
        if self.received is not None:
            raise KeyboardInterrupt

    def take(self) -> int | None:
        """The signal received since the last call, cleared (the prompt goes on after Ctrl-C)."""
        received, self.received = self.received, None
        return received

    @contextmanager
    def installed(self):
        if sys.platform == "win32" or not _main_thread():
            yield self
            return
        previous = {s: signal.signal(s, self._handle) for s in STOPPED}
        try:
            yield self
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


SIGNALS = _Signals()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        ours = version("duckdb-sdc")
    except PackageNotFoundError:  # a source tree that was not installed
        ours = "0.0.0+unknown"
    try:
        engine = version("duckdb")
    except PackageNotFoundError:
        engine = "not installed"
    return f"duckdb-sdc {ours} (duckdb {engine}, Python {sys.version.split()[0]})"


def _resource_options(command: argparse.ArgumentParser) -> None:
    """--memory-limit, --threads, --temp-directory: the spec's [resources], overridden."""
    command.add_argument("--memory-limit", metavar="AMOUNT",
                         help="DuckDB's memory limit, e.g. 4GB (default: the spec's [resources], else 80%% of the RAM)")
    command.add_argument("--threads", type=int, metavar="N", help="DuckDB's threads (default: every core)")
    command.add_argument("--temp-directory", metavar="DIR",
                         help="where the private workspace (spill files, mode 0700) is made (default: the system "
                              "temporary folder)")


def _resources(spec, args):
    """The spec's [resources] with the command line's options over them (checked as the spec's)."""
    import dataclasses

    from .release.spec import _Checker, resources

    given = {k: v for k, v in (("memory_limit", args.memory_limit), ("threads", args.threads),
                               ("temp_directory", args.temp_directory)) if v is not None}
    if not given:
        return spec.resources
    checked = resources(_Checker("--" + "/".join(k.replace("_", "-") for k in given)), given, Path.cwd())
    return dataclasses.replace(spec.resources, **{k: getattr(checked, k) for k in given})


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="duckdb-sdc", description="Statistical disclosure control in DuckDB")
    parser.add_argument("--version", action="version", version=_version(),
                        help="print the versions of duckdb-sdc, DuckDB and Python, and exit")
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="release the package's generated demo microdata from an example spec "
                                       "and summarise before/after")
    demo.add_argument("--k", type=int, default=5, help="minimum group size (default 5)")
    demo.add_argument("--out", default="duckdb_sdc_demo",
                      help="folder for the demo's source, spec and release files (default ./duckdb_sdc_demo)")
    demo.add_argument("--quiet", action="store_true", help="no progress bar")

    rel = sub.add_parser("release", help="write the release database declared by a TOML spec")
    rel.add_argument("spec", help="the release spec (TOML)")
    rel.add_argument("--dry-run", action="store_true", help="print the SQL that would run; write nothing")
    rel.add_argument("--quiet", action="store_true", help="no progress bar and no summary line")
    rel.add_argument("--engine", choices=("duckdb", "spark"), default="duckdb",
                     help="duckdb (default): a DuckDB file; spark: Parquet files and the manifest written by Spark "
                          "(output.database names the folder; needs pyspark and Java)")
    rel.add_argument("--master", default="local[2]",
                     help="with --engine spark: the Spark master (default local[2]; e.g. yarn, spark://host:7077)")
    _resource_options(rel)

    ev = sub.add_parser("evaluate", help="report every information loss and disclosure risk measure and the "
                                         "k-anonymity of the release written from a spec")
    ev.add_argument("spec", help="the release spec (TOML); its release file must have been written")
    ev.add_argument("--csv", action="store_true", help="print the tidy report as CSV instead of tables")
    ev.add_argument("--quiet", action="store_true", help="no progress bar")
    ev.add_argument("--check", action="store_true", help="apply the spec's [policy] to the release: exit 3, "
                                                        "naming each failed limit, when it is breached")
    _resource_options(ev)

    tr = sub.add_parser("tradeoff", help="sweep k, c or epsilon of the masked columns and plot information "
                                         "loss against disclosure risk (PNG and HTML)")
    tr.add_argument("spec", help="the release spec (TOML); nothing is written but the plots")
    swept = tr.add_mutually_exclusive_group(required=True)
    swept.add_argument("--k", metavar="VALUES", help="k values: 3..50, 3..50:5 (step) or 3,5,10")
    swept.add_argument("--c", metavar="VALUES", help="c values (discretisation intervals), as for --k")
    swept.add_argument("--epsilon", metavar="VALUES",
                       help="epsilon values: 0.1..10 (10 values, log-spaced), 0.1..10:20 (20) or 0.5,1,2")
    tr.add_argument("--il", default="il1s", help="information loss measure on the x axis (default il1s)")
    tr.add_argument("--dr", default="record_linkage", help="disclosure risk measure on the y axis "
                                                           "(default record_linkage)")
    tr.add_argument("--out", default=".", help="folder for <spec>_tradeoff_<param>.png and .html (default .)")
    tr.add_argument("--quiet", action="store_true",
                    help="no progress bar, and no table of points when the plot is written")
    _resource_options(tr)

    sql = sub.add_parser("sql", help="SQL prompt (or one query) with every duckdb_sdc function registered")
    sql.add_argument("database", nargs="?", default=None, help="DuckDB file to open (default: in memory)")
    sql.add_argument("-c", dest="command_sql", metavar="SQL", help="run these statements and exit")
    sql.add_argument("-f", dest="file", metavar="FILE", help="run the statements of a SQL file and exit")
    sql.add_argument("--read-only", action="store_true", help="open the database read-only")

    warm = sub.add_parser("warmup", help="compile every Numba kernel of duckdb_sdc into the on-disk cache, so "
                                         "that no later process compiles (run once after installing)")
    warm.add_argument("--quiet", action="store_true", help="print nothing but errors")
    return parser


COMMANDS = {"demo": "_demo", "release": "_release", "evaluate": "_evaluate", "tradeoff": "_tradeoff",
            "sql": "_sql", "warmup": "_warmup"}


def main(argv: list[str] | None = None) -> int:
    with SIGNALS.installed():  # first: a signal from here on ends the command with 130 or 143
        SIGNALS.take()
        try:
            try:
                args = _parser().parse_args(argv)
                with SIGNALS.deferred():
                    _preload(args.command)
                from ._validate import SdcError
                from .workspace import WorkspaceError

                try:
                    return globals()[COMMANDS[args.command]](args)
                except (SdcError, UserError, WorkspaceError) as e:
                    if SIGNALS.received is None:
                        print(f"duckdb-sdc {args.command}: error: {_shown(str(e))}", file=sys.stderr)
                        return USER_ERROR
                    raise
            except BrokenPipeError:
                return _closed_pipe()
        except BaseException:
            received = SIGNALS.take()
            if received is None:
                raise
            # DuckDB reports an interrupted query as an error of its own (RuntimeError, an
            # INTERRUPT error, ...): the signal, not that error, is what happened
            print(STOPPED[received], file=sys.stderr)
            return 128 + received


def _preload(command: str) -> None:
    """Import the compiled extensions the command needs (see `_Signals.deferred`)."""
    import duckdb  # noqa: F401
    import numpy  # noqa: F401

    if command != "sql":
        import pandas  # noqa: F401
        import pyarrow  # noqa: F401
    if command in ("demo", "release", "evaluate", "tradeoff", "warmup"):
        import numba  # noqa: F401
        import scipy.spatial  # noqa: F401


MAX_MESSAGE = 2000  # characters of an error message printed; a longer one is cut in its middle


def _shown(message: str) -> str:
    if len(message) <= MAX_MESSAGE:
        return message
    half = MAX_MESSAGE // 2
    return f"{message[:half]} ... ({len(message) - MAX_MESSAGE} characters left out) ... {message[-half:]}"


def _closed_pipe() -> int:
    """The reader of standard output went away (`| head`): stop quietly. Standard output is pointed at
    /dev/null so that Python's flush at exit raises nothing."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass
    return 0


def _demo(args) -> int:
    from .demo import run_demo
    from .release.progress import Progress

    if args.k < 2:
        raise UserError(f"--k must be >= 2 (a group of one record is not masked), got {args.k}")
    print(run_demo(k=args.k, out_dir=Path(args.out), progress=Progress(enabled=False if args.quiet else None)))
    return 0


def _release(args) -> int:
    from .release import PolicyBreach, dry_run, load_spec, release
    from .release.progress import Progress

    spec = load_spec(args.spec)
    resources = _resources(spec, args)
    if args.dry_run and args.engine != "spark":
        print(dry_run(spec, resources=resources))
        return 0
    try:
        if args.engine == "spark":
            result = _release_spark(spec, args)
        else:
            result = release(spec, progress=Progress(enabled=False if args.quiet else None), resources=resources)
    except PolicyBreach as e:
        print(f"duckdb-sdc release: {e}", file=sys.stderr)
        return POLICY_BREACH
    for note in getattr(result, "notes", []):
        # always, also with --quiet: what the spec opted into, as the manifest's notes record it
        print(f"duckdb-sdc release: note: {note}", file=sys.stderr)
    if result.not_private:
        # always, also with --quiet: the spec opted in, and the manifest says so too
        print(f"duckdb-sdc release: warning: {', '.join(result.not_private)} released with reproducible noise "
              "(reproducible_noise = true): whoever holds the seed can remove the noise; the manifest marks "
              "them \"none: reproducible noise\"", file=sys.stderr)
    if not args.quiet:
        linkage = getattr(result, "linkage", None)
        print(f"released {result.rows} rows x {result.columns} columns ({len(result.masked)} masked: "
              f"{', '.join(result.masked) or 'none'}) {'with Spark ' if args.engine == 'spark' else ''}to "
              f"{result.path} table {result.table!r} in {result.seconds:.1f} s"
              + (f"; linkage (keep it secret) in {linkage}" if linkage else ""))
    return 0


def _release_spark(spec, args):
    from .spark import local_session, release

    if args.dry_run:
        raise UserError("--dry-run prints the DuckDB script; a Spark release has no script to print")
    return release(spec, local_session(args.master, quiet=True))


def _evaluate(args) -> int:
    from .release import format_report, load_spec, report
    from .release.progress import Progress
    from .release.report import verdicts

    spec = load_spec(args.spec)
    if args.check and (spec.policy is None or not spec.policy.limits()):
        raise UserError(f"{spec.name}: --check applies the spec's [policy], and it has none")
    df = report(spec, progress=Progress(enabled=False if args.quiet else None), resources=_resources(spec, args))
    print(df.to_csv(index=False) if args.csv else format_report(df), end="")
    if args.check:
        failed = verdicts(df)
        failed = failed[failed["value"] == 0]
        if len(failed):
            lines = [f"duckdb-sdc evaluate: {spec.name}: the release breaches its policy"]
            lines += [f"  {section}: {note}" for section, note in zip(failed["section"], failed["note"])]
            print("\n".join(lines), file=sys.stderr)
            return POLICY_BREACH
    return 0


def _tradeoff(args) -> int:
    from .release import load_spec
    from .release.plot import PlotUnavailable, plot_paths, plot_sweep, points, require_matplotlib
    from .release.progress import Progress
    from .release.report import ALL
    from .release.tradeoff import PARAMETERS, check_defined, check_measures, parse_values, sweep, swept_columns

    param = next(p for p in PARAMETERS if getattr(args, p) is not None)
    values = parse_values(param, getattr(args, param))
    check_measures(args.il, args.dr)
    spec = load_spec(args.spec)
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {args.out!r} is not a folder")
    try:
        require_matplotlib()
        unplotted = None
    except PlotUnavailable as e:  # the table is still worth printing
        unplotted = str(e)
    data = sweep(spec, param, values, progress=Progress(enabled=False if args.quiet else None),
                 resources=_resources(spec, args))
    check_defined(data, param, args.il, args.dr)
    columns = swept_columns(spec, param)
    if unplotted is None:
        out.mkdir(parents=True, exist_ok=True)
        png, page = plot_paths(args.spec, param, out)
        pts = plot_sweep(data, param=param, il=args.il, dr=args.dr, columns=columns, spec_name=spec.name,
                         png=png, html_path=page)
    else:
        pts = points(data, args.il, args.dr, columns)
    if not args.quiet or unplotted is not None:  # without a plot the table is all there is
        overall = pts[pts["curve"] == ALL].drop(columns="curve").rename(
            columns={"parameter_value": param, "k_anonymity": "k_anonymity (all)"})
        print(overall.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print(f"wrote {png} and {page}" if unplotted is None else f"no plot: {unplotted}")
    return 0


def _warmup(args) -> int:
    from .warmup import main as warmup_main

    return warmup_main(["--quiet"] if args.quiet else [])


# ---------------------------------------------------------------------------------------------
# duckdb-sdc sql

PROMPT, MORE = "sdc> ", "...> "
_TAIL = re.compile(r";(\s*(--[^\n]*(\n|$)|/\*.*?\*/))*\s*$", re.S)
_PRINTED = {"SELECT", "EXPLAIN", "PRAGMA", "CALL", "RELATION", "LOGICAL_PLAN"}
HELP = """Statements end with ';'. Every duckdb_sdc function is registered (see the README's function
reference). Dot commands: .tables  .read FILE  .help  .quit"""


def _open(args):
    import duckdb

    import duckdb_sdc

    if args.database is not None and args.read_only and not Path(args.database).is_file():
        raise UserError(f"no such database file: {args.database!r}")
    try:
        con = duckdb_sdc.connect(args.database, **({"access_mode": "READ_ONLY"} if args.read_only else {}))
    except duckdb.Error as e:
        raise UserError(f"cannot open {args.database!r}: {e}") from None
    return con


def run_sql(con, text: str, out=None) -> None:
    """Run every statement of `text`, printing the results of queries as DuckDB prints them.
    Raises UserError at the first failing statement."""
    import duckdb

    from .release.run import error_message

    out = out or sys.stdout
    try:
        statements = con.extract_statements(text)
    except duckdb.Error as e:
        raise UserError(error_message(e)) from None
    for statement in statements:
        try:
            if statement.type.name in _PRINTED:
                # printing wraps the query, so it must end without ';' and trailing comments
                relation = con.sql(_TAIL.sub("", statement.query))
                if relation is not None:
                    print(relation, file=out)
            else:
                con.execute(statement.query).fetchall()
        except duckdb.Error as e:
            raise UserError(error_message(e)) from None


def _sql(args) -> int:
    con = _open(args)
    interactive = args.command_sql is None and args.file is None and sys.stdin.isatty()
    con.execute(f"SET enable_progress_bar = {'true' if interactive else 'false'}")
    try:
        if args.command_sql is not None:
            run_sql(con, args.command_sql)
        elif args.file is not None:
            run_sql(con, _read(args.file))
        elif interactive:
            _prompt(con)
        else:
            run_sql(con, decode(sys.stdin.buffer.read(), "standard input"))
    finally:
        con.close()
    return 0


def _read(path: str) -> str:
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise UserError(f"cannot read {path!r}: {e.strerror}") from None
    return decode(data, repr(path))


def decode(data: bytes, what: str) -> str:
    """UTF-8 text (a byte order mark is dropped); a UserError that names `what` otherwise."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise UserError(f"cannot read {what}: not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start}); "
                        "save it as UTF-8") from None


def _history_file() -> Path:
    return Path(os.environ.get("DUCKDB_SDC_HISTORY", Path.home() / ".duckdb_sdc_history"))


def _prompt(con) -> None:
    import duckdb_sdc

    try:
        import readline
    except ImportError:  # not on every platform
        readline = None
    history = _history_file()
    if readline is not None:
        try:
            readline.read_history_file(history)
        except OSError:
            pass
    print(f"duckdb_sdc {duckdb_sdc.__version__}: SQL with every duckdb_sdc function registered. .help for help")
    buffer: list[str] = []
    try:
        while True:
            try:
                line = input(MORE if buffer else PROMPT)
            except EOFError:
                print()
                break
            except KeyboardInterrupt:  # Ctrl-C cancels the statement being typed; SIGTERM ends the prompt
                if SIGNALS.received == signal.SIGTERM:
                    raise
                SIGNALS.take()
                print()
                buffer = []
                continue
            if not buffer and line.strip().startswith("."):
                if not _dot_command(con, line.strip()):
                    break
                continue
            buffer.append(line)
            text = "\n".join(buffer).strip()
            if not text or not text.endswith(";"):
                continue
            buffer = []
            try:
                run_sql(con, text)
            except BaseException as e:  # Ctrl-C interrupts the statement, whatever DuckDB raises then
                if SIGNALS.received == signal.SIGTERM:
                    raise
                if SIGNALS.take() is not None:
                    print("interrupted", file=sys.stderr)
                elif isinstance(e, UserError):
                    print(f"Error: {e}", file=sys.stderr)
                else:
                    raise
    finally:
        if readline is not None:
            try:
                readline.set_history_length(2000)
                readline.write_history_file(history)
            except OSError:
                pass


def _dot_command(con, line: str) -> bool:
    """Run a dot command; False means quit."""
    name, _, arg = line.partition(" ")
    try:
        if name in (".quit", ".exit", ".q"):
            return False
        if name == ".help":
            print(HELP)
        elif name == ".tables":
            run_sql(con, "SHOW TABLES;")
        elif name == ".read" and arg.strip():
            run_sql(con, _read(arg.strip()))
        else:
            print(f"unknown command {line!r}; .help lists the commands", file=sys.stderr)
    except UserError as e:
        print(f"Error: {e}", file=sys.stderr)
    return True


if __name__ == "__main__":
    sys.exit(main())
