#!/usr/bin/env bash
# Installs the Debian packages tidal needs, only those that are missing.
# Idempotent and quiet: apt-get update runs only when something must be installed.
set -euo pipefail

PACKAGES=(
  cmake ninja-build g++ make
  llvm-19-dev llvm-19-tools clang-19 libclang-19-dev
  libclang-cpp19-dev  # libTooling (utils/libdevice_table/: the libdevice table; cxx/: CUDA C++ in process)
  python3 python3-dev python3-numpy python3-pytest
  libgtest-dev
  python3-mpmath  # tests only: references for the cpu target's libdevice (test_libdevice.py)
  python3-numba   # tests only: Numba's CUDA tests (make numba-suite); tidal never imports it
  python3-cffi    # tests only: ffi.from_buffer pointers as kernel arguments (test_pointer_args.py)
  # Beyond one process (docs/ecosystem.md): pickling, Dask, MPI, PyTorch, pip.
  python3-cloudpickle python3-dask python3-distributed
  python3-mpi4py openmpi-bin
  python3-torch
  python3-venv python3-pip python3-build python3-wheel python3-setuptools
)

missing=()
for package in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then
    SUDO="sudo"
  else
    echo "setup: these Debian packages are missing and this is not root: ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
