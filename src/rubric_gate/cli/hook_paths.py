"""Which rubrics a pre-commit hook run concerns: the staged rubric files themselves, and the
staged rubrics that read a staged calibration set or verdict file (a commit that only relabels
items or changes recorded answers still changes what those rubrics are gated on)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

RUBRIC_SUFFIXES = (".yaml", ".yml")


def _normal(path: str) -> str:
    return os.path.normpath(path).replace(os.sep, "/")


def staged_rubric_files(root: Path) -> list[str]:
    proc = subprocess.run(["git", "ls-files", "-z", "--cached", "--", "*.yaml", "*.yml"], cwd=root,
                          capture_output=True, check=False)
    return [p for p in proc.stdout.decode("utf-8", "replace").split("\0") if p] if proc.returncode == 0 else []


def rubrics_for_hook(files: tuple[str, ...] | list[str], root: Path) -> list[str]:
    """Rubric paths for FILES: rubric files as given, then each staged rubric whose `calibration`
    or `verdicts` is one of the other files (in repository order, each once). The settings file
    (`.rubric-gate.yaml`) stands for every promptfoo config it names: its calibration and
    verdicts are theirs."""
    from rubric_gate.errors import RubricGateError
    from rubric_gate.rubric import parse_rubric_text
    from rubric_gate.rubric.load import git_siblings
    from rubric_gate.rubric.mapping import MAPPING_FILE
    from rubric_gate.sources.files import read_git_file

    settings_staged = any(_normal(f) == MAPPING_FILE for f in files)
    rubrics = [f for f in files if f.endswith(RUBRIC_SUFFIXES) and _normal(f) != MAPPING_FILE]
    data = {_normal(f) for f in files if not f.endswith(RUBRIC_SUFFIXES)}
    if data or settings_staged:
        siblings = git_siblings("", root)
        for path in staged_rubric_files(root):
            if path in rubrics or path == MAPPING_FILE:
                continue
            try:
                doc = parse_rubric_text(read_git_file("", path, root), path, repo_path=path, siblings=siblings)
            except RubricGateError:
                continue  # not a rubric (any YAML file in the repository is looked at)
            rubric = doc.rubric
            if {_normal(rubric.calibration), _normal(rubric.verdicts)} & data or (
                    settings_staged and doc.kind == "promptfoo"):
                rubrics.append(path)
    return rubrics
