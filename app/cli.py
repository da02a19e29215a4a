"""Start-up chores as Flask CLI commands: `flask --app app migrate`, `flask --app app seed`."""

from __future__ import annotations

import click
from alembic import command
from alembic.config import Config as AlembicConfig
from flask import Flask, current_app
from flask.cli import with_appcontext

from app.catalog.seed import catalog_is_empty, seed_catalog


def alembic_config(url: str) -> AlembicConfig:
    from app import ALEMBIC_INI, REPO_ROOT

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
    """Load catalog_seed/ into an empty catalog (idempotent: stored slugs are left alone)."""
    sessions = current_app.extensions["fleet_sizer"]["sessionmaker"]
    with sessions() as session, session.begin():
        if not force and not catalog_is_empty(session):
            click.echo("catalog already seeded")
            return
        counts = seed_catalog(session)
    click.echo("seeded " + ", ".join(f"{n} {kind}" for kind, n in counts.items()))


def init_app(app: Flask) -> None:
    app.cli.add_command(migrate_command)
    app.cli.add_command(seed_command)
