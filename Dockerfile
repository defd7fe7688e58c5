# One image for every role of bummerl (see docs/operators.md):
#   bummerl serve --address 0.0.0.0:50051 | bummerl worker -Q moves | bummerl worker -Q batch
#   | bummerl beat | bummerl web --host 0.0.0.0        and the migration: python -m db.migrate
# Build: docker build -t bummerl:0.1.0 .     (or: bash scripts/image build, with podman; any base
# with Python 3.11 at `python` and groupadd/useradd works: --build-arg BASE=..., see docs/deploy.md)
# It runs as an unprivileged user (uid 10001) and works with a read-only root filesystem:
# the only writable paths it needs are /app/var (beat's schedule) and /tmp (metrics of the
# workers' processes), which the Kubernetes manifests mount as emptyDir volumes.

ARG BASE=python:3.11-slim
# DEPS: an image of the `deps` stage below that scripts/image built for this pyproject.toml and
# keeps for reuse (localhost/bummerl-deps:<hash>); by default this file's own stage.
ARG DEPS=deps

# --- deps: the dependencies in a virtual environment (only pyproject.toml matters here) -------
FROM ${BASE} AS deps
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
WORKDIR /app
# The metadata (an empty README: setuptools reads one), and a stub of each package so that
# setuptools can read the project.
COPY pyproject.toml ./
RUN touch README.md \
    && mkdir -p engine cli services workers web db client events bots proto/bummerl bummerl_kit \
       hosting \
    && touch engine/__init__.py cli/__init__.py services/__init__.py workers/__init__.py \
       web/__init__.py db/__init__.py client/__init__.py events/__init__.py bots/__init__.py \
       proto/bummerl/__init__.py bummerl_kit/__init__.py hosting/__init__.py \
    && pip install . \
    && pip uninstall -y bummerl

# --- build: the code on the dependencies, the protobuf code generated ------------------------
FROM ${DEPS} AS build
COPY pyproject.toml README.md ./
# The code, installed in place (editable: /app is where it runs, so `bummerl` and the
# `bummerl.v1` protobuf package resolve to /app).
COPY engine engine
COPY analysis analysis
COPY cli cli
COPY services services
COPY workers workers
COPY web web
COPY db db
COPY client client
COPY bummerl_kit bummerl_kit
COPY events events
COPY bots bots
COPY hosting hosting
COPY proto proto
COPY examples examples
RUN pip install --no-deps -e . \
    && python proto/build.py \
    && python -m compileall -q engine cli services workers web db client bummerl_kit events bots hosting proto examples \
    && mkdir -p /app/var

# --- runtime: the environment and the code, no build leftovers, an unprivileged user ----------
FROM ${BASE} AS runtime
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
RUN groupadd --gid 10001 bummerl \
    && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /app --shell /usr/sbin/nologin bummerl
COPY --from=build /opt/venv /opt/venv
# the code stays root's (read-only to the process); only var/ is the user's
COPY --from=build /app /app
RUN chown 10001:10001 /app/var
WORKDIR /app
USER 10001:10001
# gRPC (serve), the dashboard (web), metrics (every role, when BUMMERL_METRICS_PORT is set)
EXPOSE 50051 8000 9100
ENTRYPOINT ["bummerl"]
CMD ["serve", "--address", "0.0.0.0:50051"]
