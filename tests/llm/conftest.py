"""Fixtures: the fake provider server of the judge tests."""

from tests.judges.conftest import fake  # noqa: F401 - fixture re-export
