"""The verdict cache the base branch vouches for, found by who made it: an artifact of a `push`
run on the base branch of this repository.

A pull request's run cannot tell where the cache `actions/cache` restored came from: GitHub
searches the caches saved under the PR's own scope first, and any workflow running for the PR can
save there. An artifact belongs to the run that uploaded it, and GitHub records that run's event,
branch and repository: a `push` run on the base branch of this repository ran the base branch's
own workflows, which no PR can change. The newest such run's artifact named `CACHE_ARTIFACT` is
read (through the Actions API, so the job needs `actions: read`); anything else, or any failure,
is no trusted cache (fail closed: pairs are judged live).
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Mapping
from itertools import islice
from pathlib import Path

import requests
from github import GithubException
from github.Repository import Repository

from rubric_gate.action.cache.verdict_cache import CACHE_FILE
from rubric_gate.action.commits.rest_blobs import blob_session
from rubric_gate.action.github.client import describe
from rubric_gate.errors import InputError
from rubric_gate.tuning import env_number
from rubric_gate.verdicts import VerdictStore

CACHE_ARTIFACT = "rubric-gate-verdict-cache"
RUNS_TO_TRY = 10  # the newest successful push runs on the base branch (some upload no cache)
MAX_BYTES = int(env_number("RUBRIC_GATE_MAX_CACHE_ARTIFACT_BYTES", 2 << 30, minimum=1))


def base_ref_of(env: Mapping[str, str]) -> str | None:
    """The base branch's name: `GITHUB_BASE_REF` for a pull request's run; for a merge group's
    (which GitHub gives no such variable) the payload's `merge_group.base_ref`."""
    name = env.get("GITHUB_BASE_REF", "").strip()
    if name or env.get("GITHUB_EVENT_NAME") != "merge_group":
        return name or None
    try:
        event = json.loads(Path(env.get("GITHUB_EVENT_PATH", "")).read_text(encoding="utf-8"))
        ref = event["merge_group"]["base_ref"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return ref.removeprefix("refs/heads/") if isinstance(ref, str) and ref.strip() else None


def base_branch_cache(repo: Repository, base_ref: str | None, base_tip: str) -> tuple[VerdictStore | None, str]:
    """The keyed verdicts of the newest verified cache artifact on `base_ref`, and what was read
    (or why none was: then the gate judges live what it would have read from it)."""
    if not base_ref:
        return None, "no base branch is named (GITHUB_BASE_REF), so no cache the base branch vouches for was read"
    try:
        runs = repo.get_workflow_runs(branch=base_ref, event="push", status="success")  # type: ignore[arg-type]
        for run in islice(runs, RUNS_TO_TRY):  # (PyGithub takes a branch name too, as its docstring says)
            # Checked here too: the filters are the server's, the trust is ours.
            if run.event != "push" or run.head_branch != base_ref or run.head_repository.full_name != repo.full_name:
                continue
            if not _on_base(run.head_sha, base_tip):
                continue  # e.g. a tag named like the base branch, on a commit of anyone's
            for artifact in run.get_artifacts():
                if artifact.name != CACHE_ARTIFACT or artifact.expired:
                    continue
                store = _read(repo, artifact.archive_download_url, f"{CACHE_ARTIFACT} of run {run.id}")
                return store, (f"the verdict cache of push run {run.id} on `{base_ref}` ({run.head_sha[:7]}): "
                               f"{len(store)} verdicts")
    except (GithubException, requests.RequestException, InputError) as exc:
        if isinstance(exc, GithubException):
            why = describe(exc) + ("; the job needs `actions: read`" if exc.status in (401, 403, 404) else "")
        else:
            why = getattr(exc, "message", str(exc))
        return None, f"the base branch's verdict cache could not be read ({why}), so what it holds is judged live"
    return None, f"no push run on `{base_ref}` left a `{CACHE_ARTIFACT}` artifact"


def _on_base(sha: str, base_tip: str) -> bool:
    """Whether the run ran on the base tip itself. `head_branch` names a tag as well as a branch,
    and a tag can point at any commit: an older commit of the branch too, such as a merged PR's
    intermediate commit whose workflows the PR removed later, whose artifact the base branch never vouched for. The tip's own
    workflows are the base branch's; after the branch moves, its next push run leaves the next
    artifact (until then the pairs are judged live)."""
    return sha == base_tip


def _read(repo: Repository, url: str, display: str) -> VerdictStore:
    """The artifact's verdict file (one zip member), bounded before it is inflated."""
    session = blob_session(repo.requester)
    session.headers["Accept"] = "application/vnd.github+json"
    # The API answers with a redirect to short-lived storage; requests drops the token there.
    with session.get(url, timeout=60, stream=True) as response:
        if response.status_code != 200:
            raise InputError(display, f"download answered {response.status_code}")
        raw = bytearray()
        for chunk in response.iter_content(1 << 20):
            raw += chunk
            if len(raw) > MAX_BYTES:
                raise InputError(display, f"larger than {MAX_BYTES} bytes")
    try:
        with zipfile.ZipFile(io.BytesIO(bytes(raw))) as archive:
            member = next((m for m in archive.infolist() if m.filename.rsplit("/", 1)[-1] == CACHE_FILE), None)
            if member is None:
                raise InputError(display, f"holds no {CACHE_FILE}")
            if member.file_size > MAX_BYTES:
                raise InputError(display, f"its {CACHE_FILE} is larger than {MAX_BYTES} bytes")
            data = archive.read(member)
    except zipfile.BadZipFile as exc:
        raise InputError(display, f"not a zip archive ({exc})") from None
    return VerdictStore.from_bytes(data, display).keyed_only()
