"""The build tree that tests run from a subprocess or hand to LLVM's tools:
TIDAL_BUILD_DIR where the Makefile sets it (make check-asan: build-asan/,
whose sanitized binaries are what that run tests), else the checkout's
build/."""

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("TIDAL_BUILD_DIR") or ROOT / "build")
