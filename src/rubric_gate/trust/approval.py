"""A reviewer's approval: when a pull request's own recorded verdicts count as evidence (pure).

The gate weighs the verdicts a PR records for check texts the base rubric does not have (and
answers recorded for such a text before any check had it) as untrusted: they may reject a
change, never excuse one. A person with write access vouches for them by approving the PR at
the head being gated, a fact GitHub itself records (the reviews API) and nothing a workflow can
write; the gate's rules are unchanged, only which evidence counts. An approval counts when:

- it is the reviewer's standing review: their latest review in a state that decides
  (APPROVED, CHANGES_REQUESTED, DISMISSED); a COMMENTED review leaves an approval standing, as
  GitHub's own review summary does, and a PENDING one is not submitted;
- it is APPROVED and its `commit_id` is the head being gated: a push makes a new head nobody
  approved (GitHub may keep showing the approval when the repository does not dismiss stale
  ones: the gate does not count it);
- its reviewer is not the PR's author (GitHub refuses those; one read back is not counted),
  and is a person: an app's review (`user.type` Bot) is not, since any workflow may approve
  as github-actions[bot] where the repository lets Actions approve pull requests;
- the reviewer has write, maintain or admin access now (the collaborator permission API);
- the whole list was read: reviews come oldest first, so a list cut short hides the latest ones
  (a writer's change request, their approval of an older head), and anyone can lengthen it with
  COMMENTED reviews. A list read only in part vouches for nothing.

The REST shapes relied on (docs.github.com/rest/pulls/reviews, "List reviews for a pull
request"; the OpenAPI `pull-request-review` schema): reviews come oldest first, each with `id`,
`user` (`login`, `type`; null for a deleted account), `state`, `commit_id` (null when the
commit is gone) and `submitted_at`; GET /repos/{owner}/{repo}/collaborators/{username}/permission
answers `permission` (admin, write, read or none; maintain reads as write there) and `role_name`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

WRITE_PERMISSIONS = ("admin", "maintain", "write")
DECIDING = ("APPROVED", "CHANGES_REQUESTED", "DISMISSED")  # a COMMENTED review leaves the last of these standing


@dataclass(frozen=True)
class Review:
    """The fields of a pull-request review the rule reads."""

    id: int
    login: str | None  # None: the account was deleted
    bot: bool  # `user.type` is Bot (an app)
    state: str  # APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED or PENDING
    commit_id: str | None


@dataclass(frozen=True)
class Approval:
    """Whether a writer's approval of this head vouches for the PR's recorded verdicts, and why:
    `text` for the comment (who approved which head, or why no approval counts)."""

    granted: bool
    text: str
    approvers: tuple[str, ...] = ()  # the writers whose approval of this head counts
    refused: bool = False  # some approval was read and did not count (or none could be read): `text` says why
    # False: this run is refused what an approval rests on (the reviews, a reviewer's permission:
    # a fork's read-only token), so none can count in it, given or not.
    verifiable: bool = True


def standing(reviews: Iterable[Review]) -> dict[str, Review]:
    """Each reviewer's standing review: their last one in a deciding state, in the order the API
    lists them (oldest first; a dismissal changes a review's state where it stands)."""
    out: dict[str, Review] = {}
    for review in reviews:
        if review.login is not None and review.state.upper() in DECIDING:
            out.pop(review.login, None)  # re-inserted last: the order reviewers last decided in
            out[review.login] = review
    return out


def candidates(reviews: Iterable[Review], head: str, author: str | None) -> tuple[list[str], list[str]]:
    """(reviewers whose standing review approves `head` and may vouch, pending their
    permission; why each other approval does not count)."""
    counted: list[str] = []
    refused: list[str] = []
    for login, review in standing(reviews).items():
        if review.state.upper() != "APPROVED":
            continue
        if review.commit_id != head:
            on = f"{review.commit_id[:7]}" if review.commit_id else "a commit that no longer exists"
            refused.append(f"@{login} approved {on}, not this head {head[:7]} (an approval covers the head it was given on)")
        elif author is not None and login.lower() == author.lower():
            refused.append(f"@{login} is the PR's author, whose own approval does not count")
        elif review.bot:
            refused.append(f"@{login} is an app, not a person with write access (any workflow may approve as one "
                           "where the repository lets Actions approve pull requests)")
        else:
            counted.append(login)
    return counted, refused


def approval(reviews: Iterable[Review], head: str, author: str | None,
             permission_of: Callable[[str], str], *, read_only: int | None = None) -> Approval:
    """Whether a writer approved `head`. `permission_of(login)` is their permission now (it may
    raise; the caller refuses the approval then). `read_only`: the list has more reviews than
    the first `read_only` given (the caller stopped reading), so no approval counts."""
    if read_only is not None:
        return Approval(False, f"this PR has more than {read_only} reviews and only the first {read_only} were read "
                        "(oldest first): a later one may withdraw an approval, so none counts", refused=True)
    counted, refused = candidates(list(reviews), head, author)
    writers = []
    for login in counted:
        permission = permission_of(login)
        if permission in WRITE_PERMISSIONS:
            writers.append((login, permission))
        else:
            has = f"{permission} access" if permission and permission != "none" else "no access"
            refused.append(f"@{login} approved this head but has {has} (write is required)")
    if writers:
        shown = ", ".join(f"@{login} ({permission} access)" for login, permission in writers)
        return Approval(True, f"approved at this head {head[:7]} by {shown}", tuple(login for login, _ in writers))
    if refused:
        return Approval(False, "no approval counts: " + "; ".join(refused), refused=True)
    return Approval(False, f"no one with write access has approved this head {head[:7]}")
