"""Requests to the fake GitHub, checked against GitHub's REST description.

The description is the subset of `api.github.com.json` from the npm package `@octokit/openapi`
that the action calls, vendored as `github_openapi.json` beside this file; running
`scripts/vendor_github_openapi.py` regenerates it (it is the only step that needs the network).
A request conforms when an operation of the description has its method and path, every query
parameter it sends is one the operation declares, and its parameters and JSON body validate
against the operation's schemas (openapi-core). The fake GitHub (`tests/fakes/github.py`) checks
every request it is sent; `tests/conftest.py` fails any test after which a request did not
conform, so a new call cannot drift from what GitHub documents.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote

DESCRIPTION = Path(__file__).with_name("github_openapi.json")
HOST = "https://api.github.com"
# Parameters whose value may hold slashes: the file path of Get repository content.
MULTI_SEGMENT = {"path"}


@dataclass(frozen=True)
class Request:
    """One request as it reached the server: the path and query undecoded."""

    method: str
    path: str
    query: str = ""
    content_type: str = ""
    body: bytes = b""

    def __str__(self) -> str:
        return f"{self.method} {self.path}" + (f"?{self.query}" if self.query else "")


class _Operation:
    def __init__(self, template: str, method: str, operation: dict[str, Any], shared: list[dict[str, Any]],
                 components: dict[str, Any]) -> None:
        self.template, self.method = template, method
        self.operation_id = operation.get("operationId", "")
        params = [_resolve(p, components) for p in [*shared, *operation.get("parameters", [])]]
        self.query = {p["name"] for p in params if p["in"] == "query"}
        pattern = re.sub(r"\{(\w+)\}", lambda m: f"(?P<{m[1]}>{'.+' if m[1] in MULTI_SEGMENT else '[^/]+'})",
                         re.escape(template).replace(r"\{", "{").replace(r"\}", "}"))
        self.regex = re.compile(pattern + "$")
        self.literal = len(re.sub(r"\{\w+\}", "", template))  # the more literal text, the more specific


def _resolve(node: dict[str, Any], components: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        _, kind, name = node["$ref"].removeprefix("#/").split("/", 2)
        node = components[kind][name]
    return node


class Description:
    """The vendored description: the operations it has and the validator of each request."""

    def __init__(self, document: dict[str, Any]) -> None:
        from openapi_core import OpenAPI  # imported here: only tests that reach the fake pay for it

        self.document = document
        components = document.get("components", {})
        self.operations = sorted(
            (_Operation(template, method.upper(), operation, item.get("parameters", []), components)
             for template, item in document["paths"].items()
             for method, operation in item.items() if method in ("get", "post", "patch", "put", "delete")),
            key=lambda op: -op.literal)
        self.openapi = OpenAPI.from_dict(document)
        self._lock = threading.Lock()

    def find(self, method: str, path: str) -> tuple[_Operation, dict[str, str]] | None:
        for op in self.operations:
            match = op.regex.match(path)
            if match and op.method == method:
                return op, {k: unquote(v) for k, v in match.groupdict().items()}
        return None

    def problems(self, request: Request) -> list[str]:
        """Why this request is not one GitHub documents (empty when it is)."""
        found = self.find(request.method, request.path)
        if found is None:
            other = sorted({op.method for op in self.operations if op.regex.match(request.path)})
            why = f"the path has {', '.join(other)} only" if other else "no operation has this path"
            return [f"{request}: {why} (if GitHub documents it, add it to scripts/vendor_github_openapi.py)"]
        op, path_params = found
        query = parse_qsl(request.query, keep_blank_values=True)
        out = [f"{request}: query parameter {name!r} is not one {op.operation_id} declares"
               for name in dict(query) if name not in op.query]
        from openapi_core.datatypes import RequestParameters
        from werkzeug.datastructures import Headers, ImmutableMultiDict

        checked = _OpenAPIRequest(request, op.template, RequestParameters(
            query=ImmutableMultiDict(query), header=Headers(), cookie=ImmutableMultiDict(), path=path_params))
        with self._lock:  # the fake serves from several threads
            try:
                self.openapi.validate_request(checked)
            except Exception as exc:  # openapi-core's validation errors
                details = "; ".join(str(e) for e in getattr(exc, "schema_errors", []) or [getattr(exc, "__cause__", None) or exc])
                out.append(f"{request}: {op.operation_id}: {exc}" + (f" ({details})" if details else ""))
        return out


class _OpenAPIRequest:
    """openapi-core's request protocol, with the path template already found."""

    host_url = HOST

    def __init__(self, request: Request, template: str, parameters: Any) -> None:
        self.path, self.path_pattern = request.path, template
        self.method = request.method.lower()
        self.parameters = parameters
        self.body = request.body or None
        self.content_type = (request.content_type or "application/json").lower()


@cache
def description() -> Description:
    return Description(json.loads(DESCRIPTION.read_text()))


_seen: dict[Request, list[str]] = {}
_nonconforming: list[str] = []
_lock = threading.Lock()


def check(request: Request) -> list[str]:
    """Check a request the fake GitHub was sent (each distinct one once) and keep what is wrong
    for `take_problems`."""
    with _lock:
        known = _seen.get(request)
    if known is None:
        known = description().problems(request)
        with _lock:
            _seen[request] = known
    if known:
        with _lock:
            _nonconforming.extend(known)
    return known


def take_problems() -> list[str]:
    """What did not conform since the last call (each problem once)."""
    with _lock:
        found = list(dict.fromkeys(_nonconforming))
        _nonconforming.clear()
    return found
