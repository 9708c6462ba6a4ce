"""The documentation: the generated function reference is up to date, every example on every page prints
what the page shows, `mkdocs build --strict` passes, and the built site renders in a real headless
Chromium (served on localhost) with no console errors and no request leaving the machine.

The build and browser tests need the `docs` extra (mkdocs-material, playwright) and a Chromium binary;
they fail, never skip, when one is missing, and say how to install it.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import urlparse

import pytest

import docs_examples
from duckdb_sdc.sql import REGISTRY
from duckdb_sdc.sql.docs import PAGE, render

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
EXAMPLE_PAGES = docs_examples.example_pages()
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
INSTALL_DOCS = 'install the docs extra: pip install ".[docs]"'


# ---------------------------------------------------------------------------------------------
# the pages' content

def test_function_reference_is_generated_from_the_registry():
    assert PAGE.read_text(encoding="utf-8") == render(), "run: python -m duckdb_sdc.sql.docs"


def test_every_registry_row_has_an_entry_and_an_executed_example():
    text = PAGE.read_text(encoding="utf-8")
    executed = {b.text for b in docs_examples.parse(PAGE) if b.executed and b.lang == "sql"}
    for row in REGISTRY:
        assert f"{{ #{row.name} data-toc-label=\"{row.name}\" }}" in text, row.name
        assert not row.example or row.example in executed, row.name


@pytest.mark.parametrize("page", EXAMPLE_PAGES, ids=[p.relative_to(ROOT).as_posix() for p in EXAMPLE_PAGES])
def test_examples_print_what_the_page_shows(page, tmp_path):
    results = docs_examples.run_page(page, tmp_path)
    assert len(results) == sum(b.executed for b in docs_examples.parse(page)) > 0
    failures = docs_examples.report(results)
    assert not failures, (f"{failures}\n(python tests/docs_examples.py --update {page.relative_to(ROOT)} "
                          "rewrites the outputs; review the diff)")


def test_every_spec_on_the_site_is_a_valid_spec():
    specs = [b for p in [*docs_examples.pages(), ROOT / "README.md"] for b in docs_examples.parse(p)
             if b.lang == "toml" and "[source]" in b.text]
    assert len(specs) >= 8
    for block in specs:
        docs_examples.check_spec(block)  # raises SpecError naming the problem


def test_every_page_is_in_the_nav_and_every_nav_entry_exists():
    try:
        import yaml
    except ImportError as e:
        pytest.fail(f"PyYAML is not installed ({e}); {INSTALL_DOCS}")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))

    def walk(node):
        if isinstance(node, str):
            yield node
        elif isinstance(node, list):
            for item in node:
                yield from walk(item)
        elif isinstance(node, dict):
            for value in node.values():
                yield from walk(value)

    nav = list(walk(config["nav"]))
    pages = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    assert sorted(nav) == pages, "pages missing from mkdocs.yml's nav, or nav entries without a page"
    assert len(nav) == len(set(nav))


def test_readme_is_short_and_points_to_the_docs():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    for needed in ("python3 tasks.py demo", "python3 tasks.py test", "mkdocs serve", 'pip install ".[docs]"',
                   "duckdb-sdc release", "duckdb-sdc evaluate"):
        assert needed in text, needed
    assert "FUNCTION REFERENCE" not in text and "| rows |" not in text  # no reference, no speed tables


# ---------------------------------------------------------------------------------------------
# the convention itself (tests/docs_examples.py must be able to fail)

def _page(tmp_path, text):
    page = tmp_path / "page.md"
    page.write_text(text, encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    return docs_examples.run_page(page, work)


def _failures(results):
    return [r.failed for r in results if r.failed]


def test_convention_a_wrong_output_fails_and_the_right_one_passes(tmp_path):
    ok = ("```sql\nSELECT 42 AS answer;\n```\n\n"
          "```text\n┌────────┐\n│ answer │\n│ int32  │\n├────────┤\n│     42 │\n└────────┘\n```\n")
    right, wrong = tmp_path / "right", tmp_path / "wrong"
    right.mkdir()
    wrong.mkdir()
    assert _failures(_page(right, ok)) == []
    assert _failures(_page(wrong, ok.replace("│     42 │", "│     43 │"))) == ["the output differs from the page"]


def test_convention_ellipsis_matches_within_a_line_and_whole_lines():
    assert docs_examples.matches("released ... rows in ... s", "released 12 rows in 0.3 s\n")
    assert not docs_examples.matches("released ... rows", "released 12 rows\nand more\n")
    assert docs_examples.matches("first\n...\nlast", "first\na\nb\nlast\n")
    assert docs_examples.matches("first\n...\nlast", "first\nlast")
    assert not docs_examples.matches("first\nlast", "first\nmiddle\nlast")
    assert docs_examples.matches("a  \n\n", "\na\n")  # trailing spaces and blank edges are ignored


def test_convention_sessions_files_errors_and_exit_codes(tmp_path):
    results = _page(tmp_path, """
```csv title="data/t.csv"
x
1
2
```

```sql
CREATE TABLE t AS FROM 'data/t.csv';
```

```sql
SELECT sum(x) AS s FROM t;
```

```text
...
│ ... 3 │
...
```

```sql
SELECT mdav_round([1, 2], 3);
```

```text
Error: mdav_round: k = 3 is larger than the number of non-NULL values (2)
```

```sql
SELECT mdav_round([1, 2], 3);
```

```sh
cat data/t.csv | wc -l
```

```text
3
```

```sh
false
```

```python
total = 1 + 2
```

```python
print(total)
```

```text
3
```

```sh title="not executed: it would fail"
false
```
""")
    assert [r.block.lang for r in results] == ["sql", "sql", "sql", "sql", "sh", "sh", "python", "python"]
    assert _failures(results) == ["the example failed and the page shows no output for it",
                                  "the command exited with a non-zero code"]


def test_convention_refuses_unmarked_skips_and_shell_aliases(tmp_path):
    page = tmp_path / "p.md"
    page.write_text('```sh title="not executed:"\nx\n```\n', encoding="utf-8")
    with pytest.raises(docs_examples.ConventionError, match="must say why"):
        docs_examples.parse(page)
    page.write_text("```bash\necho hi\n```\n", encoding="utf-8")
    with pytest.raises(docs_examples.ConventionError, match="write shell examples as ```sh"):
        docs_examples.parse(page)


def test_update_rewrites_a_stale_output_block(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("intro\n\n```sh\necho new\n```\n\n```text\nold\n```\n\nend\n", encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    results = docs_examples.run_page(page, work)
    assert docs_examples.update(page, results) == 1
    assert page.read_text(encoding="utf-8") == "intro\n\n```sh\necho new\n```\n\n```text\nnew\n```\n\nend\n"
    assert _failures(docs_examples.run_page(page, work)) == []


# ---------------------------------------------------------------------------------------------
# the built site, in a real browser

@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """`mkdocs build --strict` into a temporary folder; any warning fails the build."""
    try:
        import material  # noqa: F401
        import mkdocs  # noqa: F401
    except ImportError as e:
        pytest.fail(f"mkdocs-material is not installed ({e}); {INSTALL_DOCS}")
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                          str(ROOT / "mkdocs.yml"), "--site-dir", str(out)],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)  # figures drawn: docs_hooks.py
    assert run.returncode == 0, f"mkdocs build --strict failed:\n{run.stdout}\n{run.stderr}"
    assert "WARNING" not in run.stderr, run.stderr
    return out


def test_mkdocs_build_strict_writes_every_page(site):
    for page in DOCS.rglob("*.md"):
        rel = page.relative_to(DOCS).with_suffix("")
        html = site / ("index.html" if rel.name == "index" and rel.parent == Path(".") else
                       rel.parent / "index.html" if rel.name == "index" else rel / "index.html")
        assert html.is_file(), html


def test_built_site_loads_nothing_from_elsewhere(site):
    """No web fonts, CDN scripts or stylesheets: every asset a page references is the site's own."""
    external = re.compile(r"""<(?:link|script|img|iframe)\b[^>]*\b(?:href|src)=["'](?:https?:)?//""", re.I)
    for html in site.rglob("*.html"):
        text = html.read_text(encoding="utf-8")
        assert not external.search(text), f"{html.relative_to(site)} references an external asset"
        assert "fonts.googleapis" not in text and "fonts.gstatic" not in text, html


def _chromium() -> str:
    for candidate in (os.environ.get("DUCKDB_SDC_CHROMIUM"), shutil.which("chromium"),
                      shutil.which("chromium-browser"), shutil.which("google-chrome")):
        if candidate and Path(candidate).exists():
            return candidate
    pytest.fail("no Chromium found for the docs browser test: install it (Debian or Ubuntu: "
                "sudo apt-get install chromium), or set DUCKDB_SDC_CHROMIUM to a Chromium binary")


def test_a_missing_chromium_fails_and_says_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setenv("DUCKDB_SDC_CHROMIUM", str(tmp_path / "no-such-chromium"))
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(pytest.fail.Exception, match="apt-get install chromium"):
        _chromium()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def served(site):
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser(served, tmp_path_factory):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as e:
        pytest.fail(f"playwright is not installed ({e}); {INSTALL_DOCS}")
    executable = _chromium()
    profile = tmp_path_factory.mktemp("chromium-profile")  # a fresh --user-data-dir
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(str(profile), executable_path=executable, headless=True,
                                                       args=CHROMIUM_FLAGS, viewport={"width": 1280, "height": 900})
        yield context
        context.close()


def _open(browser, url, shots: Path, name: str):
    """Open url; return the page and every problem seen: console errors, page errors, failed requests
    and requests to anything but the local server."""
    page = browser.new_page()
    problems = []
    host = urlparse(url).netloc
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url} ({r.failure})"))
    page.on("request", lambda r: problems.append(f"request leaves the machine: {r.url}")
            if urlparse(r.url).scheme in ("http", "https") and urlparse(r.url).netloc != host else None)
    response = page.goto(url, wait_until="networkidle")
    assert response is not None and response.ok, f"{url}: {response and response.status}"
    page.screenshot(path=str(shots / f"{name}.png"), full_page=False)
    return page, problems


def test_home_page_renders_in_chromium(browser, served, tmp_path):
    page, problems = _open(browser, f"{served}/", tmp_path, "home")
    assert "duckdb_sdc" in page.title()
    assert page.locator("article h1").first.inner_text().strip().rstrip("¶") == "duckdb_sdc"
    assert page.locator("nav.md-nav a", has_text="Getting started").count() >= 1
    # the theme's stylesheet applied: the header bar is laid out, not raw HTML
    assert page.locator("header.md-header").bounding_box()["height"] > 20
    page.close()
    assert problems == []
    assert (tmp_path / "home.png").stat().st_size > 10_000


def test_function_reference_renders_in_chromium(browser, served, tmp_path):
    page, problems = _open(browser, f"{served}/reference/functions/", tmp_path, "functions")
    assert "SQL function reference" in page.title()
    heading = page.locator("h3#mdav_round")
    assert heading.count() == 1 and heading.is_visible()
    assert "mdav_round(xs DOUBLE[], k INTEGER or 'auto'" in heading.inner_text()
    assert page.locator("article h3[id]").count() == len(REGISTRY)
    page.locator("article a[href='#idp_cbls']").first.click()
    page.wait_for_function("location.hash === '#idp_cbls'")
    page.screenshot(path=str(tmp_path / "functions_idp_cbls.png"))
    page.close()
    assert problems == []
    assert (tmp_path / "functions.png").stat().st_size > 10_000


def test_search_works_offline_in_chromium(browser, served, tmp_path):
    page, problems = _open(browser, f"{served}/", tmp_path, "search")
    page.keyboard.press("/")  # Material's shortcut: focus the search box
    page.keyboard.type("vmdav_round")
    results = page.locator(".md-search-result__item")
    # the results of a prefix typed so far ("v") may show first: wait for those of the whole word
    results.filter(has_text="vmdav_round").first.wait_for(timeout=15_000)
    assert "vmdav_round" in results.first.inner_text()
    page.screenshot(path=str(tmp_path / "search.png"))
    page.close()
    assert problems == []


# ---------------------------------------------------------------------------------------------
# what readers see: figures from real runs, wide blocks, no harness titles

FIGURES = {"tradeoff.png": "releases/tradeoff/", "microaggregation.svg": "methods/microaggregation/",
           "boxes.svg": "methods/boxes/", "report-classes.svg": "releases/evaluate/"}


def test_the_build_draws_the_figures_from_real_runs(site):
    for name in [*FIGURES, "report.html"]:
        assert (site / "figures" / name).stat().st_size > 2_000, name
    assert not (DOCS / "figures").exists()  # generated into the site, never into docs/
    report = (site / "figures" / "report.html").read_text(encoding="utf-8")
    assert "REFUSED: the release breaches its policy" in report and '<div class="tradeoff"><svg' in report


def test_the_harness_titles_are_not_shown(site):
    assert sum("not executed:" in p.read_text(encoding="utf-8") for p in DOCS.rglob("*.md")) >= 5
    shown = [p.relative_to(site) for p in site.rglob("*.html") if "not executed:" in p.read_text(encoding="utf-8")]
    assert shown == []


@pytest.mark.parametrize("name", list(FIGURES))
def test_each_figure_renders_on_its_page_in_chromium(browser, served, tmp_path, name):
    page, problems = _open(browser, f"{served}/{FIGURES[name]}", tmp_path, name.split(".")[0])
    image = page.locator(f"img.sdc-figure[src$='figures/{name}']")
    image.scroll_into_view_if_needed()
    assert image.count() == 1
    width = image.evaluate("img => img.complete ? img.naturalWidth : 0")
    box = image.bounding_box()
    page.screenshot(path=str(tmp_path / f"{name}.png"))
    page.close()
    assert problems == []
    assert width > 300 and box["width"] > 300 and box["height"] > 100


def test_the_report_page_of_the_site_opens_without_errors(browser, served, tmp_path):
    page, problems = _open(browser, f"{served}/figures/report.html", tmp_path, "report")
    assert page.locator(".status").inner_text().startswith("REFUSED")
    assert page.locator("svg.chart rect.bar").count() > 10
    page.screenshot(path=str(tmp_path / "report_full.png"), full_page=True)
    page.close()
    assert problems == []


def test_verdict_lines_are_visible_at_1280_px_and_wide_code_says_so(browser, served, tmp_path):
    page, problems = _open(browser, f"{served}/getting-started/", tmp_path, "getting-started")
    outputs = page.locator(".language-text pre > code", has_text="verdict (")
    assert outputs.count() >= 1
    for i in range(outputs.count()):
        code = outputs.nth(i)
        # the block wraps: nothing of it, the verdict line included, is hidden beyond its right edge
        assert code.evaluate("c => c.scrollWidth <= c.clientWidth + 1 && c.parentElement.scrollWidth <= "
                             "c.parentElement.clientWidth + 1"), i
    code.scroll_into_view_if_needed()
    page.screenshot(path=str(tmp_path / "verdict.png"))
    page.close()
    cli, more = _open(browser, f"{served}/cli/", tmp_path, "cli")
    wide = cli.evaluate("() => [...document.querySelectorAll('.md-typeset .highlight pre > code')]"
                        ".filter(c => c.scrollWidth > c.clientWidth + 1).length")
    notes = cli.locator(".sdc-scroll-note")
    assert wide >= 1 and notes.count() == wide and notes.first.is_visible()
    cli.close()
    assert problems == [] and more == []
