"""Rewrites the accuracy tables of README.md from what the code computes today: the held-out
headline and its breakdown from bench/cross_validation.csv (written by `make fit-engines`), the
training and open-loop tables from an in-process replay of bench/measurements/ (the same answers
`make accuracy` gets over HTTP). Run it after a refit: `python -m bench.readme_tables`.

Only the table under each heading is replaced; the prose around it is left to the writer, and a
heading the README lacks is an error rather than a table appended somewhere."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from bench.accuracy import (
    Result,
    breakdown_lines,
    held_out_summaries,
    read_held_out,
    replay,
    summarise,
    table,
    trusted,
)
from bench.accuracy_rows import OPENLOOP_METRICS, load_cases, load_openloop_cases
from bench.fit_engines import in_process, load_catalog

README = Path(__file__).resolve().parents[1] / "README.md"

Select = Callable[[list[Result]], list[Result]]


def _everything(results: list[Result]) -> list[Result]:
    return results


def tables() -> dict[str, list[str]]:
    """Each README heading and the table lines that belong under it."""
    ask = in_process(load_catalog())
    held_out = read_held_out()
    training = replay(load_cases()[0], ask)
    openloop = replay(load_openloop_cases()[0], ask)
    found = {
        "Leave-one-source-out, all rows:": table(held_out_summaries(held_out)),
        "By engine, GPU generation and model kind (n, median |error| %):": breakdown_lines(held_out),
    }
    selections: tuple[tuple[str, str, Select], ...] = (
        ("Training rows, all:", "Open-loop rows, all:", _everything),
        ("Training rows of high or medium trust:", "Open-loop rows of high or medium trust:", trusted),
    )
    for training_heading, openloop_heading, select in selections:
        found[training_heading] = table(summarise(select(training)))
        found[openloop_heading] = table(summarise(select(openloop), OPENLOOP_METRICS))
    return found


def rewrite(text: str, new_tables: dict[str, list[str]]) -> str:
    """`text` with the first table after each heading (a run of lines starting with '|', blank
    lines between the heading and it allowed) replaced by the given lines."""
    lines = text.split("\n")
    for heading, rows in new_tables.items():
        try:
            at = lines.index(heading)
        except ValueError:
            raise KeyError(f"README has no line {heading!r}") from None
        start = at + 1
        while start < len(lines) and not lines[start].strip():
            start += 1
        if start == len(lines) or not lines[start].startswith("|"):
            raise KeyError(f"no table under {heading!r}")
        end = start
        while end < len(lines) and lines[end].startswith("|"):
            end += 1
        lines[start:end] = rows
    return "\n".join(lines)


def main() -> int:
    before = README.read_text(encoding="utf-8")
    after = rewrite(before, tables())
    README.write_text(after, encoding="utf-8")
    print("README.md tables " + ("rewritten" if after != before else "already current"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
