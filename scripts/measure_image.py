#!/usr/bin/env python3
"""Build the action's image with buildah on a stand-in for `python:3.12-slim` and measure it:
how long a build from nothing takes, and how many bytes it adds over its base.

    sudo python3 scripts/measure_image.py --python /path/to/cpython-3.12-prefix [--work DIR]

Where the registry holding `python:3.12.12-slim-bookworm` cannot be reached, the stand-in is
made the way that image is: Debian bookworm `minbase` (debootstrap, from Debian's archive) with
the official image's apt and dpkg settings, CA certificates, tzdata and the libraries CPython
links, a CPython 3.12 prefix copied to /usr/local with its tests, bytecode and static library
removed, and pip 25.0.1 (the pip Python 3.12.12 bundles). It is tagged with the real image's
name in a private buildah storage under --work, so the Dockerfile builds unchanged.

Sizes are the layers' uncompressed tar bytes (what `docker images` adds up) and their gzip
bytes (what a runner pulls), read from the OCI manifests `buildah push` writes; "over the base"
is the image's layers minus the base's. The build runs with no layer cache, with the network
the build needs (PyPI for the locked wheels, Debian for git); `--ca-bundle` mounts a CA bundle
for the build's RUN steps only (never into a layer) where TLS to PyPI is intercepted.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASE = "docker.io/library/python:3.12.12-slim-bookworm"
PIP = "pip==25.0.1"
# The official slim image's runtime packages (its Dockerfile's apt-get lines and what CPython's
# extension modules link).
PACKAGES = ("ca-certificates,netbase,tzdata,libbz2-1.0,libexpat1,libffi8,liblzma5,libncursesw6,libreadline8,"
            "libsqlite3-0,libssl3,libuuid1,zlib1g,libnsl2,libtirpc3,libgdbm6")
# debian:bookworm-slim's dpkg and apt settings (no docs, no caches left by apt).
DPKG_EXCLUDES = "".join(f"path-exclude /usr/share/{d}/*\n" for d in ("doc", "man", "groff", "info", "locale", "lintian"))
APT_CLEAN = ('DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/*.bin || true"; };\n'
             'Dir::Cache::pkgcache ""; Dir::Cache::srcpkgcache "";\n')


def sh(*args: str, **kwargs: object) -> str:
    return subprocess.run(args, check=True, capture_output=True, text=True, **kwargs).stdout  # type: ignore[call-overload, no-any-return]


def standin(work: Path, python: Path, buildah: list[str]) -> None:
    rootfs = work / "rootfs"
    if rootfs.exists():
        shutil.rmtree(rootfs)
    sh("debootstrap", "--variant=minbase", f"--include={PACKAGES}", "bookworm", str(rootfs), "http://deb.debian.org/debian")
    (rootfs / "etc/dpkg/dpkg.cfg.d/docker").write_text(DPKG_EXCLUDES)
    (rootfs / "etc/apt/apt.conf.d/docker-clean").write_text(APT_CLEAN)
    for leftover in ("var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc", "usr/share/man", "usr/share/info",
                     "usr/share/locale", "var/log"):
        for path in (rootfs / leftover).glob("*"):
            if path.is_symlink() or path.is_file():
                path.unlink()
            elif path.is_dir() and path.name != "partial":
                shutil.rmtree(path)
    for stale in (rootfs / "etc/apt/sources.list.d").glob("*"):
        stale.unlink()  # keep only debootstrap's sources.list
    shutil.copytree(python, rootfs / "usr/local", symlinks=True, dirs_exist_ok=True)
    local = rootfs / "usr/local"
    for path in sorted(local.rglob("*"), reverse=True):
        if path.is_dir() and path.name in ("test", "tests", "idle_test", "__pycache__", "tkinter", "idlelib", "turtledemo"):
            shutil.rmtree(path, ignore_errors=True)
        elif path.is_file() and (path.suffix in (".pyc", ".pyo") or (path.name.startswith("libpython") and path.suffix == ".a")
                                 or path.name.startswith("_tkinter") or path.suffix == ".pth"):
            path.unlink()
    for path in local.rglob("*.so*"):
        if path.is_file() and not path.is_symlink():
            subprocess.run(["strip", "--strip-unneeded", str(path)], check=False, capture_output=True)
    wheels = work / "wheels"
    sh(sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:", "-d", str(wheels), PIP)
    [wheel] = wheels.glob("pip-*.whl")
    shutil.copy(wheel, rootfs / "tmp" / wheel.name)
    sh("chroot", str(rootfs), "/sbin/ldconfig")
    sh("chroot", str(rootfs), "/usr/local/bin/python3", "-m", "pip", "install", "--quiet", "--no-index", "--no-compile",
       f"/tmp/{wheel.name}")
    (rootfs / "tmp" / wheel.name).unlink()
    for path in local.rglob("__pycache__"):
        shutil.rmtree(path, ignore_errors=True)
    shutil.rmtree(rootfs / "root/.cache", ignore_errors=True)
    container = sh(*buildah, "from", "scratch").strip()
    mount = Path(sh(*buildah, "mount", container).strip())
    subprocess.run(["cp", "-a", f"{rootfs}/.", f"{mount}/"], check=True)
    sh(*buildah, "umount", container)
    sh(*buildah, "config", "--env", "PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin",
       "--env", "LANG=C.UTF-8", "--cmd", "python3", "--os", "linux", "--arch", "amd64", container)
    sh(*buildah, "commit", "--rm", container, BASE)


def layers(buildah: list[str], image: str, work: Path) -> list[tuple[int, int]]:
    """(uncompressed tar bytes, gzip bytes) of each layer, base first."""
    layout = work / "oci" / image.replace("/", "_").replace(":", "_")
    shutil.rmtree(layout, ignore_errors=True)
    layout.parent.mkdir(parents=True, exist_ok=True)
    sh(*buildah, "push", image, f"oci:{layout}:measured")
    index = json.loads((layout / "index.json").read_text())
    manifest = json.loads((layout / "blobs/sha256" / index["manifests"][0]["digest"].split(":")[1]).read_text())
    found = []
    for layer in manifest["layers"]:
        blob = layout / "blobs/sha256" / layer["digest"].split(":")[1]
        size = 0
        with gzip.open(blob) as stream:
            while chunk := stream.read(1 << 20):
                size += len(chunk)
        found.append((size, layer["size"]))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", type=Path, required=True, help="a CPython 3.12 install prefix (bin/python3.12)")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "rubric-gate-image")
    parser.add_argument("--ca-bundle", type=Path, help="mounted at /etc/ssl/certs/ca-certificates.crt in RUN steps")
    parser.add_argument("--reuse-base", action="store_true", help="keep a stand-in built before")
    parser.add_argument("--tag", default="localhost/rubric-gate:measured")
    args = parser.parse_args()
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    buildah = ["buildah", "--root", str(work / "storage"), "--runroot", str(work / "run")]
    if not args.reuse_base:
        standin(work, args.python.resolve(), buildah)
    subprocess.run([*buildah, "rm", "--all"], check=False, capture_output=True)
    mounts = ["-v", f"{args.ca_bundle.resolve()}:/etc/ssl/certs/ca-certificates.crt:ro"] if args.ca_bundle else []
    started = time.monotonic()
    cpu = time.process_time()
    proc = subprocess.run([*buildah, "bud", "--no-cache", "--isolation", "chroot", "--network", "host", *mounts,
                           "-f", "Dockerfile", "-t", args.tag, "."], cwd=ROOT, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - started
    children = sum(getattr(__import__("os").times(), k) for k in ("children_user", "children_system"))
    if proc.returncode != 0:
        print(proc.stdout[-4000:], proc.stderr[-4000:], file=sys.stderr)
        return 1
    base, image = layers(buildah, BASE, work), layers(buildah, args.tag, work)
    added = image[len(base):]
    assert image[:len(base)] == base, "the image does not start with the base's layers"

    def mb(n: int) -> str:
        return f"{n / 1e6:.1f} MB"

    print(f"build, no cache: {seconds:.0f} s wall, {children:.0f} s CPU (buildah and its children; {cpu:.1f} s here)")
    print(f"base {BASE} (stand-in): {mb(sum(t for t, _ in base))} ({mb(sum(g for _, g in base))} gzip)")
    print(f"image {args.tag}: {mb(sum(t for t, _ in image))} ({mb(sum(g for _, g in image))} gzip)")
    print(f"over the base: {mb(sum(t for t, _ in added))} ({mb(sum(g for _, g in added))} gzip) in {len(added)} layers: "
          + ", ".join(mb(t) for t, _ in added))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
