"""The action's fixture (a real repository with a `pr` branch, and the fake GitHub) for comparing."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "action"))

from tests.action.conftest import scenario

__all__ = ["scenario"]
