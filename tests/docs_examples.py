"""Executable documentation: find the examples on the pages under docs/ (and README.md), run them, and
compare their outputs with what the pages show. tests/integration/test_docs.py runs every page; CONTRIBUTING.md
("Executable examples") describes the convention for authors. In short:

* Every fenced block whose language is ``sql``, ``sh`` or ``python`` is an example and is executed,
  in page order, in a session of its own per page: one in-memory DuckDB connection with every
  duckdb_sdc function registered (for ``sql``), one Python namespace (for ``python``), and one fresh
  working folder that is the current directory of all three. ``sh`` runs with
  ``bash -e -o pipefail``, standard error merged into standard output, ``duckdb-sdc`` and ``python``
  (those of the running interpreter) first on the PATH. Shell blocks tagged ``bash``, ``console``, ...
  are refused, so that no example escapes by its language.
* A ``text`` block right after an example (nothing but blank lines between) is the output the
  example must print: for ``sql``, what ``duckdb-sdc sql`` prints (DuckDB's tables, or
  ``Error: <message>`` for a failing statement); for ``sh`` and ``python``, what they print (a Python
  exception as ``Traceback (most recent call last):``, ``  ...``, ``Name: message``). Trailing spaces
  and blank lines at either end are ignored. A line that is just ``...`` stands for any number of
  lines; ``...`` inside a line stands for any text within that line (paths, timings).
* An example fails when its output differs from its output block; when it has no output block and
  fails (a SQL error, a Python exception); and, for ``sh``, whenever it exits with a non-zero code
  (show a failing command as ``command || echo "exit code $?"``).
* A block of any language whose title is a file name (```` ```toml title="people.toml" ````) is
  written into the working folder when its turn comes, so later examples can use it. A ``toml`` block
  with a ``[source]`` table is a release spec and must parse as one.
* An example that cannot run here carries a visible title that starts with ``not executed:`` and says
  why (```` ```sh title="not executed: needs a Spark cluster" ````); it is not run, and a ``text``
  block after it is not checked.

`python tests/docs_examples.py [--update] [PAGE ...]` runs the pages (default: every page with
examples) and prints the failures; with --update it rewrites every output block that no longer
matches with what its example printed now. Review that diff: re-add any `...`, and make sure an
error was not written in where an output belongs.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
EXECUTED = {"sql", "sh", "python"}
SHELL_ALIASES = {"bash", "shell", "console", "shell-session", "zsh"}  # refused: write ``sh``
NOT_EXECUTED = "not executed:"
OUTPUT = "text"
FILE_TITLE = re.compile(r"^[\w.-]+(/[\w.-]+)*\.\w+$")
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_ATTR = re.compile(r'(\w+)="([^"]*)"')
SHELL_TIMEOUT = 600


@dataclass
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    lang: str
    title: str | None
    text: str
    start: int  # 0-based index of the first content line (for --update)
    end: int  # 0-based index of the closing fence
    indent: str = ""
    output: Block | None = None

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT) if self.page.is_relative_to(ROOT) else self.page}:{self.line}"

    @property
    def skipped(self) -> bool:
        return (self.title or "").startswith(NOT_EXECUTED)

    @property
    def executed(self) -> bool:
        return self.lang in EXECUTED and not self.skipped

    @property
    def file_name(self) -> str | None:
        return self.title if self.title and FILE_TITLE.match(self.title) else None


class ConventionError(Exception):
    """A page breaks the convention (an unmarked shell alias, a 'not executed' without a reason)."""


def parse(page: Path, text: str | None = None) -> list[Block]:
    """The fenced blocks of a Markdown page, each example linked to the output block after it."""
    lines = (page.read_text(encoding="utf-8") if text is None else text).split("\n")
    blocks: list[Block] = []
    i = 0
    previous_end = None
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = m["indent"], m["fence"], m["info"].strip()
        close = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        j = i + 1
        while j < len(lines) and not close.match(lines[j]):
            j += 1
        if j == len(lines):
            raise ConventionError(f"{page}:{i + 1}: fence {fence} is never closed")
        lang = info.split()[0].strip("{}.").lower() if info else ""
        attrs = dict(_ATTR.findall(info))
        body = [ln[len(indent):] if ln.startswith(indent) else ln.lstrip() for ln in lines[i + 1:j]]
        block = Block(page, i + 1, lang, attrs.get("title"), "\n".join(body), i + 1, j, indent)
        gap = lines[previous_end + 1:i] if previous_end is not None else None
        if (lang == OUTPUT and blocks and blocks[-1].lang in EXECUTED and blocks[-1].output is None
                and gap is not None and all(not g.strip() for g in gap)):
            blocks[-1].output = block
        blocks.append(block)
        previous_end = j
        i = j + 1
    for b in blocks:
        if b.lang in SHELL_ALIASES:
            raise ConventionError(f"{b.where}: write shell examples as ```sh (not {b.lang!r}), so they are run")
        if b.skipped and not b.title[len(NOT_EXECUTED):].strip():
            raise ConventionError(f"{b.where}: a 'not executed:' title must say why")
    return blocks


def pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


def has_examples(page: Path) -> bool:
    return any(b.executed or b.file_name for b in parse(page))


def example_pages() -> list[Path]:
    """Every page with examples: the docs pages, then README.md."""
    return [p for p in pages() if has_examples(p)] + [ROOT / "README.md"]


# ---------------------------------------------------------------------------------------------
# comparing outputs

def _normalise(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").split("\n")).strip("\n")


def _pattern(expected: str) -> re.Pattern:
    parts = []
    for line in _normalise(expected).split("\n"):
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*?".join(re.escape(piece) for piece in line.split("...")) + r"\n")
    return re.compile("".join(parts))


def matches(expected: str, actual: str) -> bool:
    """Whether `actual` output is what the page shows (see the module docstring for `...`)."""
    return _pattern(expected).fullmatch(_normalise(actual) + "\n") is not None


# ---------------------------------------------------------------------------------------------
# running a page

@dataclass
class Result:
    block: Block
    output: str
    failed: str | None = None  # why the example failed (error, non-zero exit, mismatch)


@dataclass
class Session:
    """Everything the examples of one page share: the working folder, a DuckDB connection, a namespace."""

    work: Path
    con: object = None
    namespace: dict = field(default_factory=dict)

    def sql(self, text: str) -> tuple[str, bool]:
        import duckdb_sdc
        from duckdb_sdc.cli import UserError, run_sql

        if self.con is None:
            self.con = duckdb_sdc.connect()
        out = io.StringIO()
        try:
            run_sql(self.con, text, out=out)
        except UserError as e:
            return out.getvalue() + f"Error: {e}\n", False
        return out.getvalue(), True

    def sh(self, text: str) -> tuple[str, bool]:
        env = dict(os.environ)
        env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
        env.update(COLUMNS="100", NO_COLOR="1", TERM="dumb", PYTHONUNBUFFERED="1")
        env.pop("FORCE_COLOR", None)
        env["XDG_DATA_HOME"] = str(self.work / ".data")  # the page's own release ledger (release/ledger.py)
        run = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", text], cwd=self.work, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=SHELL_TIMEOUT)
        return run.stdout, run.returncode == 0

    def python(self, text: str) -> tuple[str, bool]:
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                exec(compile(text, "<docs example>", "exec"), self.namespace)  # noqa: S102 - our own pages
        except Exception as e:  # shown as Python shows it, so a page can show an expected error
            return out.getvalue() + f"Traceback (most recent call last):\n  ...\n{type(e).__name__}: {e}\n", False
        return out.getvalue(), True

    def close(self) -> None:
        if self.con is not None:
            self.con.close()


def check_spec(block: Block) -> None:
    """A toml block with a [source] table must be a valid release spec."""
    from duckdb_sdc.release.spec import parse_spec

    doc = tomllib.loads(block.text)
    if "source" in doc:
        parse_spec(doc, name=block.file_name or "spec.toml")


def run_page(page: Path, work: Path) -> list[Result]:
    """Run every example of `page` in `work` (the current directory meanwhile), in page order."""
    blocks = parse(page)
    session = Session(work)
    results = []
    here = os.getcwd()
    os.chdir(work)
    try:
        for block in blocks:
            if block.lang == "toml":
                check_spec(block)
            if block.file_name and not block.executed:
                target = work / block.file_name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(block.text + "\n", encoding="utf-8")
            if not block.executed:
                continue
            output, ok = getattr(session, block.lang)(block.text)
            failed = None
            if block.output is not None and not matches(block.output.text, output):
                failed = "the output differs from the page"
            elif not ok and (block.lang == "sh" or block.output is None):
                failed = ("the command exited with a non-zero code" if block.lang == "sh"
                          else "the example failed and the page shows no output for it")
            results.append(Result(block, output, failed))
    finally:
        os.chdir(here)
        session.close()
    return results


def report(results: list[Result]) -> str:
    """The failures of a run, readable in a test failure."""
    import difflib

    parts = []
    for r in results:
        if r.failed is None:
            continue
        parts.append(f"{r.block.where} ({r.block.lang}): {r.failed}")
        if r.block.output is not None:
            diff = difflib.unified_diff(_normalise(r.block.output.text).split("\n"), _normalise(r.output).split("\n"),
                                        "page", "actual", lineterm="")
            parts.append("\n".join(diff))
        else:
            parts.append(r.output)
    return "\n".join(parts)


def update(page: Path, results: list[Result]) -> int:
    """Rewrite the output blocks of `page` that no longer match; return how many were rewritten."""
    lines = page.read_text(encoding="utf-8").split("\n")
    stale = [r for r in results if r.block.output is not None and r.failed]
    for r in sorted(stale, key=lambda r: -r.block.output.start):
        out = r.block.output
        lines[out.start:out.end] = [(out.indent + ln).rstrip() for ln in _normalise(r.output).split("\n")]
    if stale:
        page.write_text("\n".join(lines), encoding="utf-8")
    return len(stale)


def main(argv: list[str]) -> int:
    import tempfile

    update_mode = "--update" in argv
    chosen = [Path(a).resolve() for a in argv if not a.startswith("--")] or example_pages()
    failures = 0
    for page in chosen:
        with tempfile.TemporaryDirectory() as work:
            results = run_page(page, Path(work))
        text = report(results)
        if text:
            failures += 1
            print(text)
        if update_mode:
            n = update(page, results)
            if n:
                print(f"{page.relative_to(ROOT)}: rewrote {n} output block(s)")
    return 1 if failures and not update_mode else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main(sys.argv[1:]))
