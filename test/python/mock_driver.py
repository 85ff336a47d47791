"""Scripts on the cuda target over the mock CUDA driver (no GPU needed).

The `mock_script` fixture runs a script in a fresh Python process with
TIDAL_CUDA_DRIVER pointing at build/lib/libtidal_mock_cuda.so (built from
test/mock_driver/MockCudaDriver.cpp). The mock checks the call sequence and
the argument packing, not PTX execution: device memory is host memory, every
call is logged as one JSON line, and a kernel named ``fill_seven`` writes
int32 7 into its first array. A script sees numpy as np, json, cuda and the
kernels below (from a module of their own: tidal reads kernels from their
source); its keyword arguments set the mock's TIDAL_MOCK_CUDA_* variables.
In the pytest process, `play_raise` makes the mock's next launch write a
kernel's exception slot, as a raising thread of the kernel would.
"""

import ctypes
import json
import os
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import tidal


def mock_driver_library():
    """build/lib/libtidal_mock_cuda.so (or TIDAL_MOCK_CUDA_LIBRARY)."""
    explicit = os.environ.get("TIDAL_MOCK_CUDA_LIBRARY")
    if explicit:
        return Path(explicit)
    # build/python/tidal/__init__.py -> build/lib/libtidal_mock_cuda.so
    return Path(tidal.__file__).resolve().parents[2] / "lib" / "libtidal_mock_cuda.so"


MOCK = mock_driver_library()

EXCEPTION_SLOT = "__tidal_exception_slot"  # tidal/Contract.h


def play_raise(target, kernel, site_text, thread=(0, 0, 0), block=(0, 0, 0), axis=0, index=0,
               extent=0):
    """Over the mock driver, makes the next launch of `kernel` (launched once
    already) write its exception slot as the thread `thread` of block `block`
    would on raising at the raise site whose text contains `site_text` (the
    slot's layout: tidal/Contract.h's ExceptionSlot). Nothing where kernels
    run: there the kernel raises itself."""
    if not target.mock:
        return
    sites = kernel._inspect(kernel.signatures[0], "raise-sites")
    codes = [i + 1 for i, (_, text) in enumerate(sites) if site_text in text]
    assert len(codes) == 1, sites
    slot = struct.pack("<i3I3Iiqq", codes[0], *thread, *block, axis, index, extent)
    ctypes.CDLL(str(MOCK)).tidalMockWriteGlobalOnNextLaunch(EXCEPTION_SLOT.encode(), slot,
                                                            ctypes.c_size_t(len(slot)))

# The kernels, in a file of their own (tidal reads kernels from their source).
KERNELS = '''
import numpy as np
from tidal import cuda


@cuda.jit
def fill_seven(a, x, b):
    i = cuda.grid(1)
    if i < a.shape[0]:
        a[i] = 7


@cuda.jit
def scale_2d(a, factor):
    i, j = cuda.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        a[i, j] *= factor


@cuda.jit
def faulty_kernel(a):
    a[0] = 1


@cuda.jit
def jit_rejected(a):
    a[0] = 2
'''


class Run:
    """The outcome of one script in a process of its own on the mock driver:
    its exit status, output, the driver calls it made and the PTX it loaded."""

    def __init__(self, proc, log_path, ptx_path):
        self.returncode = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.calls = ([json.loads(line) for line in log_path.read_text().splitlines()]
                      if log_path.exists() else [])
        self.ptx = ptx_path.read_text() if ptx_path.exists() else ""

    def named(self, call):
        return [c for c in self.calls if c["call"] == call]

    def index(self, call, **fields):
        for i, c in enumerate(self.calls):
            if c["call"] == call and all(c.get(k) == v for k, v in fields.items()):
                return i
        raise AssertionError(f"no {call} {fields} in {[c['call'] for c in self.calls]}")

    @property
    def result(self):
        assert self.returncode == 0, self.stderr
        return json.loads(self.stdout.strip().splitlines()[-1])


@pytest.fixture
def mock_script(tmp_path):
    """run(script, target="cuda", driver=MOCK, **mock_variables) -> Run"""
    if not MOCK.is_file():
        pytest.skip(f"no mock CUDA driver at {MOCK}")
    (tmp_path / "kernels.py").write_text(KERNELS)

    def go(script, target="cuda", driver=MOCK, **mock_env):
        log, ptx = tmp_path / "calls.jsonl", tmp_path / "images.ptx"
        for path in (log, ptx):
            if path.exists():
                path.unlink()
        env = dict(os.environ)
        for name in list(env):
            if name.startswith("TIDAL_MOCK_CUDA_") or name == "TIDAL_TARGET":
                del env[name]
        env["PYTHONPATH"] = os.pathsep.join(
            [str(tmp_path), str(Path(tidal.__file__).resolve().parents[1])]
            + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        env["TIDAL_CUDA_DRIVER"] = str(driver)
        if target:
            env["TIDAL_TARGET"] = target
        env["TIDAL_MOCK_CUDA_LOG"] = str(log)
        env["TIDAL_MOCK_CUDA_PTX_OUT"] = str(ptx)
        env.update({f"TIDAL_MOCK_CUDA_{k.upper()}": str(v) for k, v in mock_env.items()})
        proc = subprocess.run(
            [sys.executable, "-c", "import json, numpy as np\nfrom tidal import cuda\n"
             "from kernels import *\n" + textwrap.dedent(script)],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        return Run(proc, log, ptx)

    return go


def u64(hex_bytes):
    return struct.unpack("<Q", bytes.fromhex(hex_bytes))[0]


def f64(hex_bytes):
    return struct.unpack("<d", bytes.fromhex(hex_bytes))[0]


# A launch of fill_seven whose script prints the arrays after it.
FILL_SEVEN = """
a = np.zeros(10, np.int32)
b = np.arange(4, dtype=np.float32)
b.flags.writeable = False
fill_seven[2, 8](a, 2.5, b)
print(json.dumps({"a": a.tolist(), "b": b.tolist()}))
"""
