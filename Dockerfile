# Fleet Sizer: a slim, non-root image that only serves. Migrations and seeding are a separate
# one-shot step with the same image (compose `migrate`, the Kubernetes Job), then gunicorn runs
# with the very config and app factory `make serve` uses. tests/ops/test_dockerfile.py holds
# this file to that.

# Debian 12 and CPython 3.11, as on the machines the tests run on.
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# --- build: the virtualenv, from wheels only ---------------------------------------------------
FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/venv
COPY requirements.txt /tmp/requirements.txt
# --only-binary: every pinned dependency ships a manylinux wheel (psycopg[binary] included), so
# no compiler is needed here and none can end up in the image.
RUN /opt/venv/bin/pip install --only-binary=:all: -r /tmp/requirements.txt

# --- runtime: the venv and the service's files, nothing else ---------------------------------
FROM ${PYTHON_IMAGE} AS runtime

ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    BIND_HOST=0.0.0.0 \
    PORT=8000 \
    PROMETHEUS_MULTIPROC_DIR=/run/prometheus

# A numeric, unprivileged user: Kubernetes' runAsNonRoot can only verify a numeric USER.
RUN groupadd --system --gid 10001 fleet \
    && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
       --shell /usr/sbin/nologin fleet \
    && mkdir -p /run/prometheus /srv/fleet-sizer/instance \
    && chown 10001:10001 /run/prometheus /srv/fleet-sizer/instance

COPY --from=build /opt/venv /opt/venv

WORKDIR /srv/fleet-sizer
# Owned by root and read-only to the service: the process can change none of its own code.
COPY app ./app
COPY migrations ./migrations
COPY catalog_seed ./catalog_seed
COPY alembic.ini gunicorn.conf.py openapi.yaml pyproject.toml ./

USER 10001:10001
EXPOSE 8000

# /healthz touches nothing, so a slow database never gets a healthy process restarted.
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('PORT', '8000'), timeout=2)"]

# Exec form: gunicorn is PID 1 and receives SIGTERM itself (graceful_timeout applies).
CMD ["gunicorn", "--config", "gunicorn.conf.py", "app:create_app()"]
