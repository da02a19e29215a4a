"""CSV text that looks like a number stays text in a spreadsheet (app/api/render.py TEXT_MARK).

An engine version `0.10` is text in JSON; in a spreadsheet it must not become the number 0.1.
LibreOffice headless imports the API's own CSV, as a user's import would (UTF-8, comma,
double quotes, LibreOffice's default detection), and each cell's type is read back: the
versions are text, the figures numbers. The same CSV without the mark is the control: there
the versions do become numbers, which is why the mark is there.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import openpyxl
import pytest
import yaml
from flask.testing import FlaskClient

from app.api.render import TEXT_MARK, csv_text, looks_like_a_number
from app.catalog.seed import SEED_DIR

SOFFICE = shutil.which("soffice")
# LibreOffice's CSV import options: comma, double quote, UTF-8 (76), from line 1; everything
# else (quoted fields detected like the others, no "quoted field as text") as by default.
CSV_IMPORT = "CSV:44,34,76,1"
# Engine versions as the seed writes them: strings that a spreadsheet reads as numbers.
SEED_VERSIONS = {
    engine["name"]: engine["version"] for engine in yaml.safe_load((SEED_DIR / "engines.yaml").read_text())["engines"]
}


@pytest.mark.parametrize(
    "text", ["0.10", "0.6.3", "1.0", "12e4", "2026-01", "1/2", "50%", "12:30", "1,000", "007", "true", "FALSE"]
)
def test_text_a_spreadsheet_would_convert_is_marked(text: str) -> None:
    assert looks_like_a_number(text)
    assert list(csv.reader(io.StringIO(csv_text([{"cell": text}])))) == [["cell"], [TEXT_MARK + text]]


@pytest.mark.parametrize(
    "text", ["vllm", "llama-3.1-8b", "h100-sxm", "7b", "bf16", "2026-01-02T10:00:00+00:00", "e", "", "saturation rate"]
)
def test_other_text_is_written_as_it_is(text: str) -> None:
    assert not looks_like_a_number(text)
    assert list(csv.reader(io.StringIO(csv_text([{"cell": text}])))) == [["cell"], [text]]


def test_numbers_and_booleans_are_not_marked() -> None:
    assert csv_text([{"a": 0.1, "b": 10, "c": True, "d": -1.5}]) == "a,b,c,d\r\n0.1,10,true,-1.5\r\n"


def test_formula_text_keeps_its_apostrophe() -> None:
    assert csv_text([{"cell": "-1"}]) == "cell\r\n'-1\r\n"


def test_the_seeds_versions_are_the_case_in_point() -> None:
    """The seed's versions (0.10, 0.5, 1.0) are exactly what a spreadsheet turns into numbers."""
    assert SEED_VERSIONS and all(looks_like_a_number(version) for version in SEED_VERSIONS.values())


@pytest.fixture(scope="module")
def libreoffice(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A LibreOffice profile of its own (skipped without LibreOffice on a developer's machine;
    CI must have it: `make test` installs it)."""
    if SOFFICE is None:
        if os.environ.get("CI") == "true":
            pytest.fail("LibreOffice is missing; CI must run the CSV import test (`make test` installs it)")
        pytest.skip("LibreOffice (soffice) is not installed")
    profile = tmp_path_factory.mktemp("libreoffice-csv-profile")
    return profile


def imported(libreoffice: Path, tmp_path: Path, **files: str) -> dict[str, list[list[Any]]]:
    """Each CSV as LibreOffice imports it: rows of (value, openpyxl data type) per cell."""
    source, out = tmp_path / "in", tmp_path / "out"
    source.mkdir()
    out.mkdir()
    for name, text in files.items():
        (source / f"{name}.csv").write_text(text, encoding="utf-8", newline="")
    assert SOFFICE is not None
    subprocess.run(
        [
            SOFFICE,
            f"-env:UserInstallation={libreoffice.as_uri()}",
            "--headless",
            "--calc",
            f"--infilter={CSV_IMPORT}",
            "--convert-to",
            "xlsx",
            "--outdir",
            str(out),
            *(str(source / f"{name}.csv") for name in files),
        ],
        check=True,
        capture_output=True,
        timeout=180,
    )
    books = {}
    for name in files:
        sheet = openpyxl.load_workbook(out / f"{name}.xlsx").active
        assert sheet is not None
        books[name] = [[(cell.value, cell.data_type) for cell in row] for row in sheet.iter_rows()]
    return books


@pytest.mark.slow
def test_libreoffice_keeps_versions_as_text_and_figures_as_numbers(
    client: FlaskClient, libreoffice: Path, tmp_path: Path
) -> None:
    engines = client.get("/v1/engines?format=csv").get_data(as_text=True)
    fit = client.get("/v1/fit?model=llama-3.1-8b&gpu=h100-sxm&engine=vllm&format=csv").get_data(as_text=True)
    books = imported(
        libreoffice,
        tmp_path,
        engines=engines,
        fit=fit,
        control=engines.replace(TEXT_MARK, ""),
        fit_control=fit.replace(TEXT_MARK, ""),
    )

    def column(book: str, name: str) -> list[tuple[Any, str]]:
        header = [value for value, _ in books[book][0]]
        return [row[header.index(name)] for row in books[book][1:]]

    names = [value for value, _ in column("engines", "name")]
    versions = dict(zip(names, column("engines", "engine_version"), strict=True))
    for name, version in SEED_VERSIONS.items():
        # Text, reading as the JSON string does once the invisible mark is set aside.
        assert versions[name] == (TEXT_MARK + version, "s"), name
    (engine_version,) = column("fit", "engine_version")
    assert engine_version == (TEXT_MARK + SEED_VERSIONS["vllm"], "s")
    # The figures next to them are numbers.
    assert all(kind == "n" for _, kind in column("fit", "weights_bytes"))
    # Without the mark, the import turns the same versions into numbers (0.10 -> 0.1).
    control = dict(zip(names, column("control", "engine_version"), strict=True))
    assert control["vllm"] == (float(SEED_VERSIONS["vllm"]), "n")
    assert column("fit_control", "engine_version") == [(float(SEED_VERSIONS["vllm"]), "n")]
    # The header row and every name stay text.
    assert all(kind == "s" for _, kind in books["engines"][0])
    assert next(csv.reader(io.StringIO(engines))) == [value for value, _ in books["engines"][0]]
