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

# Dependencies first (pinned), so a source change does not reinstall them.
RUN pip install \
    "PyYAML==6.0.4" \
    "numpy==2.4.6" \
    "orjson==3.13.0" \
    "pydantic==2.14.4" \
    "click==8.5.1" \
    "Jinja2==3.1.6" \
    "rich==15.0.0" \
    "anthropic==2.14.0" \
    "openai==3.57.0" \
    "PyGithub==2.10.0" \
    "krippendorff==0.9.0" \
    "scikit-learn==1.9.1"

COPY pyproject.toml README.md /opt/rubric-gate/
COPY src /opt/rubric-gate/src
RUN pip install --no-deps /opt/rubric-gate

ENTRYPOINT ["rubric-gate", "action"]
