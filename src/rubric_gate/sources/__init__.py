"""Reading user files: YAML with line numbers, JSONL, and `REF:PATH` through git (and appending to
JSONL files: `sources.append`)."""

from rubric_gate.sources.files import SourceText, read_source
from rubric_gate.sources.jsonl import iter_jsonl
from rubric_gate.sources.yaml_lines import LocatedYaml, load_located_yaml

__all__ = ["LocatedYaml", "SourceText", "iter_jsonl", "load_located_yaml", "read_source"]
