"""Action inputs, read from the environment GitHub gives a container action.

GitHub passes input `foo_bar` as `INPUT_FOO_BAR`. An input whose variable is absent (or
empty) takes its default from action.yml (`DEFAULTS`, generated from it). The inputs that say how
to judge, gate, audit and repair are read into one `service.GateRequest`, as `check`'s options are.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from rubric_gate.batch.defaults import DEFAULT_POLL_INTERVAL_S
from rubric_gate.errors import InputError
from rubric_gate.globs import split_globs
from rubric_gate.service.request import GateRequest, RequestError, check_judging
from rubric_gate.tuning import env_number

# The `default:` of each input in action.yml, where an expression (github_token's
# `${{ github.token }}`) is empty: GITHUB_TOKEN is the fallback here.
# generated:action-defaults (python scripts/render_docs.py, from action.yml)
DEFAULTS: dict[str, str] = {
    "github_token": "",
    "rubrics": "rubrics/**/*.y*ml",
    "judge": "",
    "override_label": "rubric-gate:override",
    "trust_pr_verdicts": "true",
    "fail_on": "rejected",
    "rates_rule": "false",
    "comment": "true",
    "max_judge_calls": "2000",
    "concurrency": "8",
    "output_dir": ".rubric-gate",
    "verdict_cache": "",
    "audit": "false",
    "audit_rule": "false",
    "suggest_repairs": "false",
    "samples": "1",
    "paraphrases": "0",
    "min_stability": "",
    "batch": "false",
    "batch_wait": "20",
}
# /generated:action-defaults

FAIL_ON = ("rejected", "error", "never")


@dataclass(frozen=True)
class ActionConfig:
    token: str
    rubric_globs: tuple[str, ...]
    # How to judge, gate, audit and repair: the `judge` input's judges (comma-separated: several
    # form a panel), `samples`, `paraphrases`, `min_stability`, `batch`, `batch_wait`,
    # `concurrency`, `rates_rule`, `audit`, `audit_rule`, `suggest_repairs`. Without a `judge`
    # input it awaits each rubric's own `judge` key (`GateRequest.judged_by`).
    request: GateRequest
    override_label: str
    trust_pr_verdicts: bool
    fail_on: str
    comment: bool
    max_judge_calls: int | None  # for the whole run (every rubric, judge and sample); finite by default
    output_dir: Path  # absolute, inside the workspace so later steps can read it
    cache_dir: Path  # absolute: verdicts the action judged, kept between runs by actions/cache
    event_name: str
    event_path: Path
    repository: str
    api_url: str
    workspace: Path
    output_file: Path | None
    summary_file: Path | None

    @property
    def judges(self) -> tuple[str, ...]:
        """The `judge` input's judges (none: each rubric's own `judge` key, else replay)."""
        return self.request.judges


def read_input(env: Mapping[str, str], name: str) -> str:
    value = env.get(f"INPUT_{name.upper()}", "").strip()
    return value if value else DEFAULTS[name]


def _bool(env: Mapping[str, str], name: str) -> bool:
    value = read_input(env, name).lower()
    if value in ("true", "yes", "1", "on"):
        return True
    if value in ("false", "no", "0", "off"):
        return False
    raise InputError(f"input {name}", f"expected true or false, got {value!r}")


def _int(env: Mapping[str, str], name: str, minimum: int) -> int | None:
    value = read_input(env, name)
    if not value:
        return None
    try:
        number = int(value)
    except ValueError:
        raise InputError(f"input {name}", f"expected an integer, got {value!r}") from None
    if number < minimum:
        raise InputError(f"input {name}", f"must be at least {minimum}, got {number}")
    return number


def _required(env: Mapping[str, str], name: str) -> str:
    value = env.get(name, "").strip()
    if not value:
        raise InputError(name, "not set: `rubric-gate action` runs inside GitHub Actions; on your machine, "
                         "`rubric-gate preview --base main` shows what it would post")
    return value


def _optional_path(env: Mapping[str, str], name: str) -> Path | None:
    value = env.get(name, "").strip()
    return Path(value) if value else None


def load_config(env: Mapping[str, str] | None = None) -> ActionConfig:
    env = os.environ if env is None else env
    fail_on = read_input(env, "fail_on").lower()
    if fail_on not in FAIL_ON:
        raise InputError("input fail_on", f"expected one of {', '.join(FAIL_ON)}, got {fail_on!r}")
    globs = split_globs(read_input(env, "rubrics"))  # a comma inside {yaml,yml} stays in its glob
    workspace = Path(env.get("GITHUB_WORKSPACE", "").strip() or os.getcwd())
    output_dir = Path(read_input(env, "output_dir"))
    output_dir = output_dir if output_dir.is_absolute() else workspace / output_dir
    cache_input = read_input(env, "verdict_cache")
    cache_dir = Path(cache_input) if cache_input else output_dir / "cache"
    judges = tuple(dict.fromkeys(j.strip() for j in read_input(env, "judge").split(",") if j.strip()))
    for judge in judges:
        if ":" not in judge:
            raise InputError("input judge", f"{judge!r} must look like PROVIDER:MODEL, e.g. anthropic:claude-sonnet-4-6 "
                             "(several: comma-separated)")
    samples = _int(env, "samples", 1) or 1
    paraphrases = _int(env, "paraphrases", 0) or 0
    min_stability = read_input(env, "min_stability")
    try:
        stability = float(min_stability) if min_stability else None
    except ValueError:
        raise InputError("input min_stability", f"expected a number between 0 and 1, got {min_stability!r}") from None
    batch = _bool(env, "batch")
    try:  # the gate service's rules, checked before a rubric's own `judge` key may add the judge
        check_judging(judges=len(judges), samples=samples, paraphrases=paraphrases, min_stability=stability,
                      batch=batch)
    except RequestError as exc:
        raise InputError(f"input {exc.setting}", exc.message) from None
    token = read_input(env, "github_token") or env.get("GITHUB_TOKEN", "").strip()
    override_label = read_input(env, "override_label")
    trust_pr_verdicts = _bool(env, "trust_pr_verdicts")
    rates_rule = _bool(env, "rates_rule")
    comment = _bool(env, "comment")
    max_judge_calls = _int(env, "max_judge_calls", 0)
    concurrency = _int(env, "concurrency", 1) or 8
    request = GateRequest(
        judges=judges, awaiting_judges=not judges, samples=samples, paraphrases=paraphrases,
        min_stability=stability, batch=batch, concurrency=concurrency, rates_rule=rates_rule,
        audit=_bool(env, "audit"), audit_rule=_bool(env, "audit_rule"), suggest_repairs=_bool(env, "suggest_repairs"),
        batch_wait_seconds=(_int(env, "batch_wait", 0) or 0) * 60, batch_progress=False,
        poll_interval=env_number("RUBRIC_GATE_BATCH_POLL_SECONDS", DEFAULT_POLL_INTERVAL_S, minimum=0.001))
    return ActionConfig(
        token=token,
        rubric_globs=globs,
        request=request,
        override_label=override_label,
        trust_pr_verdicts=trust_pr_verdicts,
        fail_on=fail_on,
        comment=comment,
        max_judge_calls=max_judge_calls,
        output_dir=output_dir,
        cache_dir=cache_dir if cache_dir.is_absolute() else workspace / cache_dir,
        event_name=_required(env, "GITHUB_EVENT_NAME"),
        event_path=Path(_required(env, "GITHUB_EVENT_PATH")),
        repository=_required(env, "GITHUB_REPOSITORY"),
        api_url=env.get("GITHUB_API_URL", "").strip() or "https://api.github.com",
        workspace=workspace,
        output_file=_optional_path(env, "GITHUB_OUTPUT"),
        summary_file=_optional_path(env, "GITHUB_STEP_SUMMARY"),
    )
