"""CSV for spreadsheets (API.md "Conventions", OPERATIONS.md "Users' tools"): `?format=csv`
or `Accept: text/csv`; UTF-8, a header row, a stable column order, one row per list item or
sweep concurrency, `.` decimals, no thousands separators, booleans as true/false."""

from __future__ import annotations

import csv
import io
import re
from typing import Any

import pytest
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

# The datasheet arithmetic's figure (engine=ideal); the default engine, vLLM, reserves memory first.
CANONICAL_FIT = "/v1/fit?model=llama-3.1-8b&gpu=h100-sxm&prompt_tokens=2048&output_tokens=512&engine=ideal&format=csv"
L8_H100 = {"model": "llama-3.1-8b", "gpu": "h100-sxm"}
PLANNING = [
    ("/v1/fit", L8_H100),
    ("/v1/throughput", L8_H100),
    ("/v1/cost", {"price_per_gpu_hour_usd": 2.5, "tokens_per_s": 1000}),
]
# A plain decimal number: optional sign, digits, optional `.` fraction, optional exponent;
# no thousands separators, no decimal comma.
NUMBER = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")


def assert_csv(response: TestResponse) -> str:
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.mimetype == "text/csv"
    assert response.mimetype_params.get("charset", "").lower() == "utf-8"
    return response.get_data().decode("utf-8")


def rows_of(text: str) -> tuple[list[str], list[dict[str, str]]]:
    """The header and the data rows, parsed by the csv module."""
    table = list(csv.reader(io.StringIO(text, newline="")))
    assert table, "empty CSV"
    header, data = table[0], table[1:]
    assert len(set(header)) == len(header), "duplicate column names"
    assert all(len(row) == len(header) for row in data), "ragged rows"
    return header, [dict(zip(header, row, strict=True)) for row in data]


def get_csv(client: FlaskClient, path: str, **params: Any) -> tuple[list[str], list[dict[str, str]]]:
    query = {k: ",".join(map(str, v)) if isinstance(v, list) else v for k, v in params.items()}
    return rows_of(assert_csv(client.get(path, query_string={**query, "format": "csv"})))


@pytest.mark.parametrize(("path", "params"), PLANNING)
def test_format_csv_answers_text_csv_in_utf_8(client: FlaskClient, path: str, params: dict[str, Any]) -> None:
    assert_csv(client.get(path, query_string={**params, "format": "csv"}))


@pytest.mark.parametrize(("path", "params"), PLANNING)
def test_accept_text_csv_answers_text_csv_in_utf_8(client: FlaskClient, path: str, params: dict[str, Any]) -> None:
    assert_csv(client.get(path, query_string=params, headers={"Accept": "text/csv"}))


@pytest.mark.parametrize("path", ["/v1/models", "/v1/gpus"])
def test_catalog_lists_answer_csv_by_accept_header_too(client: FlaskClient, path: str) -> None:
    assert_csv(client.get(path, headers={"Accept": "text/csv"}))


def test_format_csv_and_accept_text_csv_give_the_same_table(client: FlaskClient) -> None:
    by_query = assert_csv(client.get("/v1/fit", query_string={**L8_H100, "format": "csv"}))
    by_accept = assert_csv(client.get("/v1/fit", query_string=L8_H100, headers={"Accept": "text/csv"}))
    assert by_query == by_accept


def test_the_format_parameter_wins_over_the_accept_header(client: FlaskClient) -> None:
    as_json = client.get("/v1/fit", query_string={**L8_H100, "format": "json"}, headers={"Accept": "text/csv"})
    assert as_json.mimetype == "application/json"
    as_csv = client.get("/v1/fit", query_string={**L8_H100, "format": "csv"}, headers={"Accept": "application/json"})
    assert as_csv.mimetype == "text/csv"


@pytest.mark.parametrize("path", ["/v1/fit", "/v1/throughput"])
def test_a_planning_answer_without_sweep_is_a_header_and_exactly_one_row(client: FlaskClient, path: str) -> None:
    header, rows = get_csv(client, path, **L8_H100)
    assert len(rows) == 1
    assert {"model", "gpu", "max_concurrency"} <= set(header)


def test_a_cost_answer_is_a_header_and_exactly_one_row(client: FlaskClient) -> None:
    header, rows = get_csv(client, "/v1/cost", price_per_gpu_hour_usd=2.5, tokens_per_s=3000)
    assert len(rows) == 1
    assert "cost_per_million_output_tokens_usd" in header


def test_a_sweep_of_n_concurrencies_gives_n_rows_in_order(client: FlaskClient) -> None:
    sweep = [1, 2, 8, 32, 64]
    header, rows = get_csv(client, "/v1/throughput", **L8_H100, sweep=sweep)
    assert len(rows) == len(sweep)
    assert [int(row["concurrency"]) for row in rows] == sweep
    assert {"time_per_token_ms", "tokens_per_s"} <= set(header)


def test_the_sweep_rows_carry_the_json_sweep_figures(client: FlaskClient) -> None:
    sweep = [1, 16, 128]
    query = {**L8_H100, "sweep": ",".join(map(str, sweep))}
    json_rows = client.get("/v1/throughput", query_string=query).get_json()["sweep"]
    _, rows = get_csv(client, "/v1/throughput", **L8_H100, sweep=sweep)
    for json_row, row in zip(json_rows, rows, strict=True):
        assert float(row["time_per_token_ms"]) == json_row["time_per_token_ms"]
        assert float(row["tokens_per_s"]) == json_row["tokens_per_s"]


def test_the_models_list_is_one_row_per_model(client: FlaskClient) -> None:
    listing = client.get("/v1/models").get_json()
    header, rows = get_csv(client, "/v1/models")
    assert len(rows) == listing["total"] == len(listing["items"])
    assert [row["slug"] for row in rows] == [item["slug"] for item in listing["items"]]
    assert header[0] == "slug"


def test_the_models_list_header_is_stable_from_one_call_to_the_next(client: FlaskClient) -> None:
    first = assert_csv(client.get("/v1/models", query_string={"format": "csv"}))
    second = assert_csv(client.get("/v1/models", query_string={"format": "csv"}))
    assert rows_of(first)[0] == rows_of(second)[0]
    assert first == second


def test_the_gpus_list_is_one_row_per_gpu(client: FlaskClient) -> None:
    listing = client.get("/v1/gpus").get_json()
    _, rows = get_csv(client, "/v1/gpus")
    assert [row["slug"] for row in rows] == [item["slug"] for item in listing["items"]]


@pytest.mark.parametrize(("path", "params"), [*PLANNING, ("/v1/throughput", {**L8_H100, "concurrency": 64})])
def test_numbers_use_a_decimal_point_and_no_thousands_separators(
    client: FlaskClient, path: str, params: dict[str, Any]
) -> None:
    body = client.get(path, query_string=params).get_json()
    _, rows = get_csv(client, path, **params)
    (row,) = rows
    numeric = {k: v for k, v in body.items() if isinstance(v, int | float) and not isinstance(v, bool)}
    assert len(numeric) >= 3
    for name, value in numeric.items():
        cell = row[name]
        assert NUMBER.fullmatch(cell), (name, cell)
        assert float(cell) == pytest.approx(value, rel=1e-12), (name, cell, value)


def test_large_byte_counts_are_written_as_plain_digits(client: FlaskClient) -> None:
    _, (row,) = get_csv(client, "/v1/fit", model="llama-3.1-70b", gpu="h100-sxm")
    assert re.fullmatch(r"\d{12}", row["weights_bytes"]), row["weights_bytes"]  # 141,107,412,992 bytes
    assert re.fullmatch(r"\d+", row["usable_bytes"])


def test_booleans_are_true_and_false(client: FlaskClient) -> None:
    _, (fits,) = get_csv(client, "/v1/fit", **L8_H100)
    assert (fits["fits"], fits["fits_weights"], fits["precision_native"]) == ("true", "true", "true")
    _, (too_big,) = get_csv(client, "/v1/fit", model="llama-3.1-70b", gpu="h100-sxm", tensor_parallel=1)
    assert (too_big["fits"], too_big["fits_weights"]) == ("false", "false")


def test_booleans_in_sweep_rows_are_true_and_false(client: FlaskClient) -> None:
    _, rows = get_csv(client, "/v1/throughput", **L8_H100, sweep=[1, 1000])
    assert [row["fits"] for row in rows] == ["true", "false"]


def test_the_canonical_fit_url_holds_166_conversations(client: FlaskClient) -> None:
    header, rows = rows_of(assert_csv(client.get(CANONICAL_FIT)))
    assert "max_concurrency" in header
    assert len(rows) == 1
    assert int(rows[0]["max_concurrency"]) == 166
    assert rows[0]["model"] == "llama-3.1-8b"
    assert rows[0]["gpu"] == "h100-sxm"


def flattened_names(record: dict[str, Any], prefix: str = "") -> list[str]:
    """A JSON object's field names in order, each nested object's as `parent_child` columns."""
    names = []
    for key, value in record.items():
        if isinstance(value, dict):
            names.extend(flattened_names(value, f"{prefix}{key}_"))
        else:
            names.append(f"{prefix}{key}")
    return names


@pytest.mark.parametrize("engine", ["ideal", "vllm"])
def test_the_fit_columns_keep_the_json_field_order(client: FlaskClient, engine: str) -> None:
    params = {**L8_H100, "engine": engine}
    body = client.get("/v1/fit", query_string=params).get_json()
    header, _ = get_csv(client, "/v1/fit", **params)
    assert header == flattened_names(body)
    if engine == "vllm":
        # The engine's figures: its reservations and the [low, high] ranges, one cell each.
        assert {"engine", "gpu_memory_utilization", "max_batched_tokens", "max_num_seqs"} <= set(header)
        assert "uncertainty_kv_capacity_tokens" in header
