# Production-like image for the web and worker services of docker-compose.yml.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
RUN useradd --create-home --uid 1000 arena

COPY pyproject.toml README.md ./
COPY arena arena
COPY core core
COPY games games
COPY bots bots
COPY manage.py ./
# The starter bot that `manage.py demo` and `manage.py tournament run` start (arena/local_bots.py).
COPY examples examples
RUN pip install .

# Static files are collected at build time with the production storage (hashed, compressed).
# The key and hosts here exist only for this build step; the container gets its own at run time.
RUN ARENA_PRODUCTION=true SECRET_KEY=build-time-only-collectstatic-key-not-used-at-run-time \
    ALLOWED_HOSTS=build python manage.py collectstatic --no-input

# Run in production mode unless told otherwise: without a SECRET_KEY it refuses to start.
ENV ARENA_PRODUCTION=true
USER arena
EXPOSE 8000
# uvicorn workers running arena.asgi: waits hold no thread; the rest runs on WEB_THREADS (16).
# Idle connections are kept longer than a proxy in front keeps them (compose's nginx: 60 s),
# so the server never closes one the proxy is about to reuse (docker-compose.yml).
CMD ["gunicorn", "arena.asgi", "--bind", "0.0.0.0:8000", "--worker-class", "arena.workers.Worker", "--keep-alive", "75"]
