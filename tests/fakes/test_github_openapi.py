"""Every request the fake GitHub is sent is checked against GitHub's REST description (the vendored
subset of `@octokit/openapi`): the check finds what the description does not document, the
vendored subset is the one the regeneration script makes, and the action's statuses read is the
documented one."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from github import GithubException
from github.Repository import Repository

from rubric_gate.action.github import checks
from rubric_gate.action.github.client import connect
from tests.fakes import github_openapi
from tests.fakes.github import FakeGitHub, serve
from tests.fakes.github_openapi import Request, description

ROOT = Path(__file__).resolve().parents[2]
SHA = "a" * 40


def _script() -> object:
    import importlib.util

    spec = importlib.util.spec_from_file_location("vendor_github_openapi", ROOT / "scripts" / "vendor_github_openapi.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_vendored_subset_holds_exactly_the_scripts_operations_and_is_valid_openapi() -> None:
    from openapi_spec_validator import validate

    document = json.loads(github_openapi.DESCRIPTION.read_text())
    validate(document)
    vendored = {(method.upper(), path) for path, item in document["paths"].items() for method in item
                if method != "parameters"}
    script = _script()
    assert vendored == set(script.OPERATIONS)  # type: ignore[attr-defined]
    assert script.VERSION in document["info"]["description"]  # type: ignore[attr-defined]
    # Regenerating from the subset itself (a description holding every listed operation) is a fixed point.
    assert script.subset(document, script.OPERATIONS) == document  # type: ignore[attr-defined]


@pytest.mark.parametrize(("request_", "why"), [
    (Request("GET", f"/repos/o/r/statuses/{SHA}"), "the path has POST only"),
    (Request("GET", "/repos/o/r/pulls/7/requested_reviewers"), "no operation has this path"),
    (Request("GET", "/repos/o/r/pulls/7/files", "per_page=100&sort=asc"), "query parameter 'sort'"),
    (Request("GET", "/repos/o/r/pulls/7/files", "per_page=all"), "per_page"),
    (Request("POST", "/repos/o/r/check-runs", content_type="application/json",
             body=json.dumps({"name": "rubric-gate"}).encode()), "head_sha"),
    (Request("POST", f"/repos/o/r/statuses/{SHA}", content_type="application/json",
             body=json.dumps({"state": "green"}).encode()), "state"),
])
def test_the_check_finds_what_github_does_not_document(request_: Request, why: str) -> None:
    problems = description().problems(request_)
    assert problems and why in "\n".join(problems), problems


@pytest.mark.parametrize("request_", [
    Request("GET", f"/repos/o/r/commits/{SHA}/statuses", "per_page=100"),
    Request("GET", "/repos/o/r/contents/rubrics/nested/a.yaml", f"ref={SHA}"),  # a path with slashes
    Request("GET", f"/repos/o/r/compare/{SHA}...{'b' * 40}"),
    Request("GET", "/repos/o/r/actions/runs",
            "event=pull_request&created=2026-01-01T00%3A00%3A00Z..2026-01-02T00%3A00%3A00Z&per_page=100"),
    Request("POST", f"/repos/o/r/statuses/{SHA}", content_type="application/json",
            body=json.dumps({"state": "success", "context": "rubric-gate", "description": "ok"}).encode()),
])
def test_documented_requests_pass(request_: Request) -> None:
    assert description().problems(request_) == []


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    fake = FakeGitHub("acme/rubrics")
    server = serve(fake)
    yield fake
    server.shutdown()
    server.server_close()


def _repo(fake: FakeGitHub) -> Repository:
    return connect("workflow-token", fake.url, fake.repo)


def test_the_statuses_read_is_the_documented_list_for_a_reference(fake: FakeGitHub) -> None:
    fake.statuses.append({"sha": SHA, "id": 1, "state": "success", "context": checks.CHECK_NAME,
                          "description": f"PASS · base {'b' * 40}",
                          "creator": {"login": "github-actions[bot]", "type": "Bot"}})
    result = checks.latest_result(_repo(fake), SHA)
    assert result is not None and result.passed and result.base_sha == "b" * 40
    assert ("GET", f"/repos/acme/rubrics/commits/{SHA}/statuses") in fake.requests
    assert ("GET", f"/repos/acme/rubrics/statuses/{SHA}") not in fake.requests
    assert github_openapi.take_problems() == []


def test_a_request_the_description_lacks_fails_the_test_that_sent_it(fake: FakeGitHub) -> None:
    """What the autouse fixture in tests/conftest.py sees: PyGithub's own statuses read."""
    commit = _repo(fake).get_commit(SHA)
    with pytest.raises(GithubException) as refused:  # the fake, like the description, has no GET there
        list(commit.get_statuses())
    assert refused.value.status == 404
    problems = github_openapi.take_problems()
    assert any(f"GET /repos/acme/rubrics/statuses/{SHA}" in p and "POST only" in p for p in problems), problems


def test_the_check_is_safe_from_the_fakes_threads() -> None:
    requests = [Request("GET", f"/repos/o/r/pulls/{n}/files", "per_page=100") for n in range(40)]
    found: list[list[str]] = []
    threads = [threading.Thread(target=lambda r=r: found.append(github_openapi.check(r))) for r in requests]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert found == [[]] * len(requests) and github_openapi.take_problems() == []
