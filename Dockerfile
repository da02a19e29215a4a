# Slim, non-root image. Migrations run as a separate one-shot step (compose `migrate`);
# the app process itself only serves. Same steps as `make serve`, split in two.
FROM python:3.11-slim AS runtime

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    BIND_HOST=0.0.0.0 \
    PORT=8000

WORKDIR /srv/fleet-sizer
COPY requirements.txt ./
RUN pip install -r requirements.txt

COPY app ./app
COPY migrations ./migrations
COPY catalog_seed ./catalog_seed
COPY alembic.ini gunicorn.conf.py openapi.yaml ./

RUN useradd --system --uid 10001 --home-dir /srv/fleet-sizer fleet \
    && mkdir -p instance && chown fleet instance
USER fleet

EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --retries=3 \
    CMD ["python", "-c", "import urllib.request,os; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('PORT', '8000'), timeout=2)"]
CMD ["gunicorn", "--config", "gunicorn.conf.py", "app:create_app()"]
