"""The built wheel, installed on its own, runs the first hour's commands.

Installing its dependencies into a fresh venv takes minutes here, so this test installs the wheel
alone (`--no-deps`) ahead of everything else on the path and runs it on this environment's
dependencies: what it checks is the wheel's own contents (entry point, package data: schemas,
templates, the files `init` writes). `scripts/try_wheel.sh` does the full fresh-venv (and pipx)
install by hand.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    try:
        import build  # noqa: F401
    except ImportError:
        pytest.skip("build is not installed (pip install -e '.[dev]')")
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--wheel", "--outdir", str(out), str(ROOT)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    [wheel] = out.glob("*.whl")
    site = tmp_path_factory.mktemp("site")
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
                           "--target", str(site), str(wheel)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return site


def _run(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "PYTHONPATH")}
    env["PYTHONPATH"] = str(site)  # ahead of site-packages, where the editable install lives
    script = site / "bin" / "rubric-gate"  # the wheel's console script
    return subprocess.run([sys.executable, str(script), *args], cwd=cwd, env=env, capture_output=True, text=True,
                          check=False)


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=cwd, check=True,
                   capture_output=True)


def test_the_wheel_alone_runs_version_init_check_and_preview(wheel_site: Path, tmp_path: Path) -> None:
    where = subprocess.run([sys.executable, "-c", "import rubric_gate; print(rubric_gate.__file__)"],
                           env={**os.environ, "PYTHONPATH": str(wheel_site)}, capture_output=True, text=True, check=True)
    assert where.stdout.startswith(str(wheel_site))  # the wheel's copy, not the source tree
    from importlib import metadata

    assert _run(wheel_site, tmp_path, "--version").stdout == f"rubric-gate, version {metadata.version('rubric-gate')}\n"

    repo = tmp_path / "mine"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    init = _run(wheel_site, repo, "init", "--name", "mine")
    assert init.returncode == 0, init.stderr
    for path in ("rubrics/mine.yaml", "calibration/mine.jsonl", ".github/workflows/rubric-gate.yml",
                 ".github/workflows/rubric-gate-comment.yml", "rubrics/rubric.schema.json"):
        assert (repo / path).is_file(), (path, init.stdout)
    lint = _run(wheel_site, repo, "lint", "rubrics/mine.yaml")
    assert lint.returncode == 0 and "no recorded verdict" in lint.stdout, lint.stdout + lint.stderr

    # The bundled example, gated by the wheel: the drifting revision fails, in the action's
    # preview too.
    for part in ("rubrics", "calibration", "examples"):
        shutil.copytree(ROOT / part, repo / part, dirs_exist_ok=True)
    check = _run(wheel_site, repo, "check", "--base", "rubrics/cloud-security-review.yaml",
                 "--head", "examples/drifting-revision.yaml")
    assert check.returncode == 1, check.stderr
    assert "rubric-gate: FAIL — cloud-security-review, version 3 → 4" in check.stdout
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    _git(repo, "checkout", "-q", "-b", "edit")
    rubric = repo / "rubrics" / "cloud-security-review.yaml"
    rubric.write_text(rubric.read_text().replace("- id: severity-fits", "- id: severity-is-right"))
    _git(repo, "commit", "-q", "-am", "rename a check")
    preview = _run(wheel_site, repo, "preview", "--base", "main")
    assert preview.returncode == 0, preview.stderr
    assert "## ✅ rubric-gate: PASS" in preview.stdout and (repo / ".rubric-gate/preview/report.html").is_file()
