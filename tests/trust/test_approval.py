"""The approval rule, as a pure function: which reviews vouch for a PR's recorded verdicts."""

from __future__ import annotations

import pytest

from rubric_gate.trust.approval import Review, approval, candidates, standing

H, H0 = "c" * 40, "d" * 40
PERMISSIONS = {"maintainer": "write", "admin": "admin", "reader": "read", "author": "write", "bot[bot]": "write"}


def _r(login: str | None, state: str, commit: str | None = H, rid: int = 0, bot: bool = False) -> Review:
    return Review(rid, login, bot, state, commit)


def _granted(reviews: list[Review], author: str = "author") -> tuple[bool, tuple[str, ...]]:
    result = approval(reviews, H, author, lambda login: PERMISSIONS.get(login, "none"))
    return result.granted, result.approvers


@pytest.mark.parametrize(("reviews", "granted"), [
    ([], (False, ())),
    ([_r("maintainer", "APPROVED")], (True, ("maintainer",))),
    ([_r("admin", "APPROVED")], (True, ("admin",))),
    ([_r("maintainer", "APPROVED", H0)], (False, ())),  # an older head: a push made a head nobody approved
    ([_r("maintainer", "APPROVED", None)], (False, ())),  # the commit is gone
    ([_r("maintainer", "DISMISSED")], (False, ())),  # dismissed: the state changes where the review stands
    ([_r("maintainer", "APPROVED"), _r("maintainer", "CHANGES_REQUESTED")], (False, ())),  # superseded
    ([_r("maintainer", "APPROVED"), _r("maintainer", "COMMENTED")], (True, ("maintainer",))),  # a comment does not
    ([_r("maintainer", "CHANGES_REQUESTED"), _r("maintainer", "APPROVED")], (True, ("maintainer",))),
    ([_r("maintainer", "APPROVED", H0), _r("maintainer", "APPROVED")], (True, ("maintainer",))),  # approved again
    ([_r("maintainer", "APPROVED"), _r("maintainer", "APPROVED", H0)], (False, ())),  # last approved an older head
    ([_r("maintainer", "APPROVED"), _r("maintainer", "PENDING")], (True, ("maintainer",))),  # not submitted
    ([_r("maintainer", "PENDING")], (False, ())),
    ([_r("reader", "APPROVED")], (False, ())),  # read access vouches for nothing
    ([_r("stranger", "APPROVED")], (False, ())),  # no access at all
    ([_r("author", "APPROVED")], (False, ())),  # the author's own, even with write access
    ([_r("Author", "APPROVED")], (False, ())),  # logins compare without case, as GitHub's do
    ([_r("bot[bot]", "APPROVED", bot=True)], (False, ())),  # an app is not a person vouching
    ([_r(None, "APPROVED")], (False, ())),  # a deleted account
    ([_r("reader", "APPROVED"), _r("maintainer", "approved")], (True, ("maintainer",))),
    ([_r("maintainer", "APPROVED"), _r("admin", "CHANGES_REQUESTED")], (True, ("maintainer",))),
])
def test_approval(reviews: list[Review], granted: tuple[bool, tuple[str, ...]]) -> None:
    assert _granted(reviews) == granted


def test_each_refusal_says_why() -> None:
    reviews = [_r("maintainer", "APPROVED", H0), _r("reader", "APPROVED"), _r("author", "APPROVED"),
               _r("bot[bot]", "APPROVED", bot=True)]
    result = approval(reviews, H, "author", lambda login: PERMISSIONS.get(login, "none"))
    assert not result.granted
    assert f"@maintainer approved {H0[:7]}, not this head {H[:7]}" in result.text
    assert "@reader approved this head but has read access (write is required)" in result.text
    assert "@author is the PR's author" in result.text and "@bot[bot] is an app" in result.text
    assert approval([], H, "author", PERMISSIONS.__getitem__).text == f"no one with write access has approved this head {H[:7]}"
    granted = approval([_r("maintainer", "APPROVED")], H, "author", PERMISSIONS.__getitem__)
    assert granted.text == f"approved at this head {H[:7]} by @maintainer (write access)"


def test_permission_is_asked_only_of_reviewers_who_approved_this_head() -> None:
    asked: list[str] = []
    reviews = [_r("maintainer", "APPROVED", H0), _r("admin", "COMMENTED"), _r("reader", "APPROVED")]
    approval(reviews, H, "author", lambda login: asked.append(login) or PERMISSIONS[login])
    assert asked == ["reader"]


def test_standing_keeps_each_reviewers_last_deciding_review() -> None:
    reviews = [_r("a", "APPROVED", rid=1), _r("b", "APPROVED", rid=2), _r("a", "COMMENTED", rid=3),
               _r("a", "DISMISSED", rid=4), _r("b", "COMMENTED", rid=5)]
    assert {login: r.id for login, r in standing(reviews).items()} == {"a": 4, "b": 2}
    assert candidates(reviews, H, None) == (["b"], [])


def test_a_reviews_list_read_only_in_part_vouches_for_nothing() -> None:
    """Reviews come oldest first: a list cut short hides the latest (a writer's change request),
    and anyone can lengthen it with comments. No approval counts, whatever the part read says."""
    asked: list[str] = []
    result = approval([_r("maintainer", "APPROVED")], H, "author", lambda login: asked.append(login) or "write",
                      read_only=3000)
    assert not result.granted and result.refused and asked == []
    assert "more than 3000 reviews and only the first 3000 were read" in result.text
