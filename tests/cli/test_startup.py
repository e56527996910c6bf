"""Start-up: `--version` and `--help` load no heavy library, the command table stays in step
with the commands, and Ctrl-C at any moment prints one line and exits 130 (no traceback)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import click
import pytest

from rubric_gate.cli.main import COMMAND_MODULES, cli

# Libraries that `--version` and `--help` must not import (each costs tens of milliseconds or
# more, and a command that does not use one must not pay for it).
HEAVY = ("numpy", "pydantic", "jinja2", "rich", "yaml", "orjson", "anthropic", "openai", "github",
         "httpx", "asyncio", "sqlite3", "krippendorff", "rubric_gate.verdicts", "rubric_gate.scoring")

def loaded_after(*argv: str) -> tuple[int, list[str]]:
    code = (
        "import io, sys, contextlib\n"
        "from rubric_gate.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    code = main({list(argv)!r})\n"
        f"heavy = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "print(code, ','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    status, _, heavy = out.stdout.strip().partition(" ")
    return int(status), [m for m in heavy.split(",") if m]


@pytest.mark.parametrize("argv", [("--version",), ("--help",), ("-h",)])
def test_version_and_help_import_no_heavy_library(argv: tuple[str, ...]) -> None:
    assert loaded_after(*argv) == (0, [])


def test_the_probe_sees_a_heavy_import() -> None:
    # `check --help` builds the check command, whose module imports the pipeline: the probe
    # must report that, or the test above could never fail.
    status, heavy = loaded_after("check", "--help")
    assert status == 0 and "rubric_gate.scoring" in heavy and "numpy" in heavy


BLAS_THREADS = (
    "import atexit, os, sys\n"
    "atexit.register(lambda: sys.stderr.write('THREADS ' + str(os.environ.get('OPENBLAS_NUM_THREADS'))))\n"
    "from rubric_gate.cli.main import run\n"
    "sys.argv = ['rubric-gate', *sys.argv[1:]]\n"
    "run()\n"
)


@pytest.mark.parametrize(("command", "preset", "threads"), [
    ("check", None, "1"),  # no matrix product: one OpenBLAS thread, none spinning beside it
    ("check", "4", "4"),  # the user's setting stands
    ("discover", None, "None"),  # scikit-learn's products: OpenBLAS's own default
    ("audit", None, "None"),  # --preference-fit fits a scikit-learn model
])
def test_openblas_threads_as_the_command_multiplies_matrices(command: str, preset: str | None, threads: str) -> None:
    env = {key: value for key, value in os.environ.items() if key != "OPENBLAS_NUM_THREADS"}
    if preset is not None:
        env["OPENBLAS_NUM_THREADS"] = preset
    out = subprocess.run([sys.executable, "-c", BLAS_THREADS, command, "--help"], capture_output=True, text=True,
                         env=env, check=True)
    assert out.stderr.rpartition("THREADS ")[2] == threads


def test_command_table_summaries_match_the_commands() -> None:
    assert [name for name, _, _ in COMMAND_MODULES] == cli.list_commands(None)
    for name, target, summary in COMMAND_MODULES:
        command = cli.get_command(None, name)
        assert isinstance(command, click.Command), target
        assert command.name == name
        assert command.get_short_help_str(10**6) == summary, f"update the summary of {name!r} in cli/main.py"


def test_help_lists_every_command_with_its_summary() -> None:
    out = subprocess.run([sys.executable, "-m", "rubric_gate", "--help"], capture_output=True, text=True,
                         check=True, env={**os.environ, "COLUMNS": "200"})
    for name, _, _ in COMMAND_MODULES:
        assert f"  {name} " in out.stdout


def test_unknown_command_is_a_usage_error() -> None:
    out = subprocess.run([sys.executable, "-m", "rubric_gate", "no-such-command"], capture_output=True, text=True)
    assert out.returncode == 2 and "No such command" in out.stderr and "Traceback" not in out.stderr


STARTUP_INTERRUPT = (
    "import sys\n"
    "from rubric_gate.cli.main import run\n"  # what the console script does first
    "sys.argv = ['rubric-gate', 'check', '--help']\n"
    "try:\n"
    "    sys.stderr.write('ready\\n'); sys.stderr.flush()\n"
    "except KeyboardInterrupt:\n"
    "    sys.exit(99)\n"  # the signal beat the entry point: the test tries again
    "run()\n"
)


def interrupted_start_up(delay: float) -> subprocess.CompletedProcess[str]:
    """`rubric-gate check --help`, sent SIGINT `delay` seconds after its entry point took over."""
    for _ in range(10):
        proc = subprocess.Popen([sys.executable, "-c", STARTUP_INTERRUPT], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        assert proc.stderr is not None and proc.stderr.readline() == "ready\n"
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
        if proc.returncode != 99:
            return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    raise AssertionError("the signal always arrived before the entry point ran")


@pytest.mark.parametrize("delay", [0.002, 0.01, 0.03, 0.06, 0.1, 0.2])
def test_ctrl_c_during_start_up_prints_one_line(delay: float) -> None:
    # `check --help` imports the whole check stack: the signal lands somewhere in those imports
    # (or, on a fast machine, after the help was printed: then exit 0 and no message). Before the
    # entry point runs, the interpreter's own start-up is Python's (its default handler).
    result = interrupted_start_up(delay)
    assert "Traceback" not in result.stderr, result.stderr
    if result.returncode == 0:
        assert result.stderr == ""
        assert "Usage: rubric-gate check" in result.stdout
    else:
        # (click ends the terminal's `^C` line first when the signal reaches it)
        assert (result.returncode, result.stderr.lstrip("\n")) == (130, "rubric-gate: interrupted\n")


def test_ctrl_c_early_in_start_up_is_caught() -> None:
    # 2 ms in, the signal arrives long before the help is printed: the one-line path runs.
    result = interrupted_start_up(0.002)
    assert (result.returncode, result.stderr, result.stdout) == (130, "rubric-gate: interrupted\n", "")


# The signal sent from inside pydantic, at a chosen point of `check --help`'s start-up: `native`,
# the first Python code pydantic-core's Rust calls (pydantic 2.10 runs its self-schema so, and a
# KeyboardInterrupt there was a Rust panic), or `construction`, the first model being built.
INSIDE_PYDANTIC = (
    "import os, signal, sys\n"
    "from rubric_gate.cli.main import run\n"
    "sys.argv = ['rubric-gate', 'check', '--help']\n"
    "window, report = os.environ['WINDOW'], os.environ['WINDOW_REPORT']\n"
    "native = []\n"  # pydantic-core's functions on the stack
    "def hook(frame, event, arg):\n"
    "    if event == 'c_call' and (getattr(arg, '__module__', None) or '').startswith('pydantic_core'):\n"
    "        native.append(arg)\n"
    "    elif event in ('c_return', 'c_exception') and native and native[-1] is arg:\n"
    "        native.pop()\n"
    "    elif event == 'call' and (native if window == 'native' else frame.f_code.co_name != '<module>' and\n"
    "                              frame.f_globals.get('__name__') == 'pydantic._internal._model_construction'):\n"
    "        sys.setprofile(None)\n"
    "        with open(report, 'w') as f:\n"
    "            f.write(f'{frame.f_code.co_filename}:{frame.f_code.co_name}')\n"
    "        os.kill(os.getpid(), signal.SIGINT)\n"
    "sys.setprofile(hook)\n"
    "run()\n"
)


def _pydantic_version() -> tuple[int, ...]:
    import pydantic

    return tuple(int(part) for part in pydantic.VERSION.split(".")[:2])


@pytest.mark.parametrize("window", ["native", "construction"])
def test_ctrl_c_inside_pydantic_prints_one_line(window: str, tmp_path: Path) -> None:
    if window == "native" and _pydantic_version() >= (2, 11):
        pytest.skip("pydantic 2.11 and later build no self-schema: their core calls no Python code in this start-up")
    report = tmp_path / "window"
    result = subprocess.run([sys.executable, "-c", INSIDE_PYDANTIC], capture_output=True, text=True, timeout=120,
                            env={**os.environ, "WINDOW": window, "WINDOW_REPORT": str(report)})
    assert report.exists(), "the signal was never sent: the start-up did not reach the window"
    # (click ends the terminal's `^C` line first when the signal reaches it)
    assert (result.returncode, result.stderr.lstrip("\n"), result.stdout) == (130, "rubric-gate: interrupted\n", ""), \
        report.read_text()


# A library that turns the KeyboardInterrupt into another BaseException (as pyo3 turns a Rust
# panic into `pyo3_runtime.PanicException`) while the command runs.
INTERRUPT_BECOMES_PANIC = (
    "import os, signal, sys\n"
    "import rubric_gate.cli.main as entry\n"
    "class PanicException(BaseException): pass\n"
    "def command(argv=None):\n"
    "    try:\n"
    "        if os.environ['INTERRUPT'] == '1':\n"
    "            os.kill(os.getpid(), signal.SIGINT)\n"
    "        signal.pthread_sigmask(signal.SIG_BLOCK, [])\n"  # a call for the handler to run before
    "    except KeyboardInterrupt:\n"
    "        pass\n"
    "    raise PanicException('Error building schema validator')\n"
    "entry.main = command\n"
    "entry.run()\n"
)


@pytest.mark.parametrize("interrupted", [True, False])
def test_any_base_exception_after_ctrl_c_prints_one_line(interrupted: bool) -> None:
    result = subprocess.run([sys.executable, "-c", INTERRUPT_BECOMES_PANIC], capture_output=True, text=True,
                            timeout=120, env={**os.environ, "INTERRUPT": str(int(interrupted))})
    if interrupted:
        assert (result.returncode, result.stderr) == (130, "rubric-gate: interrupted\n")
    else:  # not after a Ctrl-C: a bug, and Python reports it as one
        assert result.returncode == 1 and "PanicException: Error building schema validator" in result.stderr


def test_ctrl_c_during_a_run_prints_one_line(tmp_path: Path) -> None:
    # A live judge that never answers keeps `check` in its run until the signal arrives.
    import socket

    from tests.support.project import write_example

    project = write_example(tmp_path)
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)  # accepts connections and never answers
    port = server.getsockname()[1]
    env = {**os.environ, "OPENAI_API_KEY": "test", "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1"}
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "rubric_gate", "check", "--base", "rubrics/demo.yaml", "--head",
             "rubrics/demo.yaml", "--root", ".", "--judge", "openai:gpt-4o-mini", "--verdicts",
             str(tmp_path / "new-verdicts.jsonl")],
            cwd=project.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        deadline = time.monotonic() + 240  # a loaded machine may take long to start the judging stack
        server.settimeout(0.2)
        connected = None
        while connected is None and time.monotonic() < deadline and proc.poll() is None:
            try:
                connected, _ = server.accept()  # the run is under way: its first judge call is waiting
            except TimeoutError:
                continue
        if connected is None:
            proc.kill()
            raise AssertionError(f"the run never called the judge: {proc.communicate(timeout=60)}")
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
        connected.close()
    finally:
        server.close()
    assert "Traceback" not in stderr, stderr
    assert proc.returncode == 130
    assert stderr.strip().splitlines()[-1] == "rubric-gate: interrupted"
