"""The action's fixture (a real repository with a `pr` branch, and the fake GitHub) for comparing."""

from tests.action.conftest import scenario

__all__ = ["scenario"]
