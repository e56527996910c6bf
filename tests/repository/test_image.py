"""The built image runs the action: its entrypoint, in the container, gates a PR against the fake
GitHub as GitHub would run it (the workspace mounted, only GitHub's variables).

Opt-in, since no test machine has a container engine by default: build the image with buildah
(`python3 scripts/measure_image.py ...` leaves it as `localhost/rubric-gate:measured`) and set
RUBRIC_GATE_TEST_IMAGE to its name, and RUBRIC_GATE_BUILDAH to the buildah command with its
storage options when they are not the default."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.action.conftest import scenario  # noqa: F401  (a repository, a PR branch and the fake GitHub)
from tests.action.harness import RUBRIC, Scenario, rubric_yaml

IMAGE = os.environ.get("RUBRIC_GATE_TEST_IMAGE", "")
BUILDAH = shlex.split(os.environ.get("RUBRIC_GATE_BUILDAH", "buildah"))

pytestmark = pytest.mark.skipif(not IMAGE or shutil.which(BUILDAH[0]) is None,
                                reason="set RUBRIC_GATE_TEST_IMAGE to an image built with buildah")


@pytest.fixture
def container() -> Iterator[str]:
    name = subprocess.run([*BUILDAH, "from", IMAGE], check=True, capture_output=True, text=True).stdout.strip()
    yield name
    subprocess.run([*BUILDAH, "rm", name], check=False, capture_output=True)


def _entrypoint() -> list[str]:
    out = subprocess.run([*BUILDAH, "inspect", "--type", "image", IMAGE], check=True, capture_output=True, text=True).stdout
    return list(json.loads(out)["OCIv1"]["config"]["Entrypoint"])


def _runner(tmp: Path, name: str) -> list[str]:
    """A command that runs the image's entrypoint in the container as the Actions runner does:
    the host's /tmp (the workspace and GitHub's files) mounted at the same path, the working
    directory, and GitHub's variables passed in (nothing else of the host's environment)."""
    script = tmp / "in-container.sh"
    script.write_text(
        "#!/bin/sh\nset --\n"
        "for name in $(env | sed -n 's/^\\(GITHUB_[A-Z_]*\\|INPUT_[A-Z_]*\\|RUBRIC_GATE_[A-Z_]*\\|HOME\\)=.*/\\1/p'); do\n"
        '  set -- "$@" --env "$name=$(printenv "$name")"\ndone\n'
        f"exec {shlex.join(BUILDAH)} run --isolation chroot --network host -v /tmp:/tmp --workingdir \"$PWD\" "
        f"\"$@\" {shlex.quote(name)} -- {shlex.join(_entrypoint())}\n")
    script.chmod(0o755)
    return [str(script)]


def test_the_image_entrypoint_gates_a_pr(scenario: Scenario, container: str, tmp_path: Path) -> None:  # noqa: F811
    assert _entrypoint() == ["rubric-gate", "action"]
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    result = scenario.run(head, command=_runner(tmp_path, container), env_extra={"INPUT_JUDGE": "", "INPUT_FAIL_ON": ""})
    assert result.code == 1, result.stdout[-3000:] + result.stderr[-3000:]
    assert result.outputs["decision"] == "fail"
    assert result.report()["rubrics"][0]["file"] == RUBRIC
    assert len(scenario.fake.marked_comments()) == 1 and scenario.fake.check_runs


def test_the_image_has_git_and_leaves_out_what_the_action_never_imports(container: str) -> None:
    def inside(*command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*BUILDAH, "run", "--isolation", "chroot", container, "--", *command],
                              capture_output=True, text=True, check=False)

    assert inside("git", "--version").stdout.startswith("git version")
    assert "safe.directory=*" in inside("git", "config", "--system", "--list").stdout
    probe = inside("python", "-c", "import importlib.util as u; print([m for m in ('sklearn', 'scipy', 'pip') if u.find_spec(m)])")
    assert probe.stdout.strip() == "[]", probe.stderr
    # A run starts from the compiled bytecode: no module of the environment is compiled on import.
    verbose = inside("python", "-v", "-c", "import rubric_gate.cli.action_cmd, rubric_gate.action.run").stderr
    assert "code object from '/opt/rubric-gate/" in verbose
    assert [line for line in verbose.splitlines() if "bytecode is stale" in line
            or re.match(r"# code object from '/opt/.*\.py'$", line)] == []
    version = inside("rubric-gate", "--version")
    assert version.returncode == 0 and version.stdout.startswith("rubric-gate, version "), version.stderr
