"""`python -m rubric_gate.schema [DIR ...]`: rewrite the schema files from the models.

Without arguments it writes the package's copies and, in a source checkout, the repository's
`schema/` directory.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rubric_gate.schema.generate import ALL_SCHEMA_FILES, packaged_schema_path, render_schema


def _default_dirs() -> list[Path]:
    package_dir = packaged_schema_path("x").parent
    dirs = [package_dir]
    checkout = package_dir.parents[2]  # src/rubric_gate/schema -> the repository root
    if (checkout / "pyproject.toml").is_file():
        dirs.append(checkout / "schema")
    return dirs


def main(argv: list[str]) -> int:
    # argparse: `--help` prints help and an unknown `--flag` is an error, never a directory name.
    parser = argparse.ArgumentParser(prog="python -m rubric_gate.schema",
                                     description="Rewrite the JSON Schema files from the models.")
    parser.add_argument("dirs", nargs="*", type=Path, metavar="DIR",
                        help="where to write them (default: the package's copies and, in a source "
                             "checkout, the repository's schema/ directory)")
    dirs = parser.parse_args(argv).dirs or _default_dirs()
    for directory in dirs:
        directory.mkdir(parents=True, exist_ok=True)
        for name in ALL_SCHEMA_FILES:
            target = directory / name
            text = render_schema(name)
            if not target.exists() or target.read_text(encoding="utf-8") != text:
                target.write_text(text, encoding="utf-8")
                print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
