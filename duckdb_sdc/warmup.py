"""Compile every Numba kernel of duckdb_sdc once, into Numba's on-disk cache, so that no later process
compiles: the first call of a function in a fresh process then loads machine code instead of
compiling it. Measured by benchmarks/bench_first_call.py on 2 cores shared with other work (load
about 6): first calls of 8 to 39 s cold became 0.04 to 0.55 s warm (median of 3 processes per
family); the warm-up itself took 204 s into an empty cache.

    duckdb-sdc warmup          # or: python -m duckdb_sdc.warmup   (once, right after installing)

What it runs: every example of the SQL function reference (`SqlFunction.example`, the registry is the
list of what to warm) on small generated tables with the names the examples use, then the functions
whose kernels switch to a parallel path on large input (`methods._order.PARALLEL_MIN` values) on
one large column (not rbd_round: it is quadratic in the number of values, 43 s for 60,000 here, and
its parallel lookup is ewd's). Every kernel is compiled for the argument types these calls give it,
which are the types the SQL binding always passes (float64 arrays, int64 labels); `kernels()` lists
every kernel of the package and whether the cache holds it: after a warm-up none is missing, and a
fresh process compiles nothing (tests/kernels/test_warmup.py).

What no cache removes is done by `sql.prepare.prepare_in_background`, which `register()` starts:
importing pandas (pyarrow's conversion to numpy does) and initialising Numba's compiler target, 1 to
1.5 s of a process's first call, in a thread that overlaps with registering the functions.

Where the cache goes is Numba's choice, made per kernel: `__pycache__` beside the module's source
when that folder is writable (an editable install, a virtual environment, a container image built by
the user who runs it), else the user's cache folder (~/.cache/numba), or NUMBA_CACHE_DIR when that is
set. A process finds the cache where it would write it, so run the warm-up as the user, and with the
NUMBA_CACHE_DIR, of the processes that will use the package. Cache entries are keyed by the source
file's content, the Numba version and the CPU: a change of any of them compiles again (once).
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time
from dataclasses import dataclass, field

import numpy as np

LARGE_QUERIES = (  # the functions whose kernels take a parallel path on a large list
    "SELECT mdav_round(list(x), 5) FROM big",
    "SELECT ewd_round(list(x), 8), efd_round(list(x), 8) FROM big",
    "SELECT kmd_round(list(x), 8) FROM big",
    "SELECT rank_bounded_mae(x, xm), rank_bounded_mse(x, xm), rank_mae(x, xm), rank_mse(x, xm) FROM big",
    "SELECT record_linkage([x], [xm]), record_linkage([x, y], [xm, ym]) FROM big",
    "SELECT add_noise(list(x), 0.1, seed := 1), rank_swap(list(x), 5, seed := 1) FROM big",
    # seeded noise: the counter-based sampler
    "SELECT dp_laplace(list(income), 1.0, 0, 1e6, seed := 1), idp_cbls(list(income), 5, 1.0, seed := 1) FROM people",
    # many small groups of the rank measures, with random tie keys (the stacked path)
    "SELECT cluster, rank_mae(income, savings), rank_mse(income, savings) FROM clustered GROUP BY cluster",
    # cells sensitive under (1, 0.6): secondary suppression and merging run
    "SELECT dominance_suppress(r, mdav_multi_labels(r, 3), 1, 0.6), dominance_merge(r, mdav_multi_labels(r, 3), 1, 0.6) "
    "FROM (SELECT list([income, savings]) AS r FROM people WHERE income IS NOT NULL AND savings IS NOT NULL)",
    # MDAV whose groups grow until no cell is sensitive
    "SELECT mdav_p_percent_labels(r, 3, 0.2) "
    "FROM (SELECT list([income, savings]) AS r FROM people WHERE income IS NOT NULL AND savings IS NOT NULL)",
    # heavy unequal ties: equal-frequency cuts need the exact balanced search, not the nearest gaps
    "SELECT efd_round(list(floor(-ln(((hash(i) % 1000003) + 0.5) / 1000003) * 30)), 50) FROM range(5000) r(i)",
)


@dataclass
class Kernel:
    module: str
    name: str
    dispatcher: object

    @property
    def signatures(self) -> list:
        return list(self.dispatcher.signatures)

    @property
    def inlined(self) -> bool:
        """Compiled into its callers (inline='always'), never on its own."""
        return self.dispatcher.targetoptions.get("inline") == "always"

    @property
    def cache_path(self) -> str | None:
        cache = getattr(self.dispatcher, "_cache", None)
        return getattr(cache, "cache_path", None)

    @property
    def cached(self) -> int:
        """Signatures in the on-disk cache for the current source of the kernel (Numba drops entries
        of another source, Numba version or CPU when it reads the index); 0 if unknown."""
        try:
            return len(self.dispatcher._cache._cache_file._load_index())
        except Exception:  # Numba's cache file is internal: no answer is "not cached"
            return 0

    @property
    def compiled_now(self) -> int:
        """Signatures this process compiled (cache misses) rather than loaded."""
        return sum(self.dispatcher.stats.cache_misses.values())

    @property
    def loaded(self) -> int:
        return sum(self.dispatcher.stats.cache_hits.values())


def kernels() -> list[Kernel]:
    """Every Numba kernel defined in duckdb_sdc (importing every module of the package)."""
    from numba.core.dispatcher import Dispatcher

    import duckdb_sdc

    found = []
    for info in pkgutil.walk_packages(duckdb_sdc.__path__, "duckdb_sdc."):
        if info.name.endswith("__main__") or info.name.startswith(("duckdb_sdc.spark", "duckdb_sdc.dbt_plugin")):
            continue  # the command line (it runs on import); optional extras (pyspark, dbt) without kernels
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if isinstance(value, Dispatcher) and getattr(value.py_func, "__module__", None) == info.name:
                found.append(Kernel(info.name, name, value))
    return found


@dataclass
class WarmupResult:
    seconds: float
    statements: int
    failures: list[tuple[str, str]] = field(default_factory=list)  # (function or query, error)
    kernels: list[Kernel] = field(default_factory=list)
    timings: list[tuple[str, float]] = field(default_factory=list)  # (function or query, seconds)

    @property
    def missing(self) -> list[Kernel]:
        """Kernels with no entry in the cache (a kernel that only other kernels call has its own entry,
        written when they were compiled; an inlined one has none and is not missing)."""
        return [k for k in self.kernels if not k.cached and not k.inlined]

    @property
    def ok(self) -> bool:
        return not self.failures and not self.missing

    def summary(self) -> str:
        compiled = sum(k.compiled_now for k in self.kernels)
        loaded = sum(k.loaded for k in self.kernels)
        folders = sorted({k.cache_path for k in self.kernels if k.cache_path})
        cached = sum(1 for k in self.kernels if k.cached)
        inline_only = sum(1 for k in self.kernels if k.inlined and not k.cached)
        lines = [f"duckdb-sdc warmup: {cached} kernels in the cache, {inline_only} only inlined into their callers, "
                 f"{len(self.missing)} missing; {compiled} signatures compiled now, {loaded} loaded; "
                 f"{self.statements} statements in {self.seconds:.1f} s",
                 "cache: " + ("; ".join(folders) or "none")]
        lines += [f"not compiled: {k.module}.{k.name}" for k in self.missing]
        lines += [f"failed: {what}: {error}" for what, error in self.failures]
        return "\n".join(lines)


def _tables(con, n: int = 400) -> None:
    """Small tables with the names and columns the reference's examples use: lognormal amounts (a heavy
    tail, so some cells are dominated and merges run), a few NULLs, ties. Pure SQL (hash-based
    pseudo-random numbers, the same in every run), so that making them loads nothing of Python's."""
    u = "((hash(i, {s}) % 1000003) + 0.5) / 1000003"  # uniform in (0, 1), one stream per s
    normal = f"sqrt(-2 * ln({u})) * cos(2 * pi() * {u.format(s='{s}1')})"
    con.execute(f"""CREATE OR REPLACE TEMP TABLE people AS
        SELECT i AS id, ['north', 'south', 'east', 'west'][1 + (hash(i, 'r') % 4)::BIGINT] AS region,
               18 + (hash(i, 'a') % 72)::BIGINT AS age,
               CASE WHEN hash(i, 'ni') % 60 = 0 THEN NULL ELSE round(exp(10 + 0.7 * {normal.format(s=1)})) END AS income,
               round(exp(10 + 0.7 * {normal.format(s=1)}) * (0.3 + 0.6 * {u.format(s=2)})) AS expenses,
               CASE WHEN hash(i, 'ns') % 80 = 0 THEN NULL ELSE round(exp(8 + 1.8 * {normal.format(s=3)})) END AS savings
        FROM range({n}) r(i)""")
    con.execute("CREATE OR REPLACE TEMP TABLE people_masked AS SELECT id, region, age, "
                "round(income / 100) * 100 AS income, round(expenses / 100) * 100 AS expenses, "
                "round(savings / 10) * 10 AS savings FROM people")
    con.execute(f"""CREATE OR REPLACE TEMP TABLE j AS
        SELECT region, income, income * (1 + 0.1 * {normal.format(s=4)}) AS income_m,
               {normal.format(s=5)} AS a, {normal.format(s=6)} AS b, {normal.format(s=7)} AS c,
               a + 0.1 * {normal.format(s=8)} AS a_m, b + 0.1 * {normal.format(s=9)} AS b_m,
               c + 0.1 * {normal.format(s=10)} AS c_m, a + {normal.format(s=11)} AS y, y + 0.1 * {normal.format(s=12)} AS y_m
        FROM (SELECT id AS i, region, income FROM people)""")
    con.execute("CREATE OR REPLACE TEMP TABLE clustered AS SELECT region, id % 40 AS cluster, income, expenses, savings "
                "FROM people")
    con.execute("CREATE OR REPLACE TEMP TABLE weighted AS SELECT income, savings, 1 + (id % 5) AS w FROM people "
                "WHERE income IS NOT NULL AND savings IS NOT NULL")
    con.execute("CREATE OR REPLACE TEMP TABLE released AS SELECT income * 0.9 AS income_lower, "
                "income * 1.1 AS income_upper, savings * 0.9 AS savings_lower, savings * 1.1 AS savings_upper, "
                "1 + (id % 3) AS w FROM people WHERE income IS NOT NULL AND savings IS NOT NULL")
    con.execute("CREATE OR REPLACE TEMP TABLE weighted_people AS SELECT *, 1 + id % 4 AS w FROM people")
    con.execute("CREATE OR REPLACE TEMP TABLE age_h AS SELECT a AS age, (a // 10 * 10) || '-' || (a // 10 * 10 + 9) "
                "AS decade, '*' AS top FROM range(0, 121) r(a)")  # the recoding examples' hierarchies
    con.execute("CREATE OR REPLACE TEMP TABLE region_h AS SELECT region, CASE WHEN region IN ('north', 'east') "
                "THEN 'north-east' ELSE 'south-west' END AS half, '*' AS top FROM (SELECT DISTINCT region FROM people)")
    con.execute("CREATE OR REPLACE TEMP TABLE weighted_j AS SELECT income, income_m, 1 + (hash(income) % 4)::BIGINT AS w "
                "FROM j")


def _large_table(con) -> None:
    from .methods._order import PARALLEL_MIN

    n = PARALLEL_MIN + 4096
    # distinct values in no order (the 1-D k-means sweep goes parallel on that many distinct values)
    con.execute(f"CREATE OR REPLACE TEMP TABLE big AS SELECT (hash(i) % 1000000007) * 1.0 + i / {n} AS x, "
                f"hash(i + 7) % 1000 * 1.0 AS y, x + hash(i + 1) % 101 AS xm, y + hash(i + 2) % 7 AS ym "
                f"FROM range({n}) r(i)")


OUT_OF_CORE = (  # duckdb_sdc.outofcore's streaming kernels (a Python API, not SQL)
    ("ranking_round", {"k": 5}), ("mdav_round", {"k": 5}), ("ewd_round", {"c": 8}), ("efd_round", {"c": 8}),
)


def _out_of_core(con, method: str, params: dict) -> None:
    from . import outofcore

    con.execute("CREATE TEMP TABLE IF NOT EXISTS ooc AS SELECT i AS id, (hash(i) % 1000) * 1.0 AS x FROM range(5000) r(i)")
    outofcore.mask_column(con, "ooc", key="id", column="x", method=method, params=params,
                          target=f"ooc_{method}")
    con.execute(f"DROP TABLE IF EXISTS ooc_{method}")


def _python_kernels() -> None:
    """Kernels that no SQL example reaches on its small tables: compiled by direct calls on data shaped
    to take their paths (key frequencies coded in mixed radix and by hashing, MDAV's exact tie
    decision, re-sampling by value counts, removal of sensitive records)."""
    import numpy as np

    from .measures.keys import key_frequencies, suda2
    from .methods._exact import accumulator, add, add_product, add_range, midpoint_side, sign_of
    from .methods.discretisation import rbd_round
    from .methods.dominance import remove_sensitive
    from .methods.sensitivity import dominance_rule

    rng = np.random.default_rng(0)
    few = np.array([["a", "x"], ["a", None], ["b", "y"], ["b", "y"]], dtype=object)
    key_frequencies(few)  # a few small keys: one mixed-radix code per combination
    wide = rng.integers(0, 1 << 40, size=(64, 3)).astype(object)  # codes beyond int64: hashed rows
    wide[0, 1] = None
    key_frequencies(wide)
    # SUDA2 on keys whose mixed radix passes 62 bits: matches counted by hashing the value tuples
    suda2(rng.integers(0, 5000, size=(2000, 7)).astype(np.int64))
    suda2(rng.integers(0, 3, size=(60, 4)).astype(np.int64))  # and on one code per combination
    acc, work = accumulator(), accumulator()
    v = np.array([1.5, -2.25, 3.0], dtype=np.float64)
    add(acc, 0.1, 1)
    add_product(acc, 0.3, 7, -1)
    add_range(acc, v, 0, 3, 1)
    midpoint_side(acc, 3, 0.5, 1.5, work)
    sign_of(acc)
    rbd_round(np.repeat(np.arange(8.0), 50), 4, seed=1)  # few distinct values: draws by value counts
    X = np.column_stack([np.concatenate([np.full(9, 1.0), [1000.0]] * 4), np.arange(40.0)])
    remove_sensitive(X, np.repeat(np.arange(4), 10), dominance_rule(1, 0.6))


PYTHON_CALLS = ("kernels reached from Python",)  # `_python_kernels`, run once among the statements


def _statement(example: str) -> str:
    return example.split("--")[0].strip()


def warm_up(progress=None) -> WarmupResult:
    """Run every reference example and the large-input calls, so every kernel is compiled (or loaded)
    into the cache; return what happened."""
    import duckdb

    import duckdb_sdc
    from .sql.registry import REGISTRY

    start = time.perf_counter()
    con = duckdb_sdc.connect()
    failures, timings, statements = [], [], 0
    try:
        con.execute("SET enable_progress_bar = false")
        _tables(con)
        _large_table(con)
        work = [(row.name, _statement(row.example)) for row in REGISTRY if row.example]
        work += [(query, query) for query in LARGE_QUERIES]
        work += [(f"out of core {method}", (method, params)) for method, params in OUT_OF_CORE]
        work += [(what, None) for what in PYTHON_CALLS]
        for i, (what, query) in enumerate(work, start=1):
            if progress is not None:
                progress(i, len(work), what)
            began = time.perf_counter()
            try:
                if query is None:
                    _python_kernels()
                elif isinstance(query, tuple):
                    _out_of_core(con, *query)
                else:
                    con.execute(query).fetchall()
                statements += 1
            except (duckdb.Error, ValueError) as e:  # ValueError: an SdcError of the out-of-core path
                failures.append((what, str(e).splitlines()[0]))
            timings.append((what, time.perf_counter() - began))
    finally:
        con.close()
    return WarmupResult(seconds=time.perf_counter() - start, statements=statements, failures=failures,
                        kernels=kernels(), timings=timings)


def main(argv: list[str] | None = None) -> int:
    """`duckdb-sdc warmup`: 0 when every kernel is ready, 1 (with the list) when some are not."""
    quiet = "--quiet" in (argv if argv is not None else sys.argv[1:])

    def show(i, total, what):
        if not quiet and sys.stderr.isatty():
            sys.stderr.write(f"\r\x1b[2Kwarmup {i}/{total} {what}"[:120])
            sys.stderr.flush()

    result = warm_up(progress=show)
    if not quiet and sys.stderr.isatty():
        sys.stderr.write("\r\x1b[2K")
    if not quiet or not result.ok:
        print(result.summary(), file=sys.stdout if result.ok else sys.stderr)
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
