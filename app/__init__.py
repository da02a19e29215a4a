"""Fleet Sizer: how many GPUs to serve this model, and what it will cost."""

from __future__ import annotations

from typing import Any

from alembic.config import Config as AlembicConfig
from alembic.script import ScriptDirectory
from flask import Flask

from app import observability
from app.catalog.db import ALEMBIC_INI, REPO_ROOT, make_engine, make_sessionmaker
from app.config import Config

__all__ = ["ALEMBIC_INI", "REPO_ROOT", "create_app", "schema_head"]


def schema_head() -> str | None:
    """The newest migration, read once at start-up so /readyz can compare against it."""
    config = AlembicConfig(str(ALEMBIC_INI))
    config.set_main_option("script_location", str(REPO_ROOT / "migrations"))
    return ScriptDirectory.from_config(config).get_current_head()


def create_app(config: Config | dict[str, Any] | None = None) -> Flask:
    """Build the app: engine and sessions, error handlers first, then the blueprints.
    Nothing slow happens per request."""
    if config is None:
        config = Config.from_env()
    elif isinstance(config, dict):
        base = Config.from_env()
        config = Config(**{**base.__dict__, **config})
    app = Flask(__name__, instance_path=str(REPO_ROOT / "instance"))
    app.config["MAX_CONTENT_LENGTH"] = config.max_body_bytes
    app.json.sort_keys = False  # type: ignore[attr-defined]  # keep the documented field order
    observability.configure_logging(config.log_level)

    engine = make_engine(config.database_url, config.db_timeouts)
    app.extensions["fleet_sizer"] = {
        "config": config,
        "engine": engine,
        "sessionmaker": make_sessionmaker(engine),
        "schema_head": schema_head(),
    }

    from app.api import (
        autoscaling,
        calibrations,
        catalog,
        db_errors,
        docs,
        edge,
        errors,
        fleet,
        lab,
        lookup,
        memo,
        ops,
        plan,
        planning,
        traces,
        work_budget,
    )

    observability.init_app(app, before_scrape=lookup.catalog)  # first: its hooks wrap every other one
    edge.init_app(app)  # before the memo: a remembered answer is no way around the edge's checks
    memo.init_app(app)
    errors.init_app(app)
    db_errors.init_app(app)
    work_budget.init_app(app)
    app.teardown_appcontext(lookup.close_session)
    app.register_blueprint(ops.bp)
    app.register_blueprint(planning.bp)
    app.register_blueprint(catalog.bp)
    app.register_blueprint(fleet.bp)
    app.register_blueprint(autoscaling.bp)
    app.register_blueprint(lab.bp)
    app.register_blueprint(plan.bp)
    app.register_blueprint(calibrations.bp)
    app.register_blueprint(traces.bp)
    docs.init_app(app)

    from app import cli

    cli.init_app(app)
    return app
