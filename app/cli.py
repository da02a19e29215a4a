"""Start-up chores as Flask CLI commands: `flask --app app migrate`, `flask --app app seed`,
and `flask --app app import-model CONFIG.json` to add a model from its Hugging Face config."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from alembic import command
from alembic.config import Config as AlembicConfig
from flask import Flask, current_app
from flask.cli import with_appcontext
from marshmallow import ValidationError

from app.api.catalog_schemas import ImportSchema, load_model_columns
from app.api.errors import flatten_errors
from app.catalog import safetensors_header
from app.catalog.db import ALEMBIC_INI, REPO_ROOT
from app.catalog.seed import catalog_is_empty, engines_are_empty, seed_catalog
from app.planning.catalog_import import prepare_import, store_model
from app.planning.errors import PlanningError


def alembic_config(url: str) -> AlembicConfig:
    config = AlembicConfig(str(ALEMBIC_INI))
    config.set_main_option("script_location", str(REPO_ROOT / "migrations"))
    # A literal % in a password would otherwise be read as configparser interpolation.
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    # Keep the service's logging: alembic.ini's fileConfig would replace it.
    config.attributes["configure_logger"] = False
    return config


@click.command("migrate")
@with_appcontext
def migrate_command() -> None:
    """Upgrade the database schema to the newest migration."""
    config = current_app.extensions["fleet_sizer"]["config"]
    command.upgrade(alembic_config(config.database_url), "head")
    click.echo("schema at head")


@click.command("seed")
@with_appcontext
@click.option("--force", is_flag=True, help="add missing seed entries even when the catalog has rows")
def seed_command(force: bool) -> None:
    """Load catalog_seed/ into an empty catalog, or its engines into a catalog without any
    (idempotent: stored slugs and names are left alone)."""
    settings = current_app.extensions["fleet_sizer"]
    if not settings["config"].seed_on_start and not force:
        # A catalog curated through the write API only: the seed files must not come back.
        click.echo("SEED_ON_START is off: not seeding")
        return
    sessions = settings["sessionmaker"]
    with sessions() as session, session.begin():
        if force or catalog_is_empty(session):
            counts = seed_catalog(session)
        elif engines_are_empty(session):
            # A catalog seeded before engines were catalog data (migration 0003) gets the seed's
            # engine profiles, which planning needs. (A catalog meant to have no engine at all
            # is a curated one: SEED_ON_START=0 keeps it so.)
            counts = {"engines": seed_catalog(session, kinds=("engines",))["engines"]}
        else:
            click.echo("catalog already seeded")
            return
    click.echo("seeded " + ", ".join(f"{n} {kind}" for kind, n in counts.items()))


def _problem_text(exc: Exception) -> str:
    """A service's refusal or marshmallow's ValidationError as `field: message` lines."""
    if isinstance(exc, ValidationError):
        errors = flatten_errors(exc.messages)
    elif isinstance(exc, PlanningError):
        errors = exc.errors or {"": [exc.detail]}
    else:
        return str(exc)
    return "\n".join(
        f"{field}: {'; '.join(messages)}" if field else "; ".join(messages) for field, messages in errors.items()
    )


def _read_json(path: Path, label: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise click.ClickException(f"{label} {path}: {exc}") from None


@click.command("import-model")
@click.argument("config_path", metavar="CONFIG.json", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--safetensors-header",
    "header_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="a .safetensors file (only its header is read), its JSON header, or model.safetensors.index.json "
    "(the shards beside it: only their headers are read)",
)
@click.option("--slug", help="catalog slug (default: from the config's _name_or_path)")
@click.option("--name", help="display name")
@click.option("--hf-repo", help="Hugging Face repo id, e.g. Qwen/Qwen2.5-7B-Instruct")
@click.option("--dry-run", is_flag=True, help="print the derived model without storing it")
@with_appcontext
def import_model_command(
    config_path: Path,
    header_path: Path | None,
    slug: str | None,
    name: str | None,
    hf_repo: str | None,
    dry_run: bool,
) -> None:
    """Derive a model from a Hugging Face config.json (and safetensors headers) and store it."""
    header = None
    if header_path is not None:
        try:
            header = safetensors_header.load_header_file(header_path)
        except (OSError, safetensors_header.HeaderError) as exc:
            raise click.ClickException(f"safetensors header {header_path}: {exc}") from None
    payload = {
        "config": _read_json(config_path, "config"),
        "slug": slug,
        "name": name,
        "hf_repo": hf_repo,
        "safetensors_header": header,
        "dry_run": dry_run,
    }
    sessions = current_app.extensions["fleet_sizer"]["sessionmaker"]
    try:
        data = ImportSchema().load(payload)
        values, report = prepare_import(data, load_model_columns)
        if dry_run:
            click.echo(json.dumps({"stored": False, "model": values, "derivation": report}, indent=2))
            return
        with sessions() as session:
            row = store_model(session, values)
            session.commit()
            stored = {"stored": True, "model": {**values, "version": row.version}, "derivation": report}
    except (PlanningError, ValidationError) as exc:
        raise click.ClickException(_problem_text(exc)) from None
    click.echo(json.dumps(stored, indent=2))
    click.echo(f"stored model {values['slug']!r} ({values['params_total']:,} parameters)", err=True)


def init_app(app: Flask) -> None:
    app.cli.add_command(migrate_command)
    app.cli.add_command(seed_command)
    app.cli.add_command(import_model_command)
