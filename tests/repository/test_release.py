"""The release workflow: multi-arch image to GHCR with version and major tags, SBOM and provenance."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
RELEASE = ROOT / ".github/workflows/release.yml"


def _steps() -> list[dict]:
    workflow = yaml.safe_load(RELEASE.read_text())
    return [step for job in workflow["jobs"].values() for step in job["steps"]]


def _step(prefix: str) -> dict:
    [step] = [s for s in _steps() if str(s.get("uses", "")).startswith(prefix)]
    return step


def test_release_runs_on_version_tags_only() -> None:
    workflow = yaml.safe_load(RELEASE.read_text())
    trigger = workflow[True] if True in workflow else workflow["on"]  # YAML 1.1 reads `on` as true
    assert set(trigger) == {"push"} and set(trigger["push"]) == {"tags"}
    assert workflow["permissions"] == {"contents": "read"}
    [job] = workflow["jobs"].values()
    assert job["permissions"]["packages"] == "write"


def test_image_is_multi_arch_with_version_and_major_tags_sbom_and_provenance() -> None:
    build = _step("docker/build-push-action@")["with"]
    assert set(build["platforms"].split(",")) == {"linux/amd64", "linux/arm64"}
    assert build["push"] is True and build["sbom"] is True and str(build["provenance"]).startswith("mode=max")
    meta = _step("docker/metadata-action@")["with"]
    assert meta["images"] == "ghcr.io/${{ github.repository }}"
    tags = meta["tags"].split()
    assert "type=semver,pattern=v{{version}}" in tags and "type=semver,pattern=v{{major}}" in tags
    assert _step("docker/login-action@")["with"]["registry"] == "ghcr.io"
    assert _step("docker/setup-qemu-action@")  # arm64 on an amd64 runner


def test_release_workflow_matches_the_github_schema() -> None:
    tool = shutil.which("check-jsonschema", path=str(Path(sys.executable).parent))
    if tool is None:
        pytest.skip("check-jsonschema is not installed")
    proc = subprocess.run([tool, "--builtin-schema", "vendor.github-workflows", str(RELEASE)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
