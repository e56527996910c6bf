"""The HTTP server every fake runs on: a client that hangs up is the client's business.

A real client abandons calls (an early stop, a timeout, a cancelled batch): writing the reply then
fails with a broken pipe or a reset. `socketserver`'s default `handle_error` prints a traceback to
`sys.stderr`, which is the very stream an in-process CLI run captures, so a test reading the
command's stderr would read the fake's noise. Connection errors are dropped; any other handler
error is still printed."""

from __future__ import annotations

import sys
from http.server import ThreadingHTTPServer
from typing import Any


class FakeHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):  # the client hung up: not the fake's error
            return
        super().handle_error(request, client_address)
