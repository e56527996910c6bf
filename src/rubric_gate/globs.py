"""Which repository paths are rubrics: the `rubrics` globs, matched by wcmatch everywhere.

One meaning for every caller (the PR gate, the push warm-up, the pairing of renames):
- `**/` spans any number of directories; `*`, `?` and `[...]` (`[!...]` negates) stay within one
  path segment and match dot-files too; `{yaml,yml}` expands to alternatives.
- `!pattern` excludes what it matches from what the other globs include (order does not matter;
  exclusions alone include nothing).
- Matching ignores case (RUBRIC.YAML, as on the macOS/Windows checkouts people write globs on).
- A leading `/` or `./` is the repository root; a bare folder (`rubrics`, `rubrics/`) means every
  YAML file under it.
"""

from __future__ import annotations

import functools

from wcmatch import glob

FLAGS = glob.GLOBSTAR | glob.BRACE | glob.NEGATE | glob.IGNORECASE | glob.DOTGLOB | glob.FORCEUNIX
YAML_SUFFIXES = (".yaml", ".yml")
BARE_FOLDER_FILES = "**/*.y*ml"


def split_globs(text: str) -> tuple[str, ...]:
    """An input's globs, one per line or comma-separated; a comma inside `{...}` is part of its glob."""
    found: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in text.replace("\r", "\n"):
        if ch in ",\n" and depth == 0:
            found.append("".join(current))
            current = []
            continue
        depth += (ch == "{") - (ch == "}" and depth > 0)
        current.append(ch)
    found.append("".join(current))
    return tuple(g.strip() for g in found if g.strip())


def normalize_glob(pattern: str) -> str:
    """Relative to the repository root, with a bare folder expanded; an exclusion keeps its `!`."""
    pattern = pattern.strip()
    negate = pattern.startswith("!")
    pattern = pattern[1:].strip() if negate else pattern
    while pattern.startswith(("./", "/")):
        pattern = pattern[2:] if pattern.startswith("./") else pattern[1:]
    if not any(ch in pattern for ch in "*?[{") and not pattern.lower().endswith(YAML_SUFFIXES):
        folder = pattern.rstrip("/")
        pattern = f"{folder}/{BARE_FOLDER_FILES}" if folder else BARE_FOLDER_FILES
    return "!" + pattern if negate else pattern


def is_exclusion(pattern: str) -> bool:
    return pattern.strip().startswith("!")


@functools.lru_cache(maxsize=256)
def _matcher(globs: tuple[str, ...]) -> glob.WcMatcher[str] | None:
    patterns = [normalize_glob(g) for g in globs]
    if not any(not p.startswith("!") for p in patterns):
        return None  # exclusions alone include nothing
    return glob.compile(patterns, flags=FLAGS)


@functools.lru_cache(maxsize=256)
def _exact_matcher(globs: tuple[str, ...]) -> glob.WcMatcher[str] | None:
    patterns = [normalize_glob(g) for g in globs]
    if not any(not p.startswith("!") for p in patterns):
        return None
    return glob.compile(patterns, flags=FLAGS & ~glob.IGNORECASE)


def matches_as_written(path: str, globs: tuple[str, ...]) -> bool:
    """Whether `path` matches the globs with case taken into account, as a case-sensitive system
    (the runner, the grader loading rubrics, hashFiles) reads them."""
    matcher = _exact_matcher(tuple(globs))
    return matcher is not None and matcher.match(path)


def matches_any(path: str, globs: tuple[str, ...]) -> bool:
    """Whether `path` is one of the rubrics the globs name. Called once per repository file:
    each tuple of globs is compiled once."""
    matcher = _matcher(tuple(globs))
    return matcher is not None and matcher.match(path)


def unmatched_globs(paths: list[str], globs: tuple[str, ...]) -> list[str]:
    """The including globs that match none of `paths` (a typo would otherwise turn the check
    green forever), judged with the exclusions applied."""
    exclusions = tuple(g for g in globs if is_exclusion(g))
    return [g for g in globs if not is_exclusion(g)
            and not any(matches_any(p, (g, *exclusions)) for p in paths)]
