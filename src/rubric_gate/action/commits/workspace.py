"""Where the action may write: inside the workspace, never over a file the repository tracks."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from rubric_gate.action.github.outputs import command
from rubric_gate.errors import InputError


def _inside(path: Path, workspace: Path) -> Path | None:
    try:
        return path.resolve().relative_to(workspace.resolve())
    except ValueError:
        return None


def tracked_under(workspace: Path, relative: Path) -> list[str]:
    """Files git tracks under `relative` in the checkout (empty when it is not a git checkout)."""
    proc = subprocess.run(["git", "ls-files", "-z", "--", str(relative) if str(relative) != "." else "."],
                          cwd=workspace, capture_output=True, check=False)
    if proc.returncode != 0:
        return []
    return [p for p in proc.stdout.decode("utf-8", "replace").split("\0") if p]


# What the action writes into `output_dir` (and removes there first).
OUTPUT_NAMES = ("report.json", "report.html", "comment.md", "pr.json", "verdicts")


def check_output_dir(output_dir: Path, workspace: Path, cache_dir: Path) -> None:
    """`output_dir` and the verdict cache must lie inside the workspace (later steps upload and
    cache them from there) and hold no tracked file: the action deletes and rewrites files there,
    and a committed file there could pass for the action's own output or cached verdicts."""
    check_output_location(output_dir, workspace, cache_dir)
    check_untracked(output_dir, workspace, cache_dir)


def check_output_location(output_dir: Path, workspace: Path, cache_dir: Path) -> None:
    """Inside the workspace, not its root, and the cache apart from what the action rewrites."""
    for name, path in (("output_dir", output_dir), ("verdict_cache", cache_dir)):
        inside = _inside(path, workspace)
        if inside is None:
            raise InputError(f"input {name} ({path})", "must be a directory inside the workspace")
        if inside == Path("."):
            raise InputError(f"input {name}", "must be a directory of its own, not the workspace root")
        if inside.parts[0] == ".git":  # git's own files: the action removes and rewrites what is there
            raise InputError(f"input {name} ({inside})", "is inside .git: choose a directory of its own")
    cache, output = cache_dir.resolve(), output_dir.resolve()
    for name in ("", *OUTPUT_NAMES):
        target = output / name if name else output
        if cache == target or (name and target in cache.parents):
            what = f"the action's output `{name}` in output_dir" if name else "output_dir itself"
            raise InputError(f"input verdict_cache ({cache_dir})", f"is {what}, which every run removes "
                             "and rewrites: choose another directory (the default is `cache` under output_dir)")


def _clear_cache(workspace: Path, cache_dir: Path) -> None:
    """Remove what the checkout put in the verdict cache before a run is refused: the workflow
    saves the cache directory even when this step fails, and the next run would restore what a
    PR committed there as verdicts the judge gave."""
    inside = _inside(cache_dir, workspace)
    if inside is None or not tracked_under(workspace, inside):
        return
    if cache_dir.is_symlink() or cache_dir.is_file():
        cache_dir.unlink()
    elif cache_dir.is_dir():
        shutil.rmtree(cache_dir)


def check_untracked(output_dir: Path, workspace: Path, cache_dir: Path) -> None:
    for name, path in (("output_dir", output_dir), ("verdict_cache", cache_dir)):
        inside = _inside(path, workspace)
        assert inside is not None  # check_output_location ran first
        tracked = tracked_under(workspace, inside)
        if tracked:
            _clear_cache(workspace, cache_dir)
            shown = ", ".join(tracked[:5]) + (f" and {len(tracked) - 5} more" if len(tracked) > 5 else "")
            raise InputError(f"input {name} ({inside})", f"holds files the repository tracks ({shown}); "
                             "the action would overwrite them: choose a directory the repository does not use")


def clear_output_dir(output_dir: Path, workspace: Path) -> None:
    """Remove whatever the checkout put where this run writes (a PR can commit `.rubric-gate/`).

    A committed symlink would have the report written through it to any file, or have the
    artifact upload follow it (e.g. to `.git/config`, which holds the checkout's token); a
    committed `verdicts/` file would pass for verdicts judged in this run. Symlinks anywhere
    under the output directory and the action's own output names are removed.
    """
    try:
        inside = output_dir.relative_to(workspace)
    except ValueError:
        inside = None
    if inside is not None:
        current = workspace
        for part in inside.parts[:-1]:
            current = current / part
            if current.is_symlink():
                raise InputError(f"input output_dir ({inside})", f"'{current.relative_to(workspace)}' is a symlink in the checkout")
    if output_dir.is_symlink():
        output_dir.unlink()
    if not output_dir.is_dir():
        return
    removed = 0
    if output_dir != workspace:
        for path in sorted(output_dir.rglob("*"), reverse=True):
            if path.is_symlink():
                path.unlink()
                removed += 1
    for name in OUTPUT_NAMES:
        path = output_dir / name
        if path.is_symlink() or path.is_file():
            path.unlink()
            removed += 1
        elif path.is_dir():
            shutil.rmtree(path)
            removed += 1
    if removed:
        command("warning", f"removed {removed} file(s) the checkout had under {output_dir.name}/ (a PR may not provide the action's output)")


def set_aside_restored_cache(cache_dir: Path, keep: tuple[str, ...]) -> list[str]:
    """A gated run's one rule for what `actions/cache` restored: in a pull request's run (or a
    merge group's) GitHub restores the caches the PR's own scope holds first, and any workflow
    running for the PR can save there, so nothing restored is read. It is removed before any
    reader opens the directory (verdicts, audits, paraphrases, indexes: whatever a later version
    keeps there too). `keep`: files whose every use is checked against something the PR cannot
    write (the batch journal: a result binds to its pairs by the custom_id the provider echoes).
    Returns the names removed (the cache service still holds its copy)."""
    if cache_dir.is_symlink() or cache_dir.is_file():
        cache_dir.unlink()
        return [cache_dir.name]
    if not cache_dir.is_dir():
        return []
    removed = []
    for path in sorted(cache_dir.iterdir()):
        if path.name in keep and path.is_file() and not path.is_symlink():
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
        removed.append(path.name)
    return removed
