# The rubric-gate GitHub Action. GitHub runs it as root with the workspace mounted and as the
# working directory, so there is deliberately no USER or WORKDIR here.
FROM python:3.12.12-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# git reads base/head versions from the checkout; the mounted workspace belongs to another
# uid, so git must be told to trust it.
RUN apt-get update \
    && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/* \
    && git config --system --add safe.directory '*'

# Dependencies first, so a source change does not reinstall them: every package, transitive
# ones included, at the version and hashes in the lock (pip refuses any other file).
COPY requirements/image.txt /opt/rubric-gate/requirements/image.txt
RUN pip install --require-hashes --only-binary :all: -r /opt/rubric-gate/requirements/image.txt

COPY pyproject.toml README.md LICENSE /opt/rubric-gate/
COPY src /opt/rubric-gate/src
# Built with the locked setuptools: no unhashed build dependency is fetched.
RUN pip install --no-deps --no-build-isolation /opt/rubric-gate

ENTRYPOINT ["rubric-gate", "action"]
