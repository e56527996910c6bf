# The rubric-gate GitHub Action. A tagged release's action.yml names this image, built and pushed
# by .github/workflows/release.yml, by digest; building it from this file is for development.
#
# Two stages. `build` installs the locked dependencies and the package into a virtual environment
# that has no pip of its own (the base image's pip installs into it; every dependency is a hashed
# wheel, so nothing is compiled), drops what never runs (setuptools, test suites, C sources and
# headers) and compiles the rest once, so a run starts without compiling: unchecked-hash bytecode,
# which Python uses without comparing file times (the layers round them to the second, and
# timestamp bytecode then looks stale). Shared libraries keep their symbols: `strip` breaks the
# ones auditwheel patched (numpy's OpenBLAS then fails to load, "ELF load command address/offset
# not page-aligned"). The final stage is the base image, that environment and git's one binary:
# every git command the action runs is built into it (the `git` package would add perl, curl and
# 170 helper programs, ~80 MB).
# docs/performance.md has the image's size and build time, and how they were measured.
FROM python:3.12.12-slim-bookworm AS base

FROM base AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1

# git, copied out below; the package's status entry goes with the binary, where image scanners
# read the packages of distroless images (/var/lib/dpkg/status.d).
RUN apt-get update \
    && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/* \
    && mkdir -p /out/status.d \
    && dpkg-query --status git > /out/status.d/git

# Dependencies first, so a source change does not reinstall them: every package, transitive
# ones included, at the version and hashes in the lock (pip refuses any other file).
COPY requirements/image.txt /tmp/image.txt
RUN python -m venv --without-pip /opt/rubric-gate \
    && pip --python /opt/rubric-gate/bin/python install --no-compile --require-hashes --only-binary :all: \
         -r /tmp/image.txt

COPY pyproject.toml README.md LICENSE /src/
COPY src /src/src
# Built with the locked setuptools: no unhashed build dependency is fetched.
RUN pip --python /opt/rubric-gate/bin/python install --no-compile --no-deps --no-build-isolation /src \
    && pip --python /opt/rubric-gate/bin/python uninstall --yes setuptools \
    && find /opt/rubric-gate -depth \( -type d \( -name tests -o -name __pycache__ \) \
         -o -type f \( -name '*.pyi' -o -name '*.pxd' -o -name '*.c' -o -name '*.h' \) \) -exec rm -rf '{}' + \
    && python -m compileall -q -j 0 --invalidation-mode unchecked-hash /opt/rubric-gate/lib

FROM base
COPY --from=build /usr/bin/git /usr/bin/git
COPY --from=build /out/status.d/git /var/lib/dpkg/status.d/git
COPY --from=build /opt/rubric-gate /opt/rubric-gate
# The mounted workspace belongs to another uid, so git must be told to trust it.
RUN git config --system --add safe.directory '*'
ENV PATH=/opt/rubric-gate/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1

# GitHub runs the action as root with the workspace mounted and as the working directory, so
# there is deliberately no USER or WORKDIR here.
ENTRYPOINT ["rubric-gate", "action"]
