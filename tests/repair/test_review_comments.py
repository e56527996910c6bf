"""Repair suggestions as review comments through the real PyGithub against a local fake:
posted once, edited in place on the next push, never duplicated; others' comments untouched."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from github import Auth, Github, GithubException

from rubric_gate.repair.github_review import post_repair_suggestions
from tests.fakes.github import FakeGitHub, serve
from tests.support.values import repair_suggestion as _suggestion

REPO = "octo/rubrics"


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    fake = FakeGitHub(REPO, diff_hunks={"rubrics/r.yaml": [(8, 15), (20, 26)]}, head_sha="a" * 40)
    server = serve(fake)
    yield fake
    server.shutdown()
    server.server_close()


def _pr(fake: FakeGitHub, head_sha: str):
    """The PR after a push of `head_sha`: review comments must name the head commit."""
    fake.head_sha = head_sha
    client = Github(auth=Auth.Token("t"), base_url=fake.url, retry=None)
    return client.get_repo(REPO).get_pull(fake.pr_number)


def _comments(fake: FakeGitHub) -> list[dict]:
    return sorted(fake.review_comments.values(), key=lambda c: c["id"])


def own(comment) -> bool:
    return comment.user is not None and comment.user.login.endswith("[bot]")


def test_posted_once_then_edited_not_duplicated(github: FakeGitHub) -> None:
    forged = github.add_review_comment("<!-- rubric-gate:repair rubrics/r.yaml:fresh -->\nforged",
                                       "rubrics/r.yaml", line=11, start_line=10, login="mallory")
    first = post_repair_suggestions(_pr(github, "a" * 40), "a" * 40, [_suggestion()], own)
    assert (first.created, first.updated, first.deleted, first.failures) == (1, 0, 0, [])
    ours = [c for c in _comments(github) if c["id"] != forged["id"]]
    assert len(ours) == 1 and "```suggestion\n  - id: fresh\n" in ours[0]["body"]
    assert (ours[0]["start_line"], ours[0]["line"]) == (10, 11)

    # Next push, same suggestion: no write at all.
    again = post_repair_suggestions(_pr(github, "b" * 40), "b" * 40, [_suggestion()], own)
    assert (again.created, again.updated, again.deleted) == (0, 0, 0)
    # Next push, a different rewrite: the same comment is edited.
    changed = post_repair_suggestions(_pr(github, "c" * 40), "c" * 40, [_suggestion("The output mentions pear")], own)
    assert (changed.created, changed.updated) == (0, 1)
    assert len([c for c in _comments(github) if c["id"] != forged["id"]]) == 1
    assert "mentions pear" in ours[0]["body"]
    # The forged comment by someone else was never touched.
    assert github.review_comments[forged["id"]]["body"].endswith("forged")
    assert [w for w in github.writes() if w[1].endswith(f"/pulls/comments/{forged['id']}")] == []


def test_a_line_outside_the_diff_is_reported_not_raised(github: FakeGitHub) -> None:
    result = post_repair_suggestions(_pr(github, "a" * 40), "a" * 40, [_suggestion(start=30, end=31)], own)
    assert result.created == 0 and result.unplaced == 1 and github.writes() == []
    assert result.failures == ["'fresh' stays in this comment (lines 30-31 of rubrics/r.yaml are not inside one "
                               "diff hunk (the diff shows lines 8-15, 20-26), and GitHub places a suggestion only "
                               "inside one hunk)"]


def test_the_fake_refuses_what_github_refuses(github: FakeGitHub) -> None:
    """The same-hunk rule, through PyGithub: so a planner that ignored it would fail these tests."""
    pr = _pr(github, "a" * 40)
    cases = [((12, 22), "pull_request_review_thread.start_line must be part of the same hunk as the line."),
             ((None, 17), "pull_request_review_thread.line must be part of the diff"),
             ((11, 11), "pull_request_review_thread.start_line must precede the end line.")]
    for (start, line), message in cases:
        extra = {"start_line": start, "start_side": "RIGHT"} if start is not None else {}
        with pytest.raises(GithubException) as raised:
            pr.create_review_comment("x", "a" * 40, "rubrics/r.yaml", line=line, side="RIGHT", **extra)
        assert raised.value.status == 422 and raised.value.data["errors"][0]["message"] == message
    pr.create_review_comment("x", "a" * 40, "rubrics/r.yaml", line=24, side="RIGHT", start_line=20, start_side="RIGHT")
    assert [(c["start_line"], c["line"]) for c in _comments(github)] == [(20, 24)]


def test_a_span_across_hunks_stays_in_the_sticky_comment_and_its_old_comment_says_so(
        github: FakeGitHub) -> None:
    """The issue's case: the entry spans 11-24, the hunk holding 11 ends at 15."""
    first = post_repair_suggestions(_pr(github, "a" * 40), "a" * 40, [_suggestion(start=10, end=11)], own)
    assert first.created == 1
    moved = post_repair_suggestions(_pr(github, "b" * 40), "b" * 40, [_suggestion(start=11, end=24)], own)
    assert (moved.created, moved.updated, moved.unplaced) == (0, 1, 1)
    assert "lines 11-24 of rubrics/r.yaml are not inside one diff hunk" in moved.failures[0]
    [comment] = _comments(github)
    assert "now in the rubric-gate comment" in comment["body"] and "```suggestion" not in comment["body"]
    # Back inside one hunk: posted again as a suggestion (the note comment is replaced).
    back = post_repair_suggestions(_pr(github, "c" * 40), "c" * 40, [_suggestion(start=20, end=26)], own)
    assert (back.created, back.deleted, back.unplaced) == (1, 1, 0)
    assert [(c["start_line"], c["line"]) for c in _comments(github)] == [(20, 26)]
