"""Small helpers for HTTP tests."""

from __future__ import annotations

from typing import Any

from flask.testing import FlaskClient

GIB = 2**30


def get_ok(client: FlaskClient, path: str, **params: Any) -> dict[str, Any]:
    """GET with query parameters (lists comma-joined, as a spreadsheet would); expect 200."""
    query = {k: ",".join(map(str, v)) if isinstance(v, list | tuple) else v for k, v in params.items()}
    response = client.get(path, query_string=query)
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()


def post_ok(client: FlaskClient, path: str, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post(path, json=body)
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()
