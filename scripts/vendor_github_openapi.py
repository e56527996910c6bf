#!/usr/bin/env python3
"""Regenerate tests/fakes/github_openapi.json: the operations of GitHub's REST description that
the action calls, from the npm package `@octokit/openapi`, so the conformance check of the fake
GitHub needs no network.

    python scripts/vendor_github_openapi.py            # npm pack @octokit/openapi@VERSION
    python scripts/vendor_github_openapi.py --from api.github.com.json

The subset keeps each listed operation's parameters and request body exactly (with every
component they reference) and each response's status code and description only: the check
validates requests, and the response schemas would pull in most of the 10 MB description.
A new call the action makes fails the check until its operation is added to OPERATIONS below
(and this script is run again): GitHub must document it first.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

PACKAGE = "@octokit/openapi"
VERSION = "23.0.2"
MEMBER = "package/generated/api.github.com.json"
TARGET = Path(__file__).resolve().parents[1] / "tests" / "fakes" / "github_openapi.json"

# (method, path) of every REST call the action makes (PyGithub's and its own).
OPERATIONS: list[tuple[str, str]] = [
    ("GET", "/user"),
    ("GET", "/repos/{owner}/{repo}"),
    ("GET", "/repos/{owner}/{repo}/actions/runs"),
    ("GET", "/repos/{owner}/{repo}/actions/runs/{run_id}/artifacts"),
    ("GET", "/repos/{owner}/{repo}/actions/artifacts/{artifact_id}/{archive_format}"),
    ("POST", "/repos/{owner}/{repo}/check-runs"),
    ("PATCH", "/repos/{owner}/{repo}/check-runs/{check_run_id}"),
    ("GET", "/repos/{owner}/{repo}/collaborators/{username}/permission"),
    ("GET", "/repos/{owner}/{repo}/commits/{ref}"),
    ("GET", "/repos/{owner}/{repo}/commits/{ref}/check-runs"),
    ("GET", "/repos/{owner}/{repo}/commits/{ref}/statuses"),
    ("GET", "/repos/{owner}/{repo}/compare/{basehead}"),
    ("GET", "/repos/{owner}/{repo}/contents/{path}"),
    ("GET", "/repos/{owner}/{repo}/git/blobs/{file_sha}"),
    ("GET", "/repos/{owner}/{repo}/git/commits/{commit_sha}"),
    ("GET", "/repos/{owner}/{repo}/git/trees/{tree_sha}"),
    ("GET", "/repos/{owner}/{repo}/issues/{issue_number}"),
    ("GET", "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
    ("POST", "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
    ("PATCH", "/repos/{owner}/{repo}/issues/comments/{comment_id}"),
    ("GET", "/repos/{owner}/{repo}/issues/{issue_number}/events"),
    ("GET", "/repos/{owner}/{repo}/issues/{issue_number}/labels"),
    ("GET", "/repos/{owner}/{repo}/pulls"),
    ("GET", "/repos/{owner}/{repo}/pulls/{pull_number}"),
    ("GET", "/repos/{owner}/{repo}/pulls/{pull_number}/comments"),
    ("POST", "/repos/{owner}/{repo}/pulls/{pull_number}/comments"),
    ("GET", "/repos/{owner}/{repo}/pulls/{pull_number}/files"),
    ("GET", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews"),
    ("PATCH", "/repos/{owner}/{repo}/pulls/comments/{comment_id}"),
    ("DELETE", "/repos/{owner}/{repo}/pulls/comments/{comment_id}"),
    ("POST", "/repos/{owner}/{repo}/statuses/{sha}"),
]


# Where the description's schema contradicts its own text, the text wins (each with the reason):
# `created` (List workflow runs) is typed `format: date-time`, but its description says it takes
# a date-time range in the search syntax (`2026-01-01T00:00:00Z..2026-01-02T00:00:00Z`), which
# is what the override rule sends.
CORRECTIONS: dict[str, dict[str, Any]] = {
    "#/components/parameters/created": {"schema": {"type": "string"}},
}


def _refs(node: Any) -> set[str]:
    if isinstance(node, dict):
        found = {node["$ref"]} if isinstance(node.get("$ref"), str) else set()
        return found.union(*(_refs(value) for value in node.values()))
    if isinstance(node, list):
        return set().union(*(_refs(value) for value in node))
    return set()


def subset(document: dict[str, Any], operations: list[tuple[str, str]]) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for method, path in operations:
        item = document["paths"].get(path, {})
        operation = item.get(method.lower())
        if operation is None:
            raise SystemExit(f"{method} {path}: not in GitHub's REST description {VERSION}")
        kept = {key: operation[key] for key in ("summary", "operationId", "externalDocs", "parameters",
                                                 "requestBody") if key in operation}
        kept["responses"] = {code: {"description": (response.get("description") or code)}
                             for code, response in operation["responses"].items()
                             if "$ref" not in response}
        if not kept["responses"]:
            kept["responses"] = {"default": {"description": "see GitHub's REST description"}}
        target = paths.setdefault(path, {key: value for key, value in item.items() if key == "parameters"})
        target[method.lower()] = kept
    components: dict[str, dict[str, Any]] = {}
    pending = _refs(paths)
    while pending:
        ref = pending.pop()
        _, kind, name = ref.removeprefix("#/").split("/", 2)
        if name in components.get(kind, {}):
            continue
        value = {**document["components"][kind][name], **CORRECTIONS.get(ref, {})}
        components.setdefault(kind, {})[name] = value
        pending |= _refs(value)
    return {
        "openapi": document["openapi"],
        "info": {**{k: document["info"][k] for k in ("title", "version")},
                 "description": f"The operations rubric-gate calls, from the npm package {PACKAGE}@{VERSION} "
                                "(generated/api.github.com.json), requests only: regenerate with "
                                "scripts/vendor_github_openapi.py."},
        "servers": document.get("servers", [{"url": "https://api.github.com"}]),
        "paths": dict(sorted(paths.items())),
        "components": {kind: dict(sorted(values.items())) for kind, values in sorted(components.items())},
    }


def _download(version: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["npm", "pack", "--silent", f"{PACKAGE}@{version}", "--pack-destination", tmp],
                       check=True, stdout=subprocess.DEVNULL)
        [tarball] = Path(tmp).glob("*.tgz")
        with tarfile.open(tarball) as archive:
            member = archive.extractfile(MEMBER)
            assert member is not None, MEMBER
            return json.load(member)  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="source", type=Path, help="a copy of generated/api.github.com.json")
    parser.add_argument("--output", type=Path, default=TARGET)
    args = parser.parse_args(argv)
    document = json.loads(args.source.read_text()) if args.source else _download(VERSION)
    text = json.dumps(subset(document, OPERATIONS), indent=1, sort_keys=False) + "\n"
    args.output.write_text(text)
    print(f"{args.output}: {len(OPERATIONS)} operations", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
