#!/usr/bin/python3
"""Packs what a lent GPU machine needs to run tidal's GPU tests, examples and
benchmarks into one folder (default: gpu-kit/, ignored by git), at most 64 MiB:

  run.sh            the one command to run there: bash gpu-kit/run.sh
  debs/             Debian packages that an Ubuntu-like GPU image lacks, kept as
                    .deb (compressed); run.sh unpacks them with `dpkg -x`:
                    libLLVM 19 and its libraries, Debian's Python 3.11 (the
                    extension is built for it), NumPy, pytest
  build.tar.xz      this machine's build: build/python/tidal (with _tidal),
                    build/bin/tidalc, build/lib/TidalPasses.so, stripped and
                    compressed (a third of their size); run.sh unpacks it into
                    the prefix beside the packages
  src/              the sources run there: bench/, test/python/, examples/
  MANIFEST.json     what is inside, with sizes, the packages' versions, the commit

    /usr/bin/python3 utils/gpu-kit/pack.py [--out gpu-kit] [--deb-cache build/gpu-kit-debs]

The .deb files come from `apt-get download` into the cache folder, so a second
run downloads nothing. Exit status: 0 packed, 1 failed (too big, no build),
2 the package registry could not be reached."""

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIMIT_BYTES = 64 * 1024 * 1024

# What the GPU machine's image (x86-64, Ubuntu-like, Python 3.12, CUDA 13) lacks.
# Not carried: libc6, libstdc++6, libgcc-s1, zlib1g, libzstd1, liblzma5, libtinfo6,
# libbz2-1.0, libuuid1, libcrypt1 (in every Ubuntu 24.04 base image), and libssl3
# (the machine's own Python 3.12 needs it too).
DEBS = [
    # libLLVM.so.19.1 and what it links that Ubuntu 24.04 has in other versions or not at all
    "libllvm19", "libicu72", "libz3-4", "libxml2", "libedit2", "libbsd0", "libmd0", "libffi8",
    # Debian's Python 3.11 (the _tidal extension's ABI); libpython3.11 for tidalc
    "python3.11-minimal", "libpython3.11-minimal", "libpython3.11-stdlib", "libpython3.11",
    "libexpat1",
    # NumPy for Python 3.11 and its BLAS/LAPACK
    "python3-numpy", "libblas3", "liblapack3", "libgfortran5", "libquadmath0",
    # pytest for Python 3.11 (the GPU test module)
    "python3-pytest", "python3-pluggy", "python3-iniconfig", "python3-packaging", "python3-py",
    "python3-attr", "python3-exceptiongroup", "python3-tomli", "python3-more-itertools",
]

BUILD_FILES = ["build/bin/tidalc", "build/lib/TidalPasses.so"]
BUILD_TREES = ["build/python/tidal"]
SOURCE_TREES = ["bench", "test/python", "examples"]
# _cxx*.so links libclang-cpp, which the kit does not carry (RawKernel is
# unavailable there).
SKIP = ("__pycache__", ".pytest_cache", "results", "out", "_cxx.*.so")


def cached_deb(cache, package):
    """The newest cached .deb of `package`, or None."""
    found = [p for p in glob.glob(os.path.join(cache, f"{package}_*.deb"))
             if os.path.basename(p).split("_", 1)[0] == package]
    return max(found, key=os.path.getmtime) if found else None


def download(cache, packages):
    """apt-get download of the packages not in the cache; False if the registry can't be reached."""
    missing = [p for p in packages if cached_deb(cache, p) is None]
    if not missing:
        return True
    if not shutil.which("apt-get"):
        print("gpu-kit: apt-get is not available: cannot download " + " ".join(missing), file=sys.stderr)
        return False
    print(f"gpu-kit: apt-get download {' '.join(missing)}", file=sys.stderr)
    done = subprocess.run(["apt-get", "download", "-q"] + missing, cwd=cache, capture_output=True, text=True)
    still = [p for p in missing if cached_deb(cache, p) is None]
    if done.returncode != 0 or still:
        print(f"gpu-kit: apt-get download failed for {' '.join(still) or 'some packages'}:\n"
              f"{done.stderr.strip()}", file=sys.stderr)
        return False
    return True


def strip_binaries(out):
    """strip --strip-unneeded on the kit's tidalc and shared objects: their
    symbol tables are a megabyte the GPU machine does not need (the kit must
    stay under the device tool's 64 MiB); dynamic symbols stay."""
    if not shutil.which("strip"):
        return
    for folder, _, files in os.walk(os.path.join(out, "build")):
        for name in files:
            path = os.path.join(folder, name)
            if name.endswith(".so") or name == "tidalc":
                subprocess.run(["strip", "--strip-unneeded", path], check=True)


def compress_build(out):
    """out/build becomes out/build.tar.xz: the binaries compress to about a
    third, which keeps the kit under the device tool's 64 MiB."""
    with tarfile.open(os.path.join(out, "build.tar.xz"), "w:xz") as archive:
        archive.add(os.path.join(out, "build"), arcname="build")
    shutil.rmtree(os.path.join(out, "build"))


def copy_tree(src, dst):
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(*SKIP, "*.pyc"), dirs_exist_ok=True)


def folder_size(path):
    total = 0
    for base, _, files in os.walk(path):
        for name in files:
            full = os.path.join(base, name)
            if not os.path.islink(full):
                total += os.path.getsize(full)
    return total


def git_commit():
    done = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def pack(out, cache, build):
    build_abs = os.path.join(ROOT, build) if not os.path.isabs(build) else build
    extension = glob.glob(os.path.join(build_abs, "python", "tidal", "_tidal*.so"))
    if not extension:
        print(f"gpu-kit: no build in {build_abs} (build/python/tidal/_tidal*.so): run `make build` first",
              file=sys.stderr)
        return 1
    absent = [rel for rel in BUILD_FILES if not os.path.exists(os.path.join(build_abs, os.path.relpath(rel, "build")))]
    if absent:
        print(f"gpu-kit: the build in {build_abs} lacks {', '.join(absent)}: run `make build` first",
              file=sys.stderr)
        return 1
    os.makedirs(cache, exist_ok=True)
    if not download(cache, DEBS):
        return 2

    if os.path.exists(out):
        if os.listdir(out) and not os.path.exists(os.path.join(out, "MANIFEST.json")):
            print(f"gpu-kit: {out} exists and is not a kit: not overwriting it", file=sys.stderr)
            return 1
        shutil.rmtree(out)
    os.makedirs(os.path.join(out, "debs"))

    debs = {}
    for package in DEBS:
        path = cached_deb(cache, package)
        shutil.copy2(path, os.path.join(out, "debs"))
        debs[package] = os.path.basename(path)
    for rel in BUILD_FILES:
        target = os.path.join(out, rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(os.path.join(build_abs, os.path.relpath(rel, "build")), target)
    for rel in BUILD_TREES:
        copy_tree(os.path.join(build_abs, os.path.relpath(rel, "build")), os.path.join(out, rel))
    strip_binaries(out)
    compress_build(out)
    for rel in SOURCE_TREES:
        copy_tree(os.path.join(ROOT, rel), os.path.join(out, "src", rel))
    here = os.path.dirname(os.path.abspath(__file__))
    shutil.copy2(os.path.join(here, "run.sh"), os.path.join(out, "run.sh"))
    os.chmod(os.path.join(out, "run.sh"), 0o755)

    files = {}
    for base, _, names in os.walk(out):
        for name in names:
            full = os.path.join(base, name)
            files[os.path.relpath(full, out)] = os.path.getsize(full)
    manifest = {"tidal_commit": git_commit(), "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "debs": debs, "files": dict(sorted(files.items()))}
    manifest["total_bytes"] = sum(files.values())
    with open(os.path.join(out, "MANIFEST.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    total = folder_size(out)
    print(f"gpu-kit: {out}: {total / 2**20:.1f} MiB ({len(files) + 1} files, {len(debs)} .deb)")
    if total > LIMIT_BYTES:
        print(f"gpu-kit: the kit is {total / 2**20:.1f} MiB, over the 64 MiB limit", file=sys.stderr)
        return 1
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(ROOT, "gpu-kit"))
    parser.add_argument("--deb-cache", default=os.path.join(ROOT, "build", "gpu-kit-debs"))
    parser.add_argument("--build", default="build", help="the build folder (relative to the repo root)")
    options = parser.parse_args()
    return pack(os.path.abspath(options.out), os.path.abspath(options.deb_cache), options.build)


if __name__ == "__main__":
    sys.exit(main())
