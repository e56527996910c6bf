"""Shared test setup: each test's kind (unit, integration, e2e: tests/README.md), the opt-in
`live` marker for tests that call real provider APIs, the fixtures many packages' tests use, and
`--cpu-durations` (where the suite's CPU time goes)."""

from __future__ import annotations

import resource
import socket
import subprocess
from collections.abc import Iterator

import pytest

from tests.support.kinds import give_kinds

CPU_SECONDS = pytest.StashKey[dict[str, float]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--live", action="store_true", default=False,
                     help="run tests marked `live` (they call real provider APIs and need API keys)")
    parser.addoption("--cpu-durations", type=int, default=None, metavar="N",
                     help="list the N tests that used the most CPU time: this process (its threads, such as "
                          "the fakes' servers) and the child processes it waited for (git, the CLI)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    problems = give_kinds(items)
    if problems:
        raise pytest.UsageError("every test has exactly one kind (tests/README.md): " + "; ".join(problems))
    if config.getoption("--live"):
        return
    skip_live = pytest.mark.skip(reason="live API test: pass --live (and set API keys) to run")
    for item in items:
        if "live" in item.keywords:
            item.add_marker(skip_live)


def _cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> object:
    if item.config.getoption("--cpu-durations") is None:
        return (yield)
    started = _cpu_seconds()
    try:
        return (yield)
    finally:
        item.config.stash.setdefault(CPU_SECONDS, {})[item.nodeid] = _cpu_seconds() - started


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    count = config.getoption("--cpu-durations")
    seconds = config.stash.get(CPU_SECONDS, {})
    if count is None or not seconds:
        return
    terminalreporter.write_sep("=", f"CPU seconds per test (setup, call, teardown): {count} most of {len(seconds)}")
    for nodeid, spent in sorted(seconds.items(), key=lambda kv: -kv[1])[:count]:
        terminalreporter.write_line(f"{spent:8.2f}s  {nodeid}")
    terminalreporter.write_line(f"{sum(seconds.values()):8.2f}s  in all")


@pytest.fixture(autouse=True)
def _unit_tests_stay_in_process(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A unit test starts no process and opens no socket (not even to a local fake): one that does
    is an integration test."""
    if request.node.get_closest_marker("unit") is None:
        return

    def refuse(what: str) -> object:
        def refused(*args: object, **kwargs: object) -> None:
            raise AssertionError(f"a unit test {what}: mark it integration or e2e (tests/README.md)")
        return refused

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse("starts a process"))
    monkeypatch.setattr(socket.socket, "connect", refuse("opens a connection"))
    monkeypatch.setattr(socket.socket, "bind", refuse("serves on a socket"))


@pytest.fixture(autouse=True)
def _github_requests_conform() -> Iterator[None]:
    """Every request a test's code sends the fake GitHub is one GitHub's REST description
    documents (tests/fakes/github_openapi.py checks each as the fake receives it)."""
    from tests.fakes import github_openapi

    github_openapi.take_problems()
    yield
    problems = github_openapi.take_problems()
    assert not problems, "requests GitHub's REST description does not document:\n" + "\n".join(problems)


@pytest.fixture(autouse=True)
def _verdict_index_in_tmp(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Verdict indexes go to a per-session temp dir, never the user's cache."""
    monkeypatch.setenv("RUBRIC_GATE_INDEX_DIR", str(tmp_path_factory.getbasetemp() / "verdict-index"))


# Shared by many packages' tests; a directory's conftest may define its own of the same name.
from tests.support.git_repo import repo  # noqa: E402, F401  (a committed demo rubric in a git repository)
from tests.support.project import project  # noqa: E402, F401  (the paper's four-check example as files)
