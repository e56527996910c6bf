"""Releases: the workflow runs scripts/release.py (the code a dry run runs here), refuses a tag
without its version and changelog entry, ships checked distributions without tests and with
absolute links, and tags a tree whose action.yml names the pushed image by digest; and the
conventions around it (Dependabot, SECURITY.md, CHANGELOG.md, the Marketplace's limits)."""

from __future__ import annotations

import importlib.util
import io
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from datetime import date
from pathlib import Path
from types import ModuleType

import pytest
import yaml
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[2]
RELEASE = ROOT / ".github/workflows/release.yml"
IMAGE = "ghcr.io/rubric-gate/rubric-gate@sha256:" + "0123456789abcdef" * 4


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("release_script", ROOT / "scripts" / "release.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


release = _script()


def _workflow() -> dict:
    return yaml.safe_load(RELEASE.read_text())


def _jobs() -> dict[str, dict]:
    return _workflow()["jobs"]


def _tool(name: str) -> str:
    path = Path(sys.executable).parent / name
    found = str(path) if path.exists() else shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[dev]')")
    return found


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=cwd,
                          check=True, capture_output=True, text=True).stdout


# -- the workflow -------------------------------------------------------------------------------
def test_release_runs_on_version_tags_only_with_least_privilege() -> None:
    workflow = _workflow()
    trigger = workflow[True] if True in workflow else workflow["on"]  # YAML 1.1 reads `on` as true
    assert trigger == {"push": {"tags": ["v[0-9]+.[0-9]+.[0-9]+"]}}
    assert workflow["permissions"] == {}
    jobs = _jobs()
    assert {name: job["permissions"] for name, job in jobs.items()} == {
        "check": {"contents": "read"}, "dist": {"contents": "read"},
        "image": {"contents": "read", "packages": "write"}, "action": {"contents": "write"},
        "pypi": {"id-token": "write"}}
    # Nothing is published before the tag is checked; PyPI, which cannot be undone, comes last.
    assert jobs["dist"]["needs"] == jobs["image"]["needs"] == "check"
    assert set(jobs["action"]["needs"]) == {"dist", "image"} and jobs["pypi"]["needs"] == "action"


def test_every_release_step_is_a_command_of_the_release_script() -> None:
    """The dry run runs the same code: the workflow's shell steps only call scripts/release.py
    (and gh to publish the release its notes command writes)."""
    commands = [line.strip() for job in _jobs().values() for step in job["steps"] if "run" in step
                for line in step["run"].splitlines() if line.strip()]
    assert {c.split()[2] for c in commands if c.startswith("python scripts/release.py")} == {
        "check", "build", "tag-tree", "notes"}
    assert [c for c in commands if not c.startswith(("python scripts/release.py", "python -m pip install", "gh release"))] == []
    assert 'tag-tree "${GITHUB_REF_NAME}" "ghcr.io/${GITHUB_REPOSITORY,,}@${DIGEST}" --push origin' in RELEASE.read_text()
    assert _jobs()["image"]["outputs"]["digest"] == "${{ steps.build.outputs.digest }}"


def test_pypi_is_trusted_publishing_from_an_environment() -> None:
    job = _jobs()["pypi"]
    assert job["environment"]["name"] == "pypi"
    [publish] = [s for s in job["steps"] if str(s.get("uses", "")).startswith("pypa/gh-action-pypi-publish@")]
    assert "with" not in publish  # no password or token: the OIDC exchange
    assert "secrets." not in yaml.safe_dump(job)


def test_image_is_multi_arch_with_version_and_major_tags_sbom_and_provenance() -> None:
    steps = {str(s.get("uses", "")).split("@")[0]: s for s in _jobs()["image"]["steps"]}
    build = steps["docker/build-push-action"]["with"]
    assert set(build["platforms"].split(",")) == {"linux/amd64", "linux/arm64"}
    assert build["push"] is True and build["sbom"] is True and str(build["provenance"]).startswith("mode=max")
    assert "cache-from" not in build  # a cache other workflows write never feeds a published image
    meta = steps["docker/metadata-action"]["with"]
    assert meta["images"] == "ghcr.io/${{ github.repository }}"
    assert {"type=semver,pattern=v{{version}}", "type=semver,pattern=v{{major}}"} <= set(meta["tags"].split())
    assert steps["docker/login-action"]["with"]["registry"] == "ghcr.io"


def test_release_workflow_matches_the_github_schema() -> None:
    proc = subprocess.run([_tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows", str(RELEASE)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


# -- version and changelog ----------------------------------------------------------------------
CHANGELOG = """# Changelog

## [Unreleased]

### Added

- A thing.

## [1.1.0] - 2026-01-02

### Fixed

- Another.

[Unreleased]: https://github.com/rubric-gate/rubric-gate/compare/v1.1.0...HEAD
[1.1.0]: https://github.com/rubric-gate/rubric-gate/releases/tag/v1.1.0
"""


def _tree(tmp_path: Path, version: str = "1.1.0", changelog: str = CHANGELOG) -> Path:
    (tmp_path / "src/rubric_gate").mkdir(parents=True)
    (tmp_path / "src/rubric_gate/__init__.py").write_text(f'"""x"""\n\n__version__ = "{version}"  # the one place\n')
    (tmp_path / "CHANGELOG.md").write_text(changelog)
    return tmp_path


@pytest.mark.parametrize(("tag", "changelog", "why"), [
    ("1.1.0", CHANGELOG, "is not a release tag"),
    ("v1.1", CHANGELOG, "is not a release tag"),
    ("v1.2.0", CHANGELOG, "does not match the package version 1.1.0"),
    ("v1.1.0", CHANGELOG.replace("## [1.1.0] - 2026-01-02", "## [1.0.0] - 2026-01-02"), "has no entry for 1.1.0"),
    ("v1.1.0", CHANGELOG.replace("## [1.1.0] - 2026-01-02", "## [1.1.0]"), "has no date"),
    ("v1.1.0", CHANGELOG.replace("- Another.", ""), "lists no change"),
])
def test_the_tag_is_refused_without_its_version_and_entry(tmp_path: Path, tag: str, changelog: str, why: str) -> None:
    with pytest.raises(release.Refused, match=re.escape(why)):
        release.check(tag, _tree(tmp_path, changelog=changelog))


def test_a_tag_with_its_version_and_entry_passes_and_its_notes_are_the_entry(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    assert release.check("v1.1.0", root) == "1.1.0"
    assert release.changelog_entry("1.1.0", root) == "### Fixed\n\n- Another."


def test_the_release_commit_dates_the_unreleased_entry_and_links_the_comparison(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    release.prepare("1.2.0", root, today=date(2026, 3, 4))
    text = (root / "CHANGELOG.md").read_text()
    assert "## [Unreleased]\n\n## [1.2.0] - 2026-03-04\n\n### Added\n\n- A thing." in text
    assert "[Unreleased]: https://github.com/rubric-gate/rubric-gate/compare/v1.2.0...HEAD" in text
    assert "[1.2.0]: https://github.com/rubric-gate/rubric-gate/compare/v1.1.0...v1.2.0" in text
    assert release.check("v1.2.0", root) == "1.2.0"
    # Nothing unreleased: nothing to release.
    with pytest.raises(release.Refused, match="lists no change"):
        release.prepare("1.3.0", root)


def test_the_repository_changelog_keeps_a_changelog() -> None:
    text = (ROOT / "CHANGELOG.md").read_text()
    assert "[Keep a Changelog](https://keepachangelog.com/en/1.1.0/)" in text
    headings = re.findall(r"^## (.*)$", text, re.M)
    assert headings[0] == "[Unreleased]" and all(release.ENTRY.fullmatch(f"## {h}") for h in headings)
    for heading in re.findall(r"^### (.*)$", text, re.M):
        assert heading in {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}, heading
    version = release.package_version()
    if f"## [{version}]" not in text:  # not released yet: the workflow would refuse the tag
        with pytest.raises(release.Refused, match=f"no entry for {re.escape(version)}"):
            release.check(f"v{version}")


# -- distributions ------------------------------------------------------------------------------
def _links(markdown: str) -> list[str]:
    """Every link and image target, as a CommonMark parser reads them."""
    found = []
    for token in MarkdownIt("commonmark").parse(markdown):
        for child in token.children or []:
            if child.type == "link_open":
                found.append(str(child.attrGet("href")))
            elif child.type == "image":
                found.append(str(child.attrGet("src")))
    return found


def test_the_readme_on_pypi_has_only_absolute_links() -> None:
    readme = (ROOT / "README.md").read_text()
    assert [t for t in _links(readme) if not re.match(r"https?://", t)]  # the README has relative ones
    rewritten = release.absolute_links(readme, "v9.9.9")
    assert [t for t in _links(rewritten) if not re.match(r"https?://", t)] == []
    assert release.relative_links(rewritten) == []
    assert "](https://github.com/rubric-gate/rubric-gate/blob/v9.9.9/docs/action.md#inputs)" in rewritten
    assert "](https://github.com/rubric-gate/rubric-gate/blob/v9.9.9/README.md#two-commands)" in rewritten
    # Only link targets change: the rest of the text is the README's.
    assert re.sub(r"\]\([^)]*\)", "]()", rewritten) == re.sub(r"\]\([^)]*\)", "]()", readme)


def test_images_and_reference_links_are_made_absolute_too() -> None:
    text = "![logo](docs/logo.png) [a](https://x.test/a) [b](./CHANGELOG.md) [c][c]\n\n[c]: docs/\n"
    assert release.absolute_links(text, "v1.0.0") == (
        "![logo](https://github.com/rubric-gate/rubric-gate/raw/v1.0.0/docs/logo.png) [a](https://x.test/a) "
        "[b](https://github.com/rubric-gate/rubric-gate/blob/v1.0.0/CHANGELOG.md) [c][c]\n\n"
        "[c]: https://github.com/rubric-gate/rubric-gate/tree/v1.0.0/docs/\n")


def test_the_built_distributions_pass_their_checks(tmp_path: Path) -> None:
    _tool("twine")
    pytest.importorskip("build")
    sdist, wheel = release.build("v9.9.9", tmp_path, ref=None, isolation=False)  # the work tree, as it is
    with tarfile.open(sdist) as tar:
        names = tar.getnames()
    assert not [n for n in names if "/tests/" in n or "/benchmarks/" in n]
    assert any(n.endswith("/src/rubric_gate/__init__.py") for n in names)
    with zipfile.ZipFile(wheel) as archive:
        [meta] = [n for n in archive.namelist() if n.endswith("METADATA")]
        headers, description = archive.read(meta).decode().split("\n\n", 1)
    assert [t for t in _links(description) if not re.match(r"https?://", t)] == []
    assert "(https://github.com/rubric-gate/rubric-gate/blob/v9.9.9/" in description
    assert "Classifier: Programming Language :: Python :: 3.14" in headers


def _tar(path: Path, files: dict[str, str]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def _wheel(path: Path, description: str) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("x-1.0.dist-info/METADATA", f"Metadata-Version: 2.4\nName: x\nVersion: 1.0\n\n{description}")
    return path


@pytest.mark.parametrize(("extra", "description", "why"), [
    ({"x-1.0/tests/test_a.py": ""}, "ok", "ship test files"),
    ({}, "see [docs](docs/a.md)", "relative links"),
])
def test_the_distribution_check_can_fail(tmp_path: Path, extra: dict[str, str], description: str, why: str) -> None:
    sdist = _tar(tmp_path / "x-1.0.tar.gz", {"x-1.0/PKG-INFO": f"Name: x\nVersion: 1.0\n\n{description}", **extra})
    with pytest.raises(release.Refused, match=why):
        release.check_distributions(sdist, _wheel(tmp_path / "x-1.0-py3-none-any.whl", "ok"))


def test_python_313_and_314_are_declared_and_tested() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    ci = yaml.safe_load((ROOT / ".github/workflows/ci.yml").read_text())
    declared = re.findall(r'"Programming Language :: Python :: (3\.\d+)"', pyproject)
    assert declared == ["3.11", "3.12", "3.13", "3.14"]
    assert ci["jobs"]["test"]["strategy"]["matrix"]["python"] == declared


# -- the tagged tree ----------------------------------------------------------------------------
def test_the_tagged_action_yml_names_the_image_by_digest_and_nothing_else_changes() -> None:
    text = (ROOT / "action.yml").read_text()
    pinned = release.pin_action(text, IMAGE)
    assert yaml.safe_load(pinned)["runs"] == {"using": "docker", "image": f"docker://{IMAGE}"}
    assert pinned.replace(f"docker://{IMAGE}", "Dockerfile") == text
    for bad in ("ghcr.io/o/r:v1", "ghcr.io/o/r@sha256:abc", "docker.io/o/r@sha256:" + "0" * 64,
                "ghcr.io/O/R@sha256:" + "0" * 64):
        with pytest.raises(release.Refused, match=r"is not ghcr\.io"):
            release.pin_action(text, bad)
    with pytest.raises(release.Refused, match="found 0"):
        release.pin_action(pinned, IMAGE)  # already pinned: nothing to rewrite


def test_the_pinned_action_yml_matches_the_action_schema(tmp_path: Path) -> None:
    path = tmp_path / "action.yml"
    path.write_text(release.pin_action((ROOT / "action.yml").read_text(), IMAGE))
    proc = subprocess.run([_tool("check-jsonschema"), "--builtin-schema", "vendor.github-actions", str(path)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_tag_tree_commits_on_top_and_moves_the_version_and_major_tags(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "action.yml").write_text((ROOT / "action.yml").read_text())
    (repo / "README.md").write_text("x\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "release 1.2.3")
    head = _git(repo, "rev-parse", "HEAD").strip()
    _git(repo, "tag", "v1", head)  # the previous release's major tag moves too
    commit = release.tag_tree("v1.2.3", IMAGE, root=repo)
    assert _git(repo, "rev-parse", "v1.2.3^{commit}").strip() == commit == _git(repo, "rev-parse", "v1^{commit}").strip()
    assert _git(repo, "rev-parse", f"{commit}^").strip() == head
    assert _git(repo, "diff", "--name-only", head, commit).split() == ["action.yml"]
    assert f"image: docker://{IMAGE}" in _git(repo, "show", "v1.2.3:action.yml")
    assert _git(repo, "cat-file", "-t", "v1.2.3").strip() == "tag"  # annotated
    # The work tree, the index and the branch are as they were.
    assert _git(repo, "rev-parse", "HEAD").strip() == head and _git(repo, "status", "--porcelain") == ""
    assert "image: Dockerfile" in (repo / "action.yml").read_text()


def test_the_dry_run_makes_a_tag_tree_with_the_image_by_digest_and_checked_distributions(tmp_path: Path) -> None:
    """What the workflow does that can run here, on a scratch clone of HEAD (committed work only)."""
    _tool("twine")
    pytest.importorskip("build")
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "release.py"), "dry-run", "--image", IMAGE,
                           "--out", str(tmp_path), "--no-isolation"], cwd=ROOT, capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"tag tree v\S+ \([0-9a-f]{12}\): image: docker://" + re.escape(IMAGE), proc.stderr)
    assert "twine check --strict passed" in proc.stderr
    assert len(list(tmp_path.glob("*.whl"))) == len(list(tmp_path.glob("*.tar.gz"))) == 1
    assert yaml.safe_load((tmp_path / "action.yml").read_text())["runs"]["image"] == f"docker://{IMAGE}"
    assert _git(ROOT, "tag", "--list", "v*.*.*", "--points-at", "HEAD") == ""  # nothing tagged here


# -- conventions --------------------------------------------------------------------------------
def test_the_action_description_fits_the_marketplace() -> None:
    description = yaml.safe_load((ROOT / "action.yml").read_text())["description"]
    assert 20 < len(description) <= 125  # the Marketplace refuses more than 125 characters


def test_dependabot_updates_actions_python_and_the_image_grouped() -> None:
    path = ROOT / ".github" / "dependabot.yml"
    proc = subprocess.run([_tool("check-jsonschema"), "--builtin-schema", "vendor.dependabot", str(path)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    updates = yaml.safe_load(path.read_text())["updates"]
    assert {u["package-ecosystem"] for u in updates} == {"github-actions", "pip", "docker"}
    assert all(u["groups"] and all(g["patterns"] == ["*"] for g in u["groups"].values()) for u in updates)
    [pip] = [u for u in updates if u["package-ecosystem"] == "pip"]
    assert "/requirements" in pip["directories"]  # the image's lock


def test_security_policy_and_release_checklist_are_where_github_looks() -> None:
    security = (ROOT / "SECURITY.md").read_text()
    assert {"## Reporting a vulnerability", "## The trust model in short", "## Supported versions"} <= set(
        re.findall(r"^## .*$", security, re.M))
    assert "docs/action.md#trust-model" in security
    contributing = (ROOT / "CONTRIBUTING.md").read_text()
    assert "## Releasing" in contributing and "### Checklist" in contributing
    assert "scripts/release.py dry-run" in contributing and "trusted publisher" in contributing
    assert len(re.findall(r"^- \[ \] ", contributing, re.M)) >= 8
