"""GitHub unreachable: one line naming the API and why, exit 2 (the run did not finish), no traceback."""

from __future__ import annotations

import socket

import pytest

from tests.action.harness import RUBRIC, Scenario, rubric_yaml


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens once it is closed


@pytest.mark.parametrize(("url", "reason", "shown"), [
    ("http://127.0.0.1:{port}", "connection refused", "http://127.0.0.1:{port}"),
])
def test_github_unreachable_is_one_line_exit_2_not_gate_failed(scenario: Scenario, url: str, reason: str,
                                                               shown: str) -> None:
    port = _closed_port()
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])})  # would fail the gate (A's unique catch)
    result = scenario.run(head, env_extra={"GITHUB_API_URL": url.format(port=port)})
    assert result.code == 2  # not 1: nothing was decided; not 3: no bug
    errors = [line for line in result.stderr.splitlines() if line.strip()]
    assert errors == [f"rubric-gate: error: GitHub API: cannot reach {shown.format(port=port)} ({reason}); the run "
                      "stopped before it finished (nothing more was posted): re-run the job once it is reachable"]
    assert "Traceback" not in result.stdout + result.stderr and "urllib3" not in result.stderr


def test_the_action_outside_actions_points_at_the_preview(scenario: Scenario) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])})
    result = scenario.run(head, env_extra={"GITHUB_EVENT_NAME": ""})
    assert result.code == 2
    assert "`rubric-gate preview --base main` shows what it would post" in result.stderr


@pytest.mark.parametrize(("text", "reason"), [
    ("HTTPSConnectionPool(host='api.github.com', port=443): Max retries exceeded with url: /x (Caused by "
     "NameResolutionError(\"HTTPSConnection(host='api.github.com', port=443): Failed to resolve 'api.github.com'\"))",
     "host name not resolved"),
    ("('Connection aborted.', RemoteDisconnected('Remote end closed connection without response'))",
     "connection closed by the server"),
])
def test_urllib3_reprs_become_a_few_words(text: str, reason: str) -> None:
    from requests.exceptions import ConnectionError, ReadTimeout, SSLError

    from rubric_gate.cli.action_cmd import _reason

    assert _reason(ConnectionError(text)) == reason
    assert _reason(ReadTimeout("read timeout=30")) == "timed out"
    assert _reason(SSLError("CERTIFICATE_VERIFY_FAILED")) == "TLS handshake failed"
