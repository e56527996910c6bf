"""Read a user file from disk or, for `REF:PATH`, from git without touching the work tree."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rubric_gate.errors import InputError

if TYPE_CHECKING:
    import subprocess


@dataclass(frozen=True)
class SourceText:
    """A file's text and the name to show in messages (`path` or `REF:PATH`)."""

    display: str
    text: str
    path: Path | None  # on-disk path, None when read from git
    ref: str | None = None
    repo_path: str | None = None  # path inside the repository when read from git


def _looks_like_git_spec(spec: str) -> bool:
    ref, sep, path = spec.partition(":")
    return bool(sep and ref and path) and not Path(spec).exists() and "/" not in ref[:1]


def _git(args: list[str], display: str, cwd: Path | None) -> subprocess.CompletedProcess[bytes]:
    try:
        import subprocess  # `REF:PATH` only: reading files imports this module

        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)
    except FileNotFoundError as exc:  # git not installed
        raise InputError(display, "git is not installed, cannot read REF:PATH") from exc


def read_git_file(ref: str, path: str, cwd: Path | None = None) -> str:
    display = f"{ref}:{path}"
    if ref.startswith("-"):  # git would take it for an option (`--output=FILE` writes a file)
        raise InputError(display, f"not a git revision: '{ref}'")
    # `cat-file blob` gives the stored bytes exactly (no textconv) and refuses trees.
    proc = _git(["cat-file", "blob", display], display, cwd)
    if proc.returncode != 0:
        kind = _git(["cat-file", "-t", display], display, cwd).stdout.decode(errors="replace").strip()
        if kind == "tree":
            raise InputError(display, "is a directory, expected a file")
        detail = proc.stderr.decode(errors="replace").strip().splitlines()
        raise InputError(display, f"cannot read from git ({detail[-1] if detail else 'unknown error'})")
    return decode_text(proc.stdout, display)


def decode_text(data: bytes, display: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        # Name the line (and the byte within it), not an offset into the whole file.
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(display, f"not UTF-8 text (byte {exc.start - line_start + 1} of the line)", line) from None


def read_source(spec: str | Path, cwd: Path | None = None) -> SourceText:
    """Read `spec`, a file path or `REF:PATH` (read with `git show`)."""
    spec_text = str(spec)
    if not spec_text.strip():
        raise InputError("''", "empty path, expected a file")
    if isinstance(spec, str) and _looks_like_git_spec(spec_text):
        ref, _, repo_path = spec_text.partition(":")
        return SourceText(spec_text, read_git_file(ref, repo_path, cwd), None, ref=ref, repo_path=repo_path)
    path = Path(spec_text)
    if cwd is not None and not path.is_absolute():
        path = cwd / path
    if not path.exists():
        raise InputError(spec_text, "file not found" + _ref_hint(spec_text, cwd))
    if path.is_dir():
        raise InputError(spec_text, "is a directory, expected a file")
    return SourceText(spec_text, decode_text(path.read_bytes(), spec_text), path)


def _ref_hint(spec: str, cwd: Path | None) -> str:
    """`--base main` names a git ref, not a file: say how to name the file in it."""
    if "/" in spec and not spec.startswith("origin/"):
        return ""
    try:
        proc = _git(["rev-parse", "--verify", "--quiet", f"{spec}^{{commit}}"], spec, cwd)
    except InputError:  # no git: no hint
        return ""
    if proc.returncode != 0:
        return ""
    return f" (it is a git ref: name the file in it as REF:PATH, e.g. {spec}:rubrics/NAME.yaml)"
