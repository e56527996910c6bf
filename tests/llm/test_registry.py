"""The provider registry: one entry per provider names its credentials and its module; the
module is imported only when a client is made; a new provider needs nothing else."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rubric_gate.action.gating.judging import has_credentials
from rubric_gate.errors import JudgeError
from rubric_gate.judges import judge_missing
from rubric_gate.llm import registry
from rubric_gate.llm.registry import PROVIDERS, Provider, secret_variables
from rubric_gate.llm.spec import parse_judge_spec
from rubric_gate.verdicts import VerdictStore
from tests.judges.conftest import make_items, make_rubric


def test_reading_the_registry_loads_no_sdk() -> None:
    code = textwrap.dedent("""
        import sys
        from rubric_gate.action.gating.judging import has_credentials, SECRET_VARIABLES
        from rubric_gate.llm.spec import parse_judge_spec
        parse_judge_spec("openai:gpt-4o"), parse_judge_spec("anthropic:claude-sonnet-4-6")
        has_credentials("openai:gpt-4o", {})
        print(sorted(m for m in ("anthropic", "openai", "httpx", "rubric_gate.llm.providers.openai") if m in sys.modules))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("name", sorted(PROVIDERS))
def test_every_entry_names_a_module_with_both_clients(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    entry = PROVIDERS[name]
    for variable in entry.credentials:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv(entry.credentials[0], "http://127.0.0.1:9/v1" if "URL" in entry.credentials[0] else "k")
    live, batch = entry.live_client("m"), entry.batch_client("m")
    assert callable(live.complete) and callable(live.aclose)
    assert batch.provider == name and batch.limits.max_requests > 0
    batch.close()


def test_missing_credentials_say_which_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(variable, raising=False)
    with pytest.raises(JudgeError) as raised:
        PROVIDERS["anthropic"].live_client("m")
    assert str(raised.value) == "anthropic judge: set the ANTHROPIC_API_KEY environment variable"
    assert secret_variables() == ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY")


PROVIDER_MODULE = '''
import json, re
from rubric_gate.llm.protocols import JudgeRequest, Reply

CHECK = re.compile(r"<check>\\n(.*?)\\n</check>", re.DOTALL)
OUTPUT = re.compile(r"<output>\\n(.*?)\\n</output>", re.DOTALL)
ASKED = []


class EchoClient:
    def __init__(self, model):
        self.model = model

    async def complete(self, request: JudgeRequest) -> Reply:
        ASKED.append(self.model)
        word = CHECK.search(request.prompt).group(1).split()[-1]
        found = word in OUTPUT.search(request.prompt).group(1)
        return Reply(json.dumps({"answer": "yes" if found else "no", "quote": ""}), 10, 2)

    async def aclose(self):
        pass


def live_client(model):
    return EchoClient(model)


def batch_client(model):
    raise NotImplementedError("no batch API")
'''


def test_a_new_provider_is_one_module_and_one_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "echo_provider.py").write_text(PROVIDER_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    entry = Provider("echo", "echo_provider", credentials=("ECHO_KEY",), secrets=("ECHO_KEY",),
                     missing_credentials="echo judge: set ECHO_KEY")
    monkeypatch.setitem(registry.PROVIDERS, "echo", entry)
    assert parse_judge_spec("echo:small").provider == "echo"
    assert not has_credentials("echo:small", {}) and has_credentials("echo:small", {"ECHO_KEY": "x"})
    assert "ECHO_KEY" in secret_variables()
    store = VerdictStore.load(tmp_path / "verdicts.jsonl", missing_ok=True)
    with pytest.raises(JudgeError, match="echo judge: set ECHO_KEY"):
        judge_missing([make_rubric()], make_items(), store, "echo:small")
    monkeypatch.setenv("ECHO_KEY", "x")
    stats = judge_missing([make_rubric()], make_items(), store, "echo:small", progress=False)
    assert (stats.calls, stats.failed) == (40, 0)
    lines = [json.loads(line) for line in (tmp_path / "verdicts.jsonl").read_text().splitlines()]
    apple_r1 = next(v for v in lines if v["item"] == "r1" and v["check"] == "k0")
    assert (len(lines), apple_r1["answer"], apple_r1["judge"]) == (40, "yes", "echo:small")
    assert sys.modules["echo_provider"].ASKED == ["small"] * 40
