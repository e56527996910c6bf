"""pydantic's plugin loader, stood in for while plugins are switched off.

pydantic imports its plugin loader when it builds the first model, and that module imports
`importlib.metadata` (with email, zipfile and csv: ~60 ms of a 0.9 s rerun) even when
`PYDANTIC_DISABLE_PLUGINS` switches plugins off and it then loads none. While they are off, the
stand-in answers `get_plugins()` with no plugin, as the loader itself would; any other name, or
plugins switched back on, loads the real loader in its place.
"""

from __future__ import annotations

import importlib
import os
import sys
import types
from typing import Any

LOADER = "pydantic.plugin._loader"
OFF = ("__all__", "1", "true")  # the values for which pydantic's own `get_plugins` returns ()


def _real_loader() -> types.ModuleType:
    if getattr(sys.modules.get(LOADER), "__rubric_gate_stand_in__", False):
        del sys.modules[LOADER]
    return importlib.import_module(LOADER)


def _get_plugins() -> Any:
    if os.environ.get("PYDANTIC_DISABLE_PLUGINS") in OFF:
        return ()
    return _real_loader().get_plugins()


def _attribute(name: str) -> Any:
    if name.startswith("__") and name.endswith("__"):  # the import system's own probes (`__path__`)
        raise AttributeError(name)
    return getattr(_real_loader(), name)


def stand_in_while_off() -> None:
    """Before any pydantic model is built: while plugins are off, pydantic finds the stand-in."""
    if os.environ.get("PYDANTIC_DISABLE_PLUGINS") not in OFF or LOADER in sys.modules:
        return
    module = types.ModuleType(LOADER, __doc__)
    module.__dict__.update(get_plugins=_get_plugins, __getattr__=_attribute, __rubric_gate_stand_in__=True)
    sys.modules[LOADER] = module
