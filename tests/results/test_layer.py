"""results/ sits below report/ and the action: loading it loads no renderer, no CLI and no I/O layer."""

from __future__ import annotations

import json
import subprocess
import sys

ABOVE = ("rubric_gate.report", "rubric_gate.action", "rubric_gate.cli", "rubric_gate.pipeline",
         "rubric_gate.service", "rubric_gate.judges", "rubric_gate.verdicts", "jinja2", "rich")


def test_results_imports_only_the_pure_layers() -> None:
    code = "import json, sys, rubric_gate.results; print(json.dumps(sorted(sys.modules)))"
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                       check=True).stdout)
    assert [m for m in loaded if m.startswith(ABOVE)] == []
    assert "rubric_gate.attribution" in loaded and "rubric_gate.gate" in loaded  # what it is built from
