"""A rerun of `check` on an unchanged, indexed store imports only what it uses: no msgspec (the
parser's fast path), no importlib.metadata (pydantic's plugin scan, off in the console script),
no renderer, SDK or statistics library the JSON report does not need."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.project import write_example

UNUSED_ON_RERUN = ("msgspec", "importlib.metadata", "jinja2", "rich", "scipy", "anthropic", "openai", "httpx",
                   "github", "krippendorff", "rubric_gate.report.html", "rubric_gate.judges.runner",
                   # loaded where they are used: a panel's lookup, a PR's own verdicts, a promptfoo config,
                   # numpy's np.unique, a crash log, a misspelt key, git and a first read of a calibration set
                   "rubric_gate.ensemble", "rubric_gate.trust", "rubric_gate.rubric.mapping", "numpy.ma", "tempfile",
                   "traceback", "difflib", "subprocess")

# What the console script does (`run()`), then which of those modules were loaded.
PROBE = (
    "import atexit, json, sys\n"
    f"unused = {UNUSED_ON_RERUN!r}\n"
    "atexit.register(lambda: sys.stderr.write('LOADED ' + json.dumps([m for m in unused if m in sys.modules])))\n"
    "from rubric_gate.cli.main import run\n"
    "sys.argv = ['rubric-gate', *sys.argv[1:]]\n"
    "run()\n"
)


def check(root: Path, index: Path) -> tuple[int, dict, list[str]]:
    env = {key: value for key, value in os.environ.items() if key != "PYDANTIC_DISABLE_PLUGINS"}
    out = subprocess.run([sys.executable, "-c", PROBE, "check", "--base", "rubrics/demo.yaml", "--head",
                          "rubrics/demo.yaml", "--root", ".", "--replay", "--format", "json"],
                         cwd=root, capture_output=True, text=True, env={**env, "RUBRIC_GATE_INDEX_DIR": str(index)})
    loaded = json.loads(out.stderr.rpartition("LOADED ")[2])
    return out.returncode, json.loads(out.stdout), loaded


def test_a_rerun_imports_nothing_it_does_not_use(tmp_path: Path) -> None:
    project = write_example(tmp_path / "repo")
    index = tmp_path / "index"
    code, first, loaded_first = check(project.root, index)
    assert code == 0
    assert "msgspec" in loaded_first  # the probe sees an import: the first run parses the store
    code, again, loaded = check(project.root, index)
    assert code == 0 and again == first
    assert loaded == []


STAND_IN = (
    "import os, sys\n"
    "os.environ['PYDANTIC_DISABLE_PLUGINS'] = '__all__'\n"
    "from rubric_gate.cli.pydantic_plugins import stand_in_while_off\n"
    "stand_in_while_off()\n"
    "from pydantic import BaseModel\n"
    "class Model(BaseModel):\n"
    "    x: int\n"
    "assert Model(x=1).x == 1\n"
    "print('importlib.metadata' in sys.modules)\n"
    "os.environ['PYDANTIC_DISABLE_PLUGINS'] = ''\n"  # plugins on again: the real loader answers
    "from pydantic.plugin._loader import get_plugins\n"
    "get_plugins()\n"
    "print('importlib.metadata' in sys.modules, type(sys.modules['pydantic.plugin._loader']).__name__,\n"
    "      hasattr(sys.modules['pydantic.plugin._loader'], '__rubric_gate_stand_in__'))\n"
    "import pydantic.plugin._loader as loader\n"
    "print(loader.PYDANTIC_ENTRY_POINT_GROUP)\n"
)


def test_the_plugin_loader_stand_in_answers_as_pydantic_would() -> None:
    out = subprocess.run([sys.executable, "-c", STAND_IN], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["False", "True module False", "pydantic"]
