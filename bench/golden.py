"""Golden answers for a refactor: record every planning answer the HTTP tests receive, then
replay those requests on a fresh app and show each answer is byte-identical, or differs only
by additions (a JSON answer may gain keys; nothing it had may change).

    GOLDEN_RECORD=/tmp/golden.jsonl pytest tests/api      # record (tests/support.py hooks it)
    python -m bench.golden /tmp/golden.jsonl --keep /tmp/stable.jsonl   # on the old code
    python -m bench.golden /tmp/stable.jsonl              # on the new code: replay and compare

Replayed on the old code first, `--keep` writes the answers that code itself reproduces on a
fresh app (a test's own catalog writes or app settings make the others differ), so the
comparison on the new code is over answers that depend on the code alone.

Only planning routes are recorded: their answers depend on the seeded catalog alone, so a
replay on a freshly seeded database must give the same bytes. Catalog writes, calibrations
and the pages are left out (their answers depend on what earlier tests stored).
"""

from __future__ import annotations

import base64
import json
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from flask import Flask, Response, request

PLANNING_PREFIXES = (
    "/v1/fit",
    "/v1/throughput",
    "/v1/latency",
    "/v1/fleet",
    "/v1/cost",
    "/v1/batch",
    "/v1/autoscaling",
    "/v1/procurement",
    "/v1/roofline",
    "/v1/traces",
    "/v1/engines",
)
# Keys whose values differ from one request to the next (a problem's request id).
VOLATILE_KEYS = ("request_id",)


def install_recorder(flask_app: Flask, path: str) -> None:
    """Append each planning request and its answer to `path` (JSON lines)."""

    @flask_app.after_request
    def _record(response: Response) -> Response:
        if not request.path.startswith(PLANNING_PREFIXES) or response.is_streamed:
            return response
        if request.method not in ("GET", "POST", "HEAD") or response.status_code == 413:
            return response  # a refused oversized body is not read back
        if request.method == "POST" and request.path == "/v1/engines":
            return response  # a catalog write: later answers would depend on it
        entry = {
            "method": request.method,
            "url": request.full_path if request.query_string else request.path,
            "headers": {k: v for k, v in request.headers.items() if k in ("Accept", "Content-Type", "Prefer")},
            "body": base64.b64encode(request.get_data()).decode(),
            "status": response.status_code,
            "content_type": response.content_type,
            "answer": base64.b64encode(response.get_data()).decode(),
        }
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps(entry) + "\n")
        return response


def additions_only(old: Any, new: Any, where: str = "$") -> Iterator[str]:
    """Where `new` differs from `old` other than by keys `old` lacks."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key, value in old.items():
            if key in VOLATILE_KEYS:
                continue
            if key not in new:
                yield f"{where}.{key}: gone"
            else:
                yield from additions_only(value, new[key], f"{where}.{key}")
    elif isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            yield f"{where}: {len(old)} items, now {len(new)}"
        for i, (a, b) in enumerate(zip(old, new, strict=False)):
            yield from additions_only(a, b, f"{where}[{i}]")
    elif type(old) is not type(new) or old != new:
        yield f"{where}: {old!r} -> {new!r}"


def compare(entry: dict[str, Any], status: int, content_type: str, answer: bytes) -> list[str]:
    recorded = base64.b64decode(entry["answer"])
    problems = []
    if status != entry["status"]:
        problems.append(f"status {entry['status']} -> {status}")
    if content_type != entry["content_type"]:
        problems.append(f"content type {entry['content_type']} -> {content_type}")
    if answer == recorded:
        return problems
    if "json" in content_type:
        try:
            old, new = json.loads(recorded), json.loads(answer)
        except ValueError:
            return [*problems, "bytes differ"]
        return [*problems, *additions_only(old, new)]
    return [*problems, "bytes differ"]


def replay(path: Path, keep: Path | None = None) -> int:
    from app import create_app

    entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    unique = {(e["method"], e["url"], json.dumps(e["headers"], sort_keys=True), e["body"]): e for e in entries}
    with tempfile.TemporaryDirectory() as tmp:
        flask_app = create_app({"database_url": f"sqlite:///{tmp}/golden.sqlite3"})
        flask_app.config["TESTING"] = True
        runner = flask_app.test_cli_runner()
        for command in (["migrate"], ["seed"]):
            result = runner.invoke(args=command)
            assert result.exit_code == 0, result.output
        client = flask_app.test_client()
        differing, kept = 0, []
        for entry in unique.values():
            response = client.open(
                entry["url"],
                method=entry["method"],
                headers=entry["headers"],
                data=base64.b64decode(entry["body"]),
            )
            problems = compare(entry, response.status_code, response.content_type, response.get_data())
            if not problems:
                kept.append(entry)
            elif keep is None:
                differing += 1
                print(f"{entry['method']} {entry['url'][:160]}")
                for problem in problems[:8]:
                    print(f"    {problem[:300]}")
        flask_app.extensions["fleet_sizer"]["engine"].dispose()
    if keep is not None:
        keep.write_text("".join(json.dumps(e) + "\n" for e in kept), encoding="utf-8")
        print(f"golden: kept {len(kept)} of {len(unique)} answers, reproduced on a fresh app")
        return 0
    print(f"golden: {len(unique) - differing} of {len(unique)} answers the same (or only added to)")
    return 1 if differing else 0


if __name__ == "__main__":
    args = sys.argv[1:]
    kept_path = Path(args[args.index("--keep") + 1]) if "--keep" in args else None
    sys.exit(replay(Path(args[0]), kept_path))
