"""A client that hangs up on a fake leaves nothing on stderr, the stream an in-process CLI run
captures; any other error in a fake's handler is still printed."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import pytest

from tests.fakes.server import FakeHTTPServer


def _serve(handle: type[BaseHTTPRequestHandler]) -> Iterator[FakeHTTPServer]:
    server = FakeHTTPServer(("127.0.0.1", 0), handle)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


class _HungUp(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        raise ConnectionResetError("the client went away")


class _Broken(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        raise ValueError("the fake itself is wrong")


def _ask(server: FakeHTTPServer) -> None:
    with socket.create_connection(server.server_address[:2]) as conn:  # type: ignore[arg-type]
        conn.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        conn.settimeout(5)
        with contextlib.suppress(OSError):
            conn.recv(1)  # returns once the server closed the request, after it reported any error


@pytest.mark.parametrize(("handler", "printed"), [(_HungUp, False), (_Broken, True)])
def test_only_a_fakes_own_errors_reach_stderr(
    handler: type[BaseHTTPRequestHandler], printed: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    for server in _serve(handler):
        _ask(server)
    err = capsys.readouterr().err
    assert ("Exception occurred during processing" in err) is printed
    assert ("ValueError" in err) is printed
