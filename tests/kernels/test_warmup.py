"""The install-time warm-up: every Numba kernel is in the cache afterwards, and a fresh process's first
calls compile nothing (the latency itself is measured by benchmarks/bench_first_call.py, not here)."""

from __future__ import annotations

import json
import subprocess
import sys

from numba.core.dispatcher import Dispatcher

from duckdb_sdc import warmup

FIRST_CALLS = [  # one first call per family, on the warm-up's tables
    "SELECT region, mdav_round(list(income), 5) FROM people GROUP BY region",
    "SELECT region, kmd_round(list(income), 5) FROM people GROUP BY region",
    "SELECT region, mdav_multi_round(list([income, expenses, savings]), 5) FROM people GROUP BY region",
    "SELECT region, idp_cbls(list(income), 5, 1.0) FROM people GROUP BY region",
    "SELECT rank_bounded_mae(income, income_m) FROM j",
    "SELECT record_linkage([a, b, c], [a_m, b_m, c_m]) FROM j",
    "SELECT * FROM evaluate_masking('people', 'people_masked', 'id', columns := ['income', 'age'])",
    "SELECT box_release(list([income, savings]), 5, 'corr(1, 2)') FROM people",
]

FRESH = r"""
import json, sys
import duckdb_sdc
from duckdb_sdc.warmup import _tables, kernels
con = duckdb_sdc.connect()
_tables(con)
for query in json.loads(sys.argv[1]):
    con.execute(query).fetchall()
con.close()
compiled = {f"{k.module}.{k.name}": sum(k.dispatcher.stats.cache_misses.values()) for k in kernels()}
print(json.dumps({name: n for name, n in compiled.items() if n}))
"""


def test_kernels_finds_every_numba_kernel_and_each_is_cached():
    found = warmup.kernels()
    names = {f"{k.module}.{k.name}" for k in found}
    assert {"duckdb_sdc.methods.microaggregation._oma_sorted", "duckdb_sdc.measures.risk._link_block",
            "duckdb_sdc.methods._order._scatter_parallel", "duckdb_sdc.sql.prepare._ready"} <= names
    assert len(found) == len(names) > 50
    for k in found:
        assert isinstance(k.dispatcher, Dispatcher)
        # a kernel without cache=True would compile again in every process
        assert k.cache_path is not None, f"{k.module}.{k.name} is not cached (numba.njit(cache=True))"
    assert "duckdb_sdc.methods.kmeans1d._beats" in {f"{k.module}.{k.name}" for k in found if k.inlined}


def test_after_the_warmup_every_kernel_is_cached_and_a_fresh_process_compiles_nothing():
    """`duckdb-sdc warmup` as the install step runs it (Numba's default cache, beside the modules),
    then new processes: no kernel is missing from the cache, and the first call of every family loads
    what it needs (no cache miss)."""
    done = subprocess.run([sys.executable, "-m", "duckdb_sdc", "warmup"], capture_output=True, text=True,
                          timeout=3600)
    assert done.returncode == 0, done.stdout + done.stderr
    kernels = warmup.kernels()
    inline_only = sum(1 for k in kernels if k.inlined and not k.cached)
    assert done.stdout.startswith(f"duckdb-sdc warmup: {len(kernels) - inline_only} kernels in the cache, "
                                  f"{inline_only} only inlined into their callers, 0 missing; ")
    assert [f"{k.module}.{k.name}" for k in kernels if not k.cached and not k.inlined] == []
    fresh = subprocess.run([sys.executable, "-c", FRESH, json.dumps(FIRST_CALLS)], capture_output=True, text=True,
                           timeout=600)
    assert fresh.returncode == 0, fresh.stderr
    assert json.loads(fresh.stdout.strip().splitlines()[-1]) == {}


def test_a_failed_statement_makes_the_warmup_fail_and_say_so(monkeypatch, capsys):
    from duckdb_sdc.sql import registry

    few = tuple(r for r in registry.REGISTRY if r.name in ("mdav_labels", "dominance_to_p_percent"))
    monkeypatch.setattr(registry, "REGISTRY", few)
    monkeypatch.setattr(warmup, "LARGE_QUERIES", ("SELECT mdav_round([1, 2, 3], 5)",))
    monkeypatch.setattr(warmup, "OUT_OF_CORE", ())
    monkeypatch.setattr(warmup, "PYTHON_CALLS", ())
    result = warmup.warm_up()
    assert result.statements == 2 and [w for w, _ in result.failures] == ["SELECT mdav_round([1, 2, 3], 5)"]
    assert "k = 5 is larger than the number of non-NULL values (3)" in result.failures[0][1]
    assert not result.ok
    monkeypatch.setattr(warmup, "warm_up", lambda progress=None: result)
    assert warmup.main(["--quiet"]) == 1
    err = capsys.readouterr().err
    assert "failed: SELECT mdav_round([1, 2, 3], 5): " in err


def test_the_preparation_runs_once_per_process():
    script = ("import threading, duckdb_sdc\n"
              "from duckdb_sdc.sql import prepare\n"
              "duckdb_sdc.connect(); duckdb_sdc.connect().cursor()\n"
              "assert len(prepare._PREPARING) == 1\n"
              "prepare._PREPARING[0].join()\n"
              "import sys; print('pandas' in sys.modules, len(prepare._ready.signatures))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "1"]
