#!/usr/bin/env bash
# tidal's GPU run, on a lent GPU machine (x86-64, Ubuntu-like, CUDA 13 driver,
# Python 3.12 with numba-cuda and CuPy, no network). From the repo root of a
# copy of the working tree that carries gpu-kit/ (made by utils/gpu-kit/pack.py):
#
#     bash gpu-kit/run.sh                 # everything below; results in $OUT or gpu-kit/out
#     bash gpu-kit/run.sh --unpack-only   # only unpack the .debs and the build into the prefix
#     bash gpu-kit/run.sh python ARGS...  # the kit's Python 3.11 with tidal importable
#
# 1. unpacks the kit's .debs with `dpkg -x` into a prefix (gpu-kit/prefix, or
#    $TIDAL_KIT_PREFIX): Debian's Python 3.11, NumPy, pytest, libLLVM 19; and
#    tidal's build (build.tar.xz) into $PREFIX/build
# 2. runs the tests marked gpu (pytest -m gpu test/python) under that Python
# 3. runs every example with TIDAL_TARGET=cuda
# 4. runs the GPU benchmarks: numba-cuda and CuPy under the machine's own
#    Python 3.12, tidal under the kit's Python 3.11, merged into one table
# Results: $OUT/summary.md, gpu.md, gpu.json and a log per step.
set -u
KIT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PREFIX="${TIDAL_KIT_PREFIX:-$KIT/prefix}"
SRC="${TIDAL_KIT_SRC:-$KIT/src}"
OUT="${OUT:-$KIT/out}"
SYSTEM_PYTHON="${SYSTEM_PYTHON:-python3}"
ARCH_LIB="x86_64-linux-gnu"

unpack() {
  [ -f "$PREFIX/.unpacked" ] && return 0
  mkdir -p "$PREFIX"
  for deb in "$KIT"/debs/*.deb; do
    if command -v dpkg >/dev/null 2>&1; then
      dpkg -x "$deb" "$PREFIX" || { echo "gpu-kit: dpkg -x $deb failed" >&2; return 1; }
    else
      # No dpkg: a .deb is an ar archive holding data.tar.*; read it with Python.
      "$SYSTEM_PYTHON" - "$deb" "$PREFIX" <<'PY' || return 1
import io, sys, tarfile
data = open(sys.argv[1], "rb").read()
pos = 8
while pos < len(data):
    name = data[pos:pos + 16].decode().strip().rstrip("/")
    size = int(data[pos + 48:pos + 58].decode().strip())
    body = data[pos + 60:pos + 60 + size]
    if name.startswith("data.tar"):
        tarfile.open(fileobj=io.BytesIO(body)).extractall(sys.argv[2])
    pos += 60 + size + (size & 1)
PY
    fi
  done
  # tidal's build: tar, or Python's tarfile where tar cannot read xz.
  if ! tar -xJf "$KIT/build.tar.xz" -C "$PREFIX" 2>/dev/null; then
    "$SYSTEM_PYTHON" -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
      "$KIT/build.tar.xz" "$PREFIX" || { echo "gpu-kit: cannot unpack build.tar.xz" >&2; return 1; }
  fi
  touch "$PREFIX/.unpacked"
}

kit_env() {
  local libs="$PREFIX/usr/lib/$ARCH_LIB:$PREFIX/lib/$ARCH_LIB:$PREFIX/usr/lib/llvm-19/lib"
  libs="$libs:$PREFIX/usr/lib/$ARCH_LIB/blas:$PREFIX/usr/lib/$ARCH_LIB/lapack"
  export LD_LIBRARY_PATH="$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export PYTHONHOME="$PREFIX/usr"
  export PYTHONPATH="$PREFIX/build/python"
  export PYTHONNOUSERSITE=1
}

# The kit's interpreter, in a subshell so that its environment stays there.
py311() { ( kit_env; exec "$PREFIX/usr/bin/python3.11" "$@" ); }

unpack || exit 1
case "${1:-}" in
  --unpack-only) exit 0 ;;
  python) shift; py311 "$@"; exit $? ;;
esac

mkdir -p "$OUT"
SUMMARY="$OUT/summary.md"
{
  echo "# tidal GPU run, $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
  echo
  echo "- GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | paste -sd';' || echo none)"
  echo "- $(getconf GNU_LIBC_VERSION 2>/dev/null), system Python: $("$SYSTEM_PYTHON" --version 2>&1), kit Python: $(py311 --version 2>&1)"
  echo "- tidal commit (kit): $(py311 -c 'import json,sys; print(json.load(open(sys.argv[1]))["tidal_commit"])' "$KIT/MANIFEST.json" 2>&1)"
  echo
} > "$SUMMARY"
glibc_minor="$(getconf GNU_LIBC_VERSION 2>/dev/null | sed -n 's/glibc 2\.\([0-9]*\).*/\1/p')"
if [ -n "$glibc_minor" ] && [ "$glibc_minor" -lt 36 ]; then
  echo "- WARNING: glibc older than 2.36 (Debian 12's): the carried binaries may not load" >> "$SUMMARY"
fi

echo "== 1. pytest -m gpu test/python (kit Python 3.11, TIDAL_TARGET=cuda)"
( cd "$SRC" && TIDAL_TARGET=cuda py311 -m pytest -m gpu -p no:cacheprovider -q test/python ) \
  > "$OUT/pytest-gpu.log" 2>&1
rc=$?
tail -3 "$OUT/pytest-gpu.log"
{
  echo "## GPU tests (pytest -m gpu test/python)"
  echo
  echo "exit status $rc ($( [ $rc = 5 ] && echo 'no tests collected' || echo 'see pytest-gpu.log')): \`$(tail -1 "$OUT/pytest-gpu.log")\`"
  echo
  echo "## Examples (TIDAL_TARGET=cuda)"
  echo
  echo "| example | exit status | last line |"
  echo "|---|---|---|"
} >> "$SUMMARY"

echo "== 2. examples with TIDAL_TARGET=cuda"
for example in "$SRC"/examples/*.py; do
  name="$(basename "$example" .py)"
  ( cd "$SRC" && TIDAL_TARGET=cuda py311 "$example" ) > "$OUT/example-$name.log" 2>&1
  rc=$?
  echo "  $name: exit status $rc"
  echo "| $name | $rc | \`$(tail -1 "$OUT/example-$name.log" | tr '|' '/')\` |" >> "$SUMMARY"
done
echo >> "$SUMMARY"

echo "== 3. GPU benchmarks: numba-cuda and CuPy ($SYSTEM_PYTHON), tidal (kit Python 3.11)"
"$SYSTEM_PYTHON" "$SRC/bench/gpu.py" --backends numba,cupy --json "$OUT/gpu-numba-cupy.json" \
  2> "$OUT/gpu-numba-cupy.log"
echo "  numba-cuda, CuPy: exit status $? (log: gpu-numba-cupy.log)"
TIDAL_TARGET=cuda py311 "$SRC/bench/gpu.py" --backends tidal --json "$OUT/gpu-tidal.json" \
  2> "$OUT/gpu-tidal.log"
echo "  tidal: exit status $? (log: gpu-tidal.log)"
merger="$SYSTEM_PYTHON"
command -v "$SYSTEM_PYTHON" >/dev/null 2>&1 || merger=py311
"$merger" "$SRC/bench/gpu.py" --merge "$OUT/gpu-numba-cupy.json" "$OUT/gpu-tidal.json" \
  --json "$OUT/gpu.json" --md "$OUT/gpu.md" > /dev/null
cat "$OUT/gpu.md" >> "$SUMMARY"
echo
cat "$SUMMARY"
echo
echo "gpu-kit: results in $OUT"
