"""Write a rubric back to YAML in the same shape people write it."""

from __future__ import annotations

from typing import Any

import yaml

from rubric_gate.rubric.model import Check, Rubric


class _Dumper(yaml.SafeDumper):
    pass


def _str_representer(dumper: yaml.SafeDumper | yaml.CSafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str_representer)

if hasattr(yaml, "CSafeDumper"):  # PyYAML built with libyaml
    class _CDumper(yaml.CSafeDumper):
        pass

    _CDumper.add_representer(str, _str_representer)
    _FAST: type | None = _CDumper
else:  # pragma: no cover - PyYAML without libyaml
    _FAST = None


def _printable_ascii(value: Any) -> bool:
    """Whether every string in `value` is printable ASCII: libyaml's emitter writes those exactly
    as PyYAML's does (it styles line separators, control and astral characters otherwise)."""
    if isinstance(value, str):
        return value.isascii() and value.isprintable()
    if isinstance(value, dict):
        return all(_printable_ascii(k) and _printable_ascii(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_printable_ascii(v) for v in value)
    return True


def _check_dict(check: Check) -> dict[str, Any]:
    data: dict[str, Any] = {"id": check.id, "text": check.text, "origin": check.origin.value}
    if check.is_frozen != (check.origin.value == "label"):
        data["frozen"] = check.is_frozen
    if check.source is not None:
        data["source"] = check.source
    return data


def _version_value(version: str) -> int | str:
    """A version written as a plain integer stays one; anything else ("1.10", "010") stays text."""
    return int(version) if version.isdigit() and str(int(version)) == version else version


def rubric_to_yaml(rubric: Rubric) -> str:
    data: dict[str, Any] = {
        "id": rubric.id,
        "version": _version_value(rubric.version),
        "task": rubric.task,
        "calibration": rubric.calibration,
        "verdicts": rubric.verdicts,
    }
    if rubric.judge is not None:
        data["judge"] = rubric.judge
    data["aggregation"] = (
        rubric.aggregation if isinstance(rubric.aggregation, str) else rubric.aggregation.model_dump()
    )
    data["checks"] = [_check_dict(c) for c in rubric.checks]
    dumper = _FAST if _FAST is not None and _printable_ascii(data) else _Dumper
    return yaml.dump(data, Dumper=dumper, sort_keys=False, allow_unicode=True, width=100)
