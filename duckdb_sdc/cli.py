"""The `duckdb-sdc` command.

    duckdb-sdc demo [--k 5] [--out DIR]      the README's main job, on generated demo data
    duckdb-sdc release SPEC [--dry-run] [--report FILE]   write the release declared by a TOML spec
    duckdb-sdc evaluate SPEC [--csv] [--check] [--html FILE]   risk/utility report of that release
    duckdb-sdc tradeoff SPEC --k 3..50       sweep k (or --c, --epsilon): plot loss against risk
    duckdb-sdc sql [DB] [-c SQL] [-f FILE]   SQL with every duckdb_sdc function registered, with
                                             DuckDB's dot commands and output modes (duckdb_sdc.shell)
    duckdb-sdc ledger [list] [--source FP]   the releases recorded in the ledger, and the epsilon spent
    duckdb-sdc ledger forget RELEASE_ID      record a release that was never published as forgotten
    duckdb-sdc warmup                        compile every kernel into the cache (run once after install)
    duckdb-sdc --version

Exit codes: 0 success; 2 a user error (bad arguments, a bad spec, a masking parameter the data
refuse, a failing query, a file that is not UTF-8 text), printed as one line on standard error, never
a traceback; 3 the release breaches its [policy] (`release` writes nothing; `evaluate --check` judges
an existing release), each failed limit printed with its measured value; 130 interrupted (SIGINT,
Ctrl-C) and 143 terminated (SIGTERM), after cleaning up: a release being written leaves no file
behind (the handlers are installed first thing, before any import beyond the standard library; a
signal in the interpreter's own start-up, a few milliseconds, still ends the process by the signal);
`release` also exits 3 when the ledger refuses it (release/ledger.py: the epsilon budget, a repeated
DP release, a linked release breaching min_k or max_unique_share).
Output to a closed pipe (`duckdb-sdc release --dry-run | head`) ends the command quietly, exit 0. In
the interactive prompt a failing statement prints its error and Ctrl-C cancels the current
statement; the prompt goes on.
"""

from __future__ import annotations

import argparse
import os
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

    def reclaim(self) -> None:
        """Take SIGINT back after something installed a handler of its own (PySpark's SparkContext
        does: it cancels every job and raises KeyboardInterrupt), so that an interrupted command still
        cleans up and exits 130."""
        if sys.platform != "win32" and _main_thread() and signal.getsignal(signal.SIGINT) != self._handle:
            signal.signal(signal.SIGINT, self._handle)

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

    from .release.spec import Checker, resources

    given = {k: v for k, v in (("memory_limit", args.memory_limit), ("threads", args.threads),
                               ("temp_directory", args.temp_directory)) if v is not None}
    if not given:
        return spec.resources
    checked = resources(Checker("--" + "/".join(k.replace("_", "-") for k in given)), given, Path.cwd())
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
    rel.add_argument("--report", metavar="FILE", help="write the release's report as one self-contained HTML page "
                                                      "(also when the policy refuses it: the would-be release)")
    rel.add_argument("--tradeoff", metavar="PAGE", help="with --report: include the plot of this page written by "
                                                        "duckdb-sdc tradeoff")
    _ledger_option(rel)
    _resource_options(rel)

    led = sub.add_parser("ledger", help="list the releases recorded in the ledger (per source, with the epsilon "
                                        "spent), or forget one that was never published")
    led.add_argument("action", nargs="?", choices=("list", "forget"), default="list",
                     help="list (default) or forget")
    led.add_argument("release_id", nargs="?", help="with forget: the release id (the manifest's release_id)")
    led.add_argument("--source", metavar="FINGERPRINT", help="list the releases of this source (a prefix will do)")
    led.add_argument("--all", action="store_true", help="list forgotten releases too")
    _ledger_option(led)

    ev = sub.add_parser("evaluate", help="report every information loss and disclosure risk measure and the "
                                         "k-anonymity of the release written from a spec")
    ev.add_argument("spec", help="the release spec (TOML); its release file must have been written")
    ev.add_argument("--csv", action="store_true", help="print the tidy report as CSV instead of tables")
    ev.add_argument("--quiet", action="store_true", help="no progress bar")
    ev.add_argument("--check", action="store_true", help="apply the spec's [policy] to the release: exit 3, "
                                                        "naming each failed limit, when it is breached")
    ev.add_argument("--html", metavar="FILE", help="also write the report as one self-contained HTML page (charts, "
                                                   "verdicts, the guarantees, what fails each limit)")
    ev.add_argument("--tradeoff", metavar="PAGE", help="with --html: include the plot of this page written by "
                                                       "duckdb-sdc tradeoff")
    ev.add_argument("--engine", choices=("duckdb", "spark"), default="duckdb",
                    help="duckdb (default): the release file; spark: the Parquet release folder written by "
                         "`release --engine spark`, measured in Spark SQL (needs pyspark and Java)")
    ev.add_argument("--master", default="local[2]",
                    help="with --engine spark: the Spark master (default local[2]; e.g. yarn, spark://host:7077)")
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
    sql.add_argument("--read-only", "-readonly", dest="read_only", action="store_true",
                     help="open the database read-only (-readonly as DuckDB's shell spells it)")
    modes = sql.add_mutually_exclusive_group()
    for mode in ("box", "csv", "html", "json", "jsonlines", "line", "list", "markdown", "table"):
        modes.add_argument(f"-{mode}", dest="mode", action="store_const", const=mode,
                           help=f"output mode {mode} (as .mode {mode})")
    sql.set_defaults(mode="duckbox")
    headers = sql.add_mutually_exclusive_group()
    headers.add_argument("-header", dest="headers", action="store_true", default=True,
                         help="column names in csv, list and html output (the default)")
    headers.add_argument("-noheader", dest="headers", action="store_false", help="no column names there")

    warm = sub.add_parser("warmup", help="compile every Numba kernel of duckdb_sdc into the on-disk cache, so "
                                         "that no later process compiles (run once after installing)")
    warm.add_argument("--quiet", action="store_true", help="print nothing but errors")
    return parser


def _ledger_option(command: argparse.ArgumentParser) -> None:
    command.add_argument("--ledger", metavar="PATH",
                         help="the ledger folder (default: the spec's [ledger] path, else "
                              "$XDG_DATA_HOME/duckdb-sdc/ledger, i.e. ~/.local/share/duckdb-sdc/ledger)")


COMMANDS = {"ledger": "_ledger", "demo": "_demo", "release": "_release", "evaluate": "_evaluate", "tradeoff": "_tradeoff",
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
        except BaseException as e:
            received = SIGNALS.take()
            if received is None and isinstance(e, KeyboardInterrupt):
                received = signal.SIGINT  # through a handler other than ours (PySpark installs one)
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
    page = _page_target(spec, args, "report", "--report")
    if args.dry_run and args.engine != "spark":
        print(dry_run(spec, resources=resources))
        return 0
    progress = Progress(enabled=False if args.quiet else None)
    try:
        if args.engine == "spark":
            if page is not None:
                raise UserError("--report writes the page of a DuckDB release; evaluate a Spark release with "
                                "duckdb-sdc evaluate")
            result = _release_spark(spec, args)
        elif page is not None:
            from .release.html import breach_writer

            result = release(spec, progress=progress, resources=resources,
                             on_breach=breach_writer(spec, page, tradeoff=args.tradeoff), ledger_path=args.ledger)
        else:
            result = release(spec, progress=progress, resources=resources, ledger_path=args.ledger)
    except PolicyBreach as e:
        print(f"duckdb-sdc release: {e}", file=sys.stderr)
        if page is not None:
            print(f"duckdb-sdc release: the would-be release's report: {page}", file=sys.stderr)
        return POLICY_BREACH
    if page is not None:
        from .release.html import evaluate_page

        evaluate_page(spec, page, tradeoff=args.tradeoff, progress=progress, resources=resources)
    for note in getattr(result, "notes", []):
        # always, also with --quiet: what the spec opted into, as the manifest's notes record it
        print(f"duckdb-sdc release: note: {note}", file=sys.stderr)
    for warning in getattr(result, "warnings", []):
        print(f"duckdb-sdc release: warning: {warning}", file=sys.stderr)
    if result.not_private:
        # always, also with --quiet: the spec opted in, and the manifest says so too
        print(f"duckdb-sdc release: warning: {', '.join(result.not_private)} released with reproducible noise "
              "(reproducible_noise = true): whoever holds the seed can remove the noise; the manifest marks "
              "them \"none: reproducible noise\"", file=sys.stderr)
    pooled = getattr(result, "pooled", None)  # a Spark release pools nothing
    if pooled:
        # always, also with --quiet: released strata values differ from the source's
        print(f"duckdb-sdc release: note: {pooled}", file=sys.stderr)
    if not args.quiet:
        linkage = getattr(result, "linkage", None)
        print(f"released {result.rows} rows x {result.columns} columns ({len(result.masked)} masked: "
              f"{', '.join(result.masked) or 'none'}) {'with Spark ' if args.engine == 'spark' else ''}to "
              f"{result.path} table {result.table!r} in {result.seconds:.1f} s"
              + (f"; linkage (keep it secret) in {linkage}" if linkage else "")
              + (f"; report in {page}" if page is not None else ""))
    return 0


def _page_target(spec, args, option: str, flag: str):
    """The HTML page's path of --report / --html, checked before anything runs (None: not asked)."""
    from .release.html import check_target

    if args.tradeoff is not None and getattr(args, option) is None:
        raise UserError(f"--tradeoff adds a plot to the page of {flag} FILE; give {flag} too")
    if getattr(args, option) is None:
        return None
    return check_target(spec, Path(getattr(args, option)), flag)


def _spark_logging() -> None:
    """Warnings of duckdb_sdc's loggers on stderr, and nothing of py4j's or the root logger's: py4j
    reports a call that SIGINT interrupted with logging.exception (on the root logger, or on
    py4j.clientserver's while it shuts a connection down), which would print a traceback after the
    command's own one-line message."""
    import logging

    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setLevel(logging.WARNING)
        handler.addFilter(lambda record: record.name.split(".")[0] == "duckdb_sdc")  # not py4j's, not the root's
        handler.setFormatter(logging.Formatter("duckdb-sdc: %(name)s: %(message)s"))
        root.addHandler(handler)


def _release_spark(spec, args):
    from .spark import preflight

    if args.dry_run:
        raise UserError("--dry-run prints the DuckDB script; a Spark release has no script to print")
    preflight.check(spec, args.master, ledger_path=args.ledger)  # every refusal at once, before a JVM starts
    _spark_logging()
    from .spark import local_session, release

    spark = local_session(args.master, quiet=True)
    SIGNALS.reclaim()
    return release(spec, spark, ledger_path=args.ledger)


def _evaluate_spark(spec, args):
    from .spark import paths, preflight

    where = preflight.locations(spec)
    local = paths.local_path(where.output)
    if local is not None and not Path(local, spec.output.table).is_dir():
        raise UserError(f"{spec.name}: output.database: no Spark release at {where.output!r} (its table folder "
                        f"{spec.output.table!r} is missing): write it with `duckdb-sdc release --engine spark` first")
    _spark_logging()
    from .spark import evaluate, local_session

    spark = local_session(args.master, quiet=True)
    SIGNALS.reclaim()
    return evaluate(spec, spark)


def _ledger(args) -> int:
    from .release.ledger import Ledger

    book = Ledger(args.ledger)
    if args.action == "forget":
        if not args.release_id:
            raise UserError("ledger forget needs the RELEASE_ID to forget")
        entry = book.forget(args.release_id)
        print(f"forgot release {entry.id} ({entry.data['output']} table {entry.data['table']!r}): it is kept in the "
              f"ledger, marked forgotten at {entry.data['forgotten_at']}, and no longer counts for later releases")
        return 0
    if args.release_id:
        raise UserError(f"ledger list takes no release id, got {args.release_id!r}")
    print(format_ledger(book, args.source, forgotten=args.all), end="")
    return 0


def format_ledger(book, source: str | None = None, *, forgotten: bool = False) -> str:
    """The ledger's releases, grouped by source, with their columns and the epsilon spent."""
    import math

    entries = book.entries(source, forgotten=forgotten)
    if not entries:
        return f"no release{' of source ' + source if source else ''} in the ledger {book.path}\n"
    lines = []
    by_source: dict[str, list] = {}
    for e in entries:
        by_source.setdefault(e.data["fingerprint"], []).append(e)
    for fp, es in by_source.items():
        live = [e for e in es if not e.forgotten]
        spent = math.fsum(e.data.get("epsilon_total") or 0.0 for e in live)
        lines.append(f"source {fp} ({es[-1].data['rows']} records; {es[-1].data['source']}): {len(live)} release"
                     f"{'s' if len(live) != 1 else ''}, epsilon spent {spent:g}")
        for e in es:
            mark = f" FORGOTTEN at {e.data['forgotten_at']}" if e.forgotten else ""
            lines.append(f"  {e.id}  {e.data['created_at'][:19]}  {e.data['output']} table {e.data['table']!r}{mark}")
            for c in e.data["columns"]:
                if c["released_as"] is None:  # dropped
                    continue
                what = c["rule"] if c["method"] is None else c["method"]
                eps = f", epsilon {c['epsilon']:g}" if c.get("epsilon") is not None else ""
                lines.append(f"    {c['column']}: {what}{eps}: {c['privacy_model'] or 'none'}")
    return "\n".join(lines) + "\n"


def _evaluate(args) -> int:
    from .release import format_report, load_spec, report
    from .release.progress import Progress
    from .release.report import verdicts

    spec = load_spec(args.spec)
    if args.check and (spec.policy is None or not spec.policy.limits()):
        raise UserError(f"{spec.name}: --check applies the spec's [policy], and it has none")
    page = _page_target(spec, args, "html", "--html")
    progress = Progress(enabled=False if args.quiet else None)
    resources = _resources(spec, args)
    if args.engine == "spark":
        if page is not None:
            raise UserError("--html writes the page of a DuckDB release's report; it is not made for --engine spark")
        df = _evaluate_spark(spec, args)
    elif page is None:
        df = report(spec, progress=progress, resources=resources)
    else:
        from .release.html import evaluate_page

        df = evaluate_page(spec, page, tradeoff=args.tradeoff, progress=progress, resources=resources)
    print(df.to_csv(index=False) if args.csv else format_report(df), end="")
    if page is not None:
        print(f"duckdb-sdc evaluate: wrote {page}", file=sys.stderr)
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
# duckdb-sdc sql (duckdb_sdc.shell: the dot commands and output modes)


def _open(args):
    import duckdb

    import duckdb_sdc

    if args.database is not None and args.read_only and not Path(args.database).is_file():
        raise UserError(f"no such database file: {args.database!r}")
    if args.database is not None and not Path(args.database).exists() and _looks_like_sql(args.database):
        # DuckDB would create a database file of that name and read SQL from standard input
        from ._validate import show

        raise UserError(f"the database {show(args.database)} is no file and looks like SQL; to run SQL, pass it "
                        "with -c: duckdb-sdc sql [DATABASE] -c 'SQL'")
    try:
        con = duckdb_sdc.connect(args.database, **({"access_mode": "READ_ONLY"} if args.read_only else {}))
    except duckdb.Error as e:
        raise UserError(f"cannot open {args.database!r}: {e}") from None
    return con


SQL_START = ("select", "from", "with", "create", "insert", "update", "delete", "drop", "alter", "copy", "pragma",
             "set", "show", "describe", "summarize", "attach", "install", "load", "explain", "call", "values")


def _looks_like_sql(text: str) -> bool:
    """Whether a database argument is a statement rather than a file name: it has a space or a
    semicolon and starts with a SQL keyword, or it starts with a dot command."""
    words = text.strip().split(None, 1)
    return bool(words) and (text.strip().startswith(".")
                            or (words[0].lower().rstrip(";") in SQL_START and (len(words) > 1 or ";" in text)))


def run_sql(con, text: str, out=None) -> None:
    """Run the statements and dot commands of `text`, printing the results of queries as DuckDB's
    shell prints them (duckbox mode unless the text sets another). Raises UserError at the first
    failure."""
    from .shell import Shell, ShellError

    try:
        Shell(con, out=out).run(text)
    except ShellError as e:
        raise UserError(str(e)) from None


def _sql(args) -> int:
    import duckdb_sdc

    from .shell import Shell, ShellError, decode, read_file

    con = _open(args)
    interactive = args.command_sql is None and args.file is None and sys.stdin.isatty()
    con.execute(f"SET enable_progress_bar = {'true' if interactive else 'false'}")
    try:
        shell = Shell(con, mode=args.mode, headers=args.headers)
        if interactive:
            shell.prompt(SIGNALS, _history_file(), f"duckdb_sdc {duckdb_sdc.__version__}: SQL with every duckdb_sdc "
                                                   "function registered. .help for help")
            return 0
        if args.command_sql is not None:
            text = args.command_sql
        elif args.file is not None:
            text = read_file(args.file)
        else:
            text = decode(sys.stdin.buffer.read(), "standard input")
        shell.run(text)
    except ShellError as e:
        raise UserError(str(e)) from None
    finally:
        con.close()
    return 0


def _history_file() -> Path:
    return Path(os.environ.get("DUCKDB_SDC_HISTORY", Path.home() / ".duckdb_sdc_history"))


if __name__ == "__main__":
    sys.exit(main())
