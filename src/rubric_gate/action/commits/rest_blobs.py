"""Stream a git blob's bytes from the GitHub REST API to a file, checked against its blob id.

The Git blobs endpoint serves any blob up to 100 MB. By default it answers JSON with the bytes
base64-encoded, which a client must hold whole (the text, its decoding, the bytes: several
times the file); with the `application/vnd.github.raw+json` media type it sends the raw bytes,
which are written out as they arrive. The bytes are hashed as git does (`blob <size>\\0` then
the content) and must give the blob id the tree listed: the spool file and the index are keyed
by that id, so a cut-short or altered transfer must never be stored under it.

PyGithub has no streamed read that keeps our media type (its `getStream` forces
`application/octet-stream`), so this sends the request itself with requests (PyGithub's own
transport), with the client's base URL and credentials.
"""

from __future__ import annotations

import hashlib
from typing import Any, BinaryIO

import requests
from github.Requester import Requester
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from rubric_gate.errors import InputError

RAW_MEDIA_TYPE = "application/vnd.github.raw+json"
CHUNK = 1 << 20
TIMEOUT = 30  # seconds, as the PyGithub client (action/github/client.py)


def blob_session(requester: Requester) -> requests.Session:
    """A session sending what the PyGithub client sends: its credentials, and retries of
    transient server errors (the last answer is returned, so its status is reported)."""
    session = requests.Session()
    retry = Retry(total=3, backoff_factor=0.5, status_forcelist=(500, 502, 503, 504),
                  allowed_methods=frozenset({"GET"}), raise_on_status=False)
    for scheme in ("http://", "https://"):
        session.mount(scheme, HTTPAdapter(max_retries=retry))
    headers: dict[str, Any] = {"Accept": RAW_MEDIA_TYPE, "User-Agent": "rubric-gate"}
    if requester.auth is not None:
        requester.auth.authentication(headers)
    session.headers.update(headers)
    return session


def git_blob_hasher(blob_id: str, size: int) -> Any:
    """A hash of `blob <size>\\0` as git starts a blob's: SHA-1, or SHA-256 for a 64-digit id."""
    hasher = hashlib.sha256() if len(blob_id) == 64 else hashlib.sha1()
    hasher.update(b"blob %d\0" % size)
    return hasher


def stream_blob(session: requests.Session, url: str, blob_id: str, size: int, display: str,
                handle: BinaryIO) -> None:
    """Write blob `blob_id` (`size` bytes, as the tree listed it) from `url` to `handle`, in
    chunks; an InputError when the API refuses, or sends other bytes or fewer."""
    hasher = git_blob_hasher(blob_id, size)
    received = 0
    try:
        with session.get(url, stream=True, timeout=TIMEOUT) as response:
            if response.status_code != 200:
                raise InputError(display, f"cannot read through the GitHub API (HTTP {response.status_code})")
            for chunk in response.iter_content(chunk_size=CHUNK):
                handle.write(chunk)
                hasher.update(chunk)
                received += len(chunk)
    except (requests.exceptions.ChunkedEncodingError, requests.exceptions.ContentDecodingError):
        raise InputError(display, f"the GitHub API cut blob {blob_id[:12]} short after {received:,} of {size:,} "
                         "bytes; re-run the job") from None
    if received != size or hasher.hexdigest() != blob_id:
        raise InputError(display, f"the GitHub API sent {received:,} bytes that are not blob {blob_id[:12]} "
                         f"({size:,} bytes); re-run the job")
