"""gunicorn settings; every value can be overridden by the environment."""

import multiprocessing
import os

# Loopback unless told otherwise: containers set BIND_HOST=0.0.0.0.
bind = f"{os.environ.get('BIND_HOST', '127.0.0.1')}:{os.environ.get('PORT', '8000')}"
# Planning is CPU-bound and quick: a process per core, capped so a big host does not fork dozens.
workers = int(os.environ.get("WEB_CONCURRENCY", min(multiprocessing.cpu_count() * 2 + 1, 8)))
worker_class = "sync"
# Heartbeat files on tmpfs: a slow disk must not make the arbiter kill healthy workers.
worker_tmp_dir = "/dev/shm"
timeout = 30
graceful_timeout = 30
keepalive = 5
# Recycle workers now and then so a slow leak cannot grow without bound.
max_requests = 10000
max_requests_jitter = 1000
accesslog = "-"
errorlog = "-"
