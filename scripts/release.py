#!/usr/bin/env python3
"""The release steps, one command each: .github/workflows/release.yml runs them on a version tag,
and `dry-run` runs them here, on a scratch clone, without pushing anything.

    python scripts/release.py prepare 1.2.3             # the release commit: version and changelog
    python scripts/release.py check v1.2.3              # the tag names the version and has an entry
    python scripts/release.py notes 1.2.3               # the changelog entry (the GitHub release's notes)
    python scripts/release.py build --tag v1.2.3 --out dist   # sdist + wheel, checked
    python scripts/release.py tag-tree v1.2.3 ghcr.io/OWNER/rubric-gate@sha256:...  [--push]
    python scripts/release.py dry-run --image ghcr.io/OWNER/rubric-gate@sha256:...

`tag-tree` makes the release commit's child in which action.yml names the pushed image by
digest (`docker://...@sha256:...`), and points the version tag and the major tag (`v1`) at it:
`uses: OWNER/rubric-gate@v1` then pulls the image instead of building the Dockerfile. Each
command prints what it did and exits 0, or prints why not (an `::error::` line in GitHub
Actions) and exits 1. Only the standard library, git, and for `build` the `build` and `twine`
packages.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INIT = Path("src/rubric_gate/__init__.py")
CHANGELOG = Path("CHANGELOG.md")
ACTION = Path("action.yml")
REPOSITORY = "https://github.com/rubric-gate/rubric-gate"  # pyproject.toml's Source URL
TAG = re.compile(r"v(?P<version>(?P<major>0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*))")
VERSION_LINE = re.compile(r'^__version__ = "(?P<version>[^"]+)"', re.M)
ENTRY = re.compile(r"^## \[(?P<version>[^\]]+)\](?: - (?P<date>\d{4}-\d{2}-\d{2}))?[ \t]*$", re.M)
IMAGE = re.compile(r"ghcr\.io/[a-z0-9._-]+/[a-z0-9._-]+@sha256:[0-9a-f]{64}")
IMAGE_LINE = re.compile(r"^(?P<indent>  )image: Dockerfile[ \t]*$", re.M)
# Markdown links and images whose target is relative: inline `](target)` and reference `[x]: target`.
INLINE_LINK = re.compile(r"(?P<open>!?\[[^\]]*\]\()(?P<target>[^)\s]+)(?P<close>[)\s])")
REFERENCE_LINK = re.compile(r"^(?P<open>\[[^\]]+\]:[ \t]+)(?P<target>\S+)", re.M)
ABSOLUTE = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)


class Refused(Exception):
    """A release step that must not go on, and why."""


def say(message: str) -> None:
    print(f"release: {message}", file=sys.stderr)


def run(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=False,
                          env={**os.environ, **(env or {})})
    if proc.returncode != 0:
        raise Refused(f"{' '.join(args[:3])}... failed ({proc.returncode}): {(proc.stderr or proc.stdout).strip()[-1500:]}")
    return proc.stdout


# -- version and changelog ---------------------------------------------------------------------
def package_version(root: Path = ROOT) -> str:
    match = VERSION_LINE.search((root / INIT).read_text(encoding="utf-8"))
    if match is None:
        raise Refused(f"{INIT}: no __version__ line")
    return match["version"]


def changelog_entry(version: str, root: Path = ROOT) -> str:
    """The text of `## [version] - YYYY-MM-DD` up to the next `## ` heading, or Refused."""
    path = root / CHANGELOG
    if not path.is_file():
        raise Refused(f"{CHANGELOG} is missing")
    text = path.read_text(encoding="utf-8")
    headings = list(ENTRY.finditer(text))
    for index, heading in enumerate(headings):
        if heading["version"] != version:
            continue
        if heading["date"] is None:
            raise Refused(f"{CHANGELOG}: the entry for {version} has no date (## [{version}] - YYYY-MM-DD)")
        end = headings[index + 1].start() if index + 1 < len(headings) else len(text)
        body = re.split(r"^\[[^\]]+\]:", text[heading.end():end], maxsplit=1, flags=re.M)[0].strip()
        if not re.search(r"^[-*] \S", body, re.M):
            raise Refused(f"{CHANGELOG}: the entry for {version} lists no change")
        return body
    raise Refused(f"{CHANGELOG} has no entry for {version}: move what [Unreleased] lists under "
                  f"## [{version}] - {dt.date.today().isoformat()} (scripts/release.py prepare {version})")


def check(tag: str, root: Path = ROOT) -> str:
    """The tag is vX.Y.Z, names the package's version, and the changelog has a dated entry for it."""
    match = TAG.fullmatch(tag)
    if match is None:
        raise Refused(f"{tag!r} is not a release tag (vMAJOR.MINOR.PATCH)")
    version = package_version(root)
    if match["version"] != version:
        raise Refused(f"tag {tag} does not match the package version {version} ({INIT})")
    changelog_entry(version, root)
    return version


def prepare(version: str, root: Path = ROOT, today: dt.date | None = None) -> None:
    """The release commit's edits: the version, and [Unreleased] becomes the version's entry."""
    if TAG.fullmatch(f"v{version}") is None:
        raise Refused(f"{version!r} is not MAJOR.MINOR.PATCH")
    init = root / INIT
    init.write_text(VERSION_LINE.sub(f'__version__ = "{version}"', init.read_text(encoding="utf-8"), count=1),
                    encoding="utf-8")
    path = root / CHANGELOG
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    if "## [Unreleased]" not in text:
        raise Refused(f"{CHANGELOG} has no [Unreleased] section")
    date = (today or dt.date.today()).isoformat()
    text = text.replace("## [Unreleased]", f"## [Unreleased]\n\n## [{version}] - {date}", 1)
    previous = [h["version"] for h in ENTRY.finditer(text) if h["version"] not in ("Unreleased", version)]
    links = f"[Unreleased]: {REPOSITORY}/compare/v{version}...HEAD\n"
    links += (f"[{version}]: {REPOSITORY}/compare/v{previous[0]}...v{version}\n" if previous
              else f"[{version}]: {REPOSITORY}/releases/tag/v{version}\n")
    text = re.sub(r"^\[Unreleased\]:.*\n", links, text, count=1, flags=re.M) if re.search(
        r"^\[Unreleased\]:", text, re.M) else text.rstrip("\n") + "\n\n" + links
    path.write_text(text, encoding="utf-8")
    changelog_entry(version, root)  # the entry must list something


# -- distributions -----------------------------------------------------------------------------
def absolute_links(markdown: str, ref: str) -> str:
    """README links as PyPI can follow them: repository paths and in-page anchors point at the
    tagged tree on GitHub (images at its raw files); absolute URLs stay."""
    def target(link: str, image: bool) -> str:
        if ABSOLUTE.match(link) or link.startswith("//"):
            return link
        if link.startswith("#"):
            return f"{REPOSITORY}/blob/{ref}/README.md{link}"
        path = link.removeprefix("./")
        if image:
            return f"{REPOSITORY}/raw/{ref}/{path}"
        kind = "tree" if path.endswith("/") else "blob"
        return f"{REPOSITORY}/{kind}/{ref}/{path}"

    text = INLINE_LINK.sub(lambda m: m["open"] + target(m["target"], m["open"].startswith("!")) + m["close"], markdown)
    return REFERENCE_LINK.sub(lambda m: m["open"] + target(m["target"], False), text)


def relative_links(markdown: str) -> list[str]:
    """The targets in a Markdown text that are not absolute URLs (what PyPI cannot follow)."""
    found = [m["target"] for m in INLINE_LINK.finditer(markdown)] + [m["target"] for m in REFERENCE_LINK.finditer(markdown)]
    return [t for t in found if not ABSOLUTE.match(t)]


@contextmanager
def exported(ref: str | None, root: Path = ROOT) -> Iterator[Path]:
    """The tree git has at `ref`, in a temporary directory; with no ref, the work tree's files
    that git tracks or would track (none it ignores), as they are on disk."""
    with tempfile.TemporaryDirectory(prefix="rubric-gate-release-") as tmp:
        tree = Path(tmp) / "tree"
        if ref is None:
            listed = run("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=root)
            for name in filter(None, listed.split("\0")):
                if (root / name).is_file():
                    (tree / name).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(root / name, tree / name)
        else:
            archive = Path(tmp) / "tree.tar"
            run("git", "archive", "--format=tar", "-o", str(archive), ref, cwd=root)
            with tarfile.open(archive) as tar:
                tar.extractall(tree, filter="data")
        yield tree


def check_distributions(sdist: Path, wheel: Path) -> None:
    """What PyPI shows and installs: no test file (a suite that cannot run outside the repository),
    no relative link in the long description, the same version in both."""
    with tarfile.open(sdist) as tar:
        names = tar.getnames()
        [pkg_info] = [n for n in names if n.count("/") == 1 and n.endswith("/PKG-INFO")]
        member = tar.extractfile(pkg_info)
        assert member is not None
        metadata = member.read().decode("utf-8")
    with zipfile.ZipFile(wheel) as archive:
        wheel_names = archive.namelist()
        [meta] = [n for n in wheel_names if n.endswith(".dist-info/METADATA")]
        wheel_metadata = archive.read(meta).decode("utf-8")
    tests = [n for n in [*names, *wheel_names] if re.search(r"(^|/)(tests?|benchmarks)/|(^|/)test_[^/]*\.py$", n)]
    if tests:
        raise Refused(f"the distributions ship test files that cannot run outside the repository: {tests[:5]}")
    for name, text in ((sdist.name, metadata), (wheel.name, wheel_metadata)):
        description = text.split("\n\n", 1)[1] if "\n\n" in text else ""
        relative = relative_links(description)
        if relative:
            raise Refused(f"{name}: the long description has relative links PyPI cannot follow: {relative[:5]}")
    if re.search(r"^Version: (.+)$", metadata, re.M)[1] != re.search(r"^Version: (.+)$", wheel_metadata, re.M)[1]:  # type: ignore[index]
        raise Refused("the sdist and the wheel disagree on the version")


def build(tag: str, out: Path, ref: str | None = "HEAD", root: Path = ROOT, isolation: bool = True) -> list[Path]:
    """The sdist and the wheel (built from the sdist), from git's tree at `ref` (None: the work
    tree, for the tests of uncommitted work), with the README's
    links made absolute for PyPI (pointing at `tag`); then `twine check --strict` and
    `check_distributions`."""
    out.mkdir(parents=True, exist_ok=True)
    for old in [*out.glob("*.whl"), *out.glob("*.tar.gz")]:
        old.unlink()
    with exported(ref, root) as tree:
        readme = tree / "README.md"
        readme.write_text(absolute_links(readme.read_text(encoding="utf-8"), tag), encoding="utf-8")
        run(sys.executable, "-m", "build", *([] if isolation else ["--no-isolation"]), "--outdir", str(out), str(tree),
            cwd=tree)
    [sdist], [wheel] = list(out.glob("*.tar.gz")), list(out.glob("*.whl"))
    twine = [sys.executable, "-m", "twine"]
    run(*twine, "check", "--strict", str(sdist), str(wheel))
    check_distributions(sdist, wheel)
    return [sdist, wheel]


# -- the tagged tree ---------------------------------------------------------------------------
def pin_action(text: str, image: str) -> str:
    """action.yml with `runs.image` naming the pushed image by digest instead of the Dockerfile."""
    if IMAGE.fullmatch(image) is None:
        raise Refused(f"{image!r} is not ghcr.io/OWNER/NAME@sha256:<64 hex digits> (lower case)")
    pinned, count = IMAGE_LINE.subn(lambda m: f"{m['indent']}image: docker://{image}", text)
    if count != 1:
        raise Refused(f"{ACTION}: expected one `  image: Dockerfile` line under runs, found {count}")
    return pinned


def tag_tree(tag: str, image: str, root: Path = ROOT, push: str | None = None) -> str:
    """Commit the pinned action.yml as a child of HEAD (the work tree and index untouched) and
    point `tag` and its major tag at that commit; with `push`, force-push both tags there."""
    match = TAG.fullmatch(tag)
    if match is None:
        raise Refused(f"{tag!r} is not a release tag (vMAJOR.MINOR.PATCH)")
    head = run("git", "rev-parse", "HEAD^{commit}", cwd=root).strip()
    action = run("git", "show", f"{head}:{ACTION}", cwd=root)
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=root, input=pin_action(action, image),
                          capture_output=True, text=True, check=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        run("git", "read-tree", head, cwd=root, env=env)
        run("git", "update-index", "--cacheinfo", f"100644,{blob},{ACTION}", cwd=root, env=env)
        tree = run("git", "write-tree", cwd=root, env=env).strip()
    who = {"GIT_AUTHOR_NAME": "rubric-gate release", "GIT_AUTHOR_EMAIL": "release@rubric-gate.invalid",
           "GIT_COMMITTER_NAME": "rubric-gate release", "GIT_COMMITTER_EMAIL": "release@rubric-gate.invalid"}
    message = f"Release {tag}: action.yml runs the image {image}\n\nMade by scripts/release.py tag-tree."
    commit = run("git", "commit-tree", tree, "-p", head, "-m", message, cwd=root, env=who).strip()
    major = f"v{match['major']}"
    run("git", "tag", "--force", "--annotate", "--message", f"rubric-gate {match['version']}", tag, commit,
        cwd=root, env=who)
    run("git", "tag", "--force", major, commit, cwd=root)
    if push:
        run("git", "push", "--force", push, f"refs/tags/{tag}", f"refs/tags/{major}", cwd=root)
    say(f"{tag} and {major} -> {commit[:12]}: {ACTION} runs docker://{image}")
    return commit


# -- a dry run ---------------------------------------------------------------------------------
def dry_run(image: str, version: str | None, out: Path, isolation: bool) -> None:
    """Every step the workflow runs that can run here, on a scratch clone of HEAD: the release
    commit (`prepare`), the tag check, the distributions and their checks, the tagged tree. Pushes
    nothing; the image, PyPI and the GitHub release are the workflow's."""
    with tempfile.TemporaryDirectory(prefix="rubric-gate-dry-run-") as tmp:
        clone = Path(tmp) / "clone"
        run("git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(clone))
        version = version or package_version(clone)
        tag = f"v{version}"
        try:
            check(tag, clone)
            say(f"{tag}: the version and the changelog entry are already in place")
        except Refused as why:
            say(f"{tag} would be refused as HEAD is ({why}); making the release commit first")
            prepare(version, clone)
            who = ["-c", "user.name=rubric-gate release", "-c", "user.email=release@rubric-gate.invalid"]
            run("git", *who, "commit", "--quiet", "-am", f"Release {version}", cwd=clone)
        version = check(tag, clone)
        say(f"check {tag}: package version {version}, changelog entry dated")
        dists = build(tag, out, root=clone, isolation=isolation)
        say("build: " + ", ".join(p.name for p in dists) + " (twine check --strict passed; no tests, absolute links)")
        commit = tag_tree(tag, image, root=clone)
        pinned = run("git", "show", f"{tag}:{ACTION}", cwd=clone)
        line = re.search(r"^  image: .*$", pinned, re.M)
        assert line is not None
        say(f"tag tree {tag} ({commit[:12]}): {line[0].strip()}")
        shutil.copy(clone / CHANGELOG, out / "CHANGELOG.md")
        (out / "action.yml").write_text(pinned, encoding="utf-8")
        say(f"wrote {out}/: the distributions, the tagged tree's action.yml and CHANGELOG.md")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="release.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("prepare").add_argument("version")
    sub.add_parser("check").add_argument("tag")
    sub.add_parser("notes").add_argument("version")
    b = sub.add_parser("build")
    b.add_argument("--tag", required=True)
    b.add_argument("--out", type=Path, default=Path("dist"))
    b.add_argument("--ref", default="HEAD")
    b.add_argument("--no-isolation", action="store_true", help="build with this environment's setuptools")
    t = sub.add_parser("tag-tree")
    t.add_argument("tag")
    t.add_argument("image")
    t.add_argument("--push", metavar="REMOTE")
    d = sub.add_parser("dry-run")
    d.add_argument("--image", required=True, help="ghcr.io/OWNER/NAME@sha256:... (a digest you built)")
    d.add_argument("--version", help="default: the package's version")
    d.add_argument("--out", type=Path, default=Path("dist/dry-run"))
    d.add_argument("--no-isolation", action="store_true")
    args = parser.parse_args(argv)
    try:
        if args.command == "prepare":
            prepare(args.version)
            say(f"{INIT} says {args.version}; {CHANGELOG}'s [Unreleased] is now [{args.version}]")
        elif args.command == "check":
            say(f"{args.tag}: package version {check(args.tag)}, changelog entry dated")
        elif args.command == "notes":
            print(changelog_entry(args.version))
        elif args.command == "build":
            for path in build(args.tag, args.out.resolve(), args.ref, isolation=not args.no_isolation):
                print(path)
        elif args.command == "tag-tree":
            print(tag_tree(args.tag, args.image, push=args.push))
        else:
            dry_run(args.image, args.version, args.out.resolve(), isolation=not args.no_isolation)
    except Refused as why:
        if os.environ.get("GITHUB_ACTIONS") == "true":
            print(f"::error::{why}")
        say(f"refused: {why}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
