# syntax=docker/dockerfile:1
#
# The kube-pyscheduler container image.
#
#   docker build -t kube-pyscheduler:0.1.0 .
#
# Two stages: `build` installs the pinned runtime dependencies (requirements.lock) and the
# project's wheel into a virtual environment; the final stage copies only that environment onto
# a fresh base, so no build backend, pip cache or source tree ships. Every locked package has a
# CPython 3.11 manylinux wheel (--only-binary=:all:), so no compiler is needed in either stage.
# Pin the base by digest for reproducible builds:
#   docker build --build-arg PYTHON_IMAGE=python:3.11-slim@sha256:<digest> ...

ARG PYTHON_IMAGE=python:3.11-slim

FROM ${PYTHON_IMAGE} AS build

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore

# The build backend named in pyproject.toml, pinned; it stays in this stage.
RUN python -m pip install setuptools==84.2.1 wheel==0.48.0

WORKDIR /src

# Dependencies first: this layer is reused until requirements.lock changes.
COPY requirements.lock ./
RUN python -m venv /opt/venv \
 && /opt/venv/bin/pip install --only-binary=:all: --no-deps --requirement requirements.lock

# The wheel needs the metadata (pyproject.toml and the README it names) and the code.
COPY pyproject.toml README.md ./
COPY src ./src
# --no-deps: everything the project needs is already installed, at the locked versions; `pip
# check` fails the build if the lock misses one. Then pip and setuptools leave the environment
# (nothing installs packages at run time) and every module is compiled ahead of time, because a
# read-only root file system cannot take .pyc files later. unchecked-hash: the files never
# change inside the image, so Python loads the bytecode without comparing it to the source.
RUN python -m pip wheel --no-deps --no-build-isolation --wheel-dir /dist . \
 && /opt/venv/bin/pip install --no-deps /dist/*.whl \
 && /opt/venv/bin/pip check \
 && /opt/venv/bin/pip uninstall --yes pip setuptools \
 && /opt/venv/bin/python -m compileall -q -f -j 0 --invalidation-mode unchecked-hash /opt/venv/lib


FROM ${PYTHON_IMAGE}

LABEL org.opencontainers.image.title="kube-pyscheduler" \
      org.opencontainers.image.description="A Kubernetes scheduler implementing the Scheduler Framework, in Python" \
      org.opencontainers.image.licenses="Apache-2.0"

# PYTHONDONTWRITEBYTECODE: never try to write .pyc files (the root file system is read-only in
# the Deployment; everything was compiled in the build stage or just below).
# PYTHONUNBUFFERED: log lines reach `kubectl logs` as they are written.
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    TMPDIR=/tmp

# The official base image ships the standard library without bytecode; compile it once here so
# start-up does not recompile it in memory on every run (test directories, if any, hold
# deliberately broken files). Then the unprivileged user, with a numeric id so the kubelet can
# verify runAsNonRoot.
RUN python -m compileall -q -f -j 0 --invalidation-mode unchecked-hash \
      -x '/(test|tests|idle_test)/' /usr/local/lib/python3.11 \
 && groupadd --system --gid 65532 nonroot \
 && useradd --system --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin nonroot

COPY --from=build /opt/venv /opt/venv

USER 65532:65532
WORKDIR /tmp

# HTTPS: /healthz, /livez, /readyz, /metrics.
EXPOSE 10259

ENTRYPOINT ["kube-pyscheduler"]
CMD ["run"]
