"""rubric-gate: put checklist rubrics for LLM judges under change control."""

__version__ = "0.1.0"  # the one place (pyproject.toml reads it; so does release.yml)
