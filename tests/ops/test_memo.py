"""The per-worker memo of planning answers: a repeated GET gets the very same answer, keyed
by query string, Accept and catalog copy; nothing else is remembered."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient

from app import create_app
from app.api.memo import Answer, AnswerMemo

FIT = "/v1/fit?model=llama-3.1-8b&gpu=h100-sxm"


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[Flask]:
    app = create_app({"database_url": f"sqlite:///{tmp_path / 'fleet.sqlite3'}"})
    runner = app.test_cli_runner()
    for command in (["migrate"], ["seed"]):
        assert runner.invoke(args=command).exit_code == 0
    yield app
    app.extensions["fleet_sizer"]["engine"].dispose()


def remembered(app: Flask) -> int:
    memo: AnswerMemo = app.extensions["fleet_sizer"]["answer_memo"]
    return len(memo)


def test_a_repeated_get_gets_the_same_answer_with_its_own_request_id(fresh: Flask) -> None:
    client: FlaskClient = fresh.test_client()
    first, second = client.get(FIT), client.get(FIT)
    assert remembered(fresh) == 1
    assert first.get_data() == second.get_data()
    assert first.headers["Content-Type"] == second.headers["Content-Type"] == "application/json"
    assert first.headers["X-Request-ID"] != second.headers["X-Request-ID"]


def test_csv_and_json_are_remembered_apart(fresh: Flask) -> None:
    client = fresh.test_client()
    as_json = client.get(FIT)
    as_csv = client.get(FIT, headers={"Accept": "text/csv"})
    again = client.get(FIT, headers={"Accept": "text/csv"})
    assert remembered(fresh) == 2
    assert as_csv.mimetype == again.mimetype == "text/csv" != as_json.mimetype
    assert as_csv.get_data() == again.get_data()


def test_problems_posts_and_catalog_reads_are_not_remembered(fresh: Flask) -> None:
    client = fresh.test_client()
    client.get("/v1/fit?model=no-such-model&gpu=h100-sxm")
    client.get("/v1/fit?model=llama-3.1-8b&gpu=h100-sxm&prompt_tokens=0")
    client.post("/v1/fit", json={"model": "llama-3.1-8b", "gpu": "h100-sxm"})
    client.get("/v1/models/llama-3.1-8b")
    client.get("/healthz")
    assert remembered(fresh) == 0


def test_the_memo_is_bounded_in_bytes() -> None:
    memo = AnswerMemo(max_total_bytes=100)
    for key in range(5):
        memo.put(key, Answer(b"x" * 40, ()))
    assert memo.get(0) is None and memo.get(1) is None and memo.get(2) is None
    assert memo.get(3) is not None and memo.get(4) is not None
    memo.get(3)  # most recently used now
    memo.put(5, Answer(b"y" * 40, ()))
    assert memo.get(4) is None and memo.get(3) is not None
