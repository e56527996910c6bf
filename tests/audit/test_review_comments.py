"""Repair suggestions as review comments through the real PyGithub against a local fake:
posted once, edited in place on the next push, never duplicated; others' comments untouched."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from github import Auth, Github

from rubric_gate.repair.github_review import post_repair_suggestions
from tests.audit.fake_review_github import REPO, FakeReviewGitHub
from tests.audit.test_units import _suggestion


@pytest.fixture
def github() -> Iterator[FakeReviewGitHub]:
    fake = FakeReviewGitHub(diff_lines={"rubrics/r.yaml": set(range(8, 16))})
    server = fake.start()
    yield fake
    server.shutdown()
    server.server_close()


def _pr(fake: FakeReviewGitHub):
    client = Github(auth=Auth.Token("t"), base_url=fake.url, retry=None)
    return client.get_repo(REPO).get_pull(1)


def own(comment) -> bool:
    return comment.user is not None and comment.user.login.endswith("[bot]")


def test_posted_once_then_edited_not_duplicated(github: FakeReviewGitHub) -> None:
    github.comments.append({"id": 5, "body": "<!-- rubric-gate:repair rubrics/r.yaml:fresh -->\nforged",
                            "path": "rubrics/r.yaml", "line": 11, "start_line": 10, "user": {"login": "mallory"}})
    first = post_repair_suggestions(_pr(github), "a" * 40, [_suggestion()], own)
    assert (first.created, first.updated, first.deleted, first.failures) == (1, 0, 0, [])
    ours = [c for c in github.comments if c["id"] != 5]
    assert len(ours) == 1 and "```suggestion\n  - id: fresh\n" in ours[0]["body"]
    assert (ours[0]["start_line"], ours[0]["line"]) == (10, 11)

    # Next push, same suggestion: no write at all.
    again = post_repair_suggestions(_pr(github), "b" * 40, [_suggestion()], own)
    assert (again.created, again.updated, again.deleted) == (0, 0, 0)
    # Next push, a different rewrite: the same comment is edited.
    changed = post_repair_suggestions(_pr(github), "c" * 40, [_suggestion("The output mentions pear")], own)
    assert (changed.created, changed.updated) == (0, 1)
    assert len([c for c in github.comments if c["id"] != 5]) == 1
    assert "mentions pear" in ours[0]["body"]
    # The forged comment by someone else was never touched.
    assert github.comments[0]["body"].endswith("forged") and ("edit", 5) not in github.writes


def test_a_line_outside_the_diff_is_reported_not_raised(github: FakeReviewGitHub) -> None:
    result = post_repair_suggestions(_pr(github), "a" * 40, [_suggestion(start=30, end=31)], own)
    assert result.created == 0 and "HTTP 422" in result.failures[0]
