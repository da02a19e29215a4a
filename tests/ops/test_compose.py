"""docker-compose.yml against the Compose Specification's JSON schema, as vendored in the
check-jsonschema wheel (check_jsonschema/builtin_schemas/vendor/compose-spec.json; pinned in
requirements-dev.txt), then what the schema cannot say: the start-up order, healthchecks,
pinned images, and the settings the image and gunicorn expect."""

from __future__ import annotations

import copy
import json
import shlex
from importlib.resources import files
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator, FormatChecker

from .helpers import COMPOSE_FILE, gunicorn_settings, image_env, image_tag


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    with COMPOSE_FILE.open(encoding="utf-8") as handle:
        document: dict[str, Any] = yaml.safe_load(handle)
    return document


@pytest.fixture(scope="module")
def validator() -> Draft202012Validator:
    text = files("check_jsonschema.builtin_schemas.vendor").joinpath("compose-spec.json").read_text(encoding="utf-8")
    schema = json.loads(text)
    assert schema["title"] == "Compose Specification"
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, format_checker=FormatChecker())


def schema_errors(validator: Draft202012Validator, document: dict[str, Any]) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(document)]


def test_compose_file_follows_the_compose_specification(
    compose: dict[str, Any], validator: Draft202012Validator
) -> None:
    assert schema_errors(validator, compose) == []


@pytest.mark.parametrize(
    ("where", "value"),
    [
        (("services", "app", "depends_on", "migrate", "condition"), "service_finished"),
        (("services", "db", "healthcheck", "retries"), [3]),
        (("services", "app", "restart_policy"), "always"),
    ],
)
def test_the_schema_rejects_a_broken_file(
    compose: dict[str, Any], validator: Draft202012Validator, where: tuple[str, ...], value: Any
) -> None:
    """The schema really bites: a misspelt condition, a wrong type, an unknown key."""
    broken = copy.deepcopy(compose)
    node = broken
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    assert schema_errors(validator, broken)


def test_images_are_pinned(compose: dict[str, Any]) -> None:
    for name, service in compose["services"].items():
        assert "image" in service, f"{name}: name the image (built ones get a versioned tag)"
        tag = image_tag(service["image"])
        assert tag and tag != "latest", f"{name}: {service['image']}"


def test_start_order_database_then_migrate_then_app(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert services["db"]["healthcheck"]["test"][0] in {"CMD", "CMD-SHELL"}
    assert "pg_isready" in " ".join(services["db"]["healthcheck"]["test"])
    for name, service in services.items():
        for dependency, rule in service.get("depends_on", {}).items():
            assert isinstance(rule, dict) and "condition" in rule, f"{name} -> {dependency}: say what to wait for"
            if rule["condition"] == "service_healthy":
                assert "healthcheck" in services[dependency], f"{dependency} has no healthcheck to wait for"
    assert services["migrate"]["depends_on"]["db"]["condition"] == "service_healthy"
    assert services["app"]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert services["migrate"].get("restart") == "no", "a one-shot step"


def test_migrate_runs_the_migrations_then_the_seed_with_the_app_image(compose: dict[str, Any]) -> None:
    migrate, app = compose["services"]["migrate"], compose["services"]["app"]
    assert migrate["image"] == app["image"] and migrate["build"] == app["build"]
    command = migrate["command"]
    script = command[-1] if command[:2] == ["sh", "-c"] else shlex.join(command)
    steps = [shlex.split(step) for step in script.split("&&")]
    assert steps == [["flask", "--app", "app", "migrate"], ["flask", "--app", "app", "seed"]]
    assert "command" not in app, "the app runs the image's CMD (gunicorn, as `make serve`)"


def test_app_and_migrate_share_the_database(compose: dict[str, Any]) -> None:
    services = compose["services"]
    url = services["app"]["environment"]["DATABASE_URL"]
    assert services["migrate"]["environment"]["DATABASE_URL"] == url
    db = services["db"]["environment"]
    assert url == f"postgresql://{db['POSTGRES_USER']}:{db['POSTGRES_PASSWORD']}@db:5432/{db['POSTGRES_DB']}"


def test_metrics_directory_is_a_tmpfs(compose: dict[str, Any]) -> None:
    app = compose["services"]["app"]
    directory = {**image_env(), **app.get("environment", {})}["PROMETHEUS_MULTIPROC_DIR"]
    mounts = [entry.split(":")[0] for entry in app["tmpfs"]]
    assert directory in mounts
    if app.get("read_only"):
        assert "/tmp" in mounts


def test_port_and_shutdown_match_gunicorn(compose: dict[str, Any]) -> None:
    app = compose["services"]["app"]
    port = {**image_env(), **app.get("environment", {})}.get("PORT", "8000")
    published = [str(entry).rsplit(":", 1)[-1] for entry in app["ports"]]
    assert published == [port]
    graceful_s = gunicorn_settings({})["graceful_timeout"]
    grace = app["stop_grace_period"]
    assert grace.endswith("s") and int(grace[:-1]) > graceful_s, "compose must not kill gunicorn mid-drain"
