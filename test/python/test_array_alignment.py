"""alignment= of cuda.shared.array and cuda.local.array (numba-cuda's): the
array starts at an address that is a multiple of it, on every target; the
marker carries it; bad alignments are located TypingErrors with numba-cuda's
words (docs/language.md)."""

import numpy as np
import pytest

from tidal import cuda, int64, uint64, void
from tidal.errors import TypingError


def test_alignment_of_local_and_shared_arrays(target):
    @cuda.jit(void(uint64[::1]))
    def aligned(out):
        # One-byte arrays first, so that nothing aligns the next one by chance.
        i = cuda.threadIdx.x
        pad = cuda.local.array(3, np.uint8)
        local = cuda.local.array(5, np.uint8, alignment=64)
        shared_pad = cuda.shared.array(3, np.uint8)
        shared = cuda.shared.array(7, np.uint8, alignment=128)
        shared[i] = i
        shared_pad[i % 3] = 1
        cuda.syncthreads()
        pad[i % 3] = shared_pad[i % 3]
        local[i % 5] = shared[6 - i]
        out[i] = local[i % 5] + pad[i % 3]

    markers = aligned.inspect_markers(aligned.signatures[0])
    assert "@tidal.local.array(i64 5, i64 64)" in markers
    assert "@tidal.shared.array(i64 7, i64 128)" in markers
    assert "@tidal.local.array(i64 3, i64 1)" in markers
    out = np.zeros(7, dtype=np.uint64)
    aligned[1, 7](out)
    target.assert_result("aligned", out, 7 - np.arange(7))
    # The shared array is a global of the PTX, with its alignment (the local
    # ones are folded away by the optimiser).
    ptx = aligned.inspect_asm(aligned.signatures[0])
    assert ".shared .align 128 .b8" in ptx


def test_alignment_none_and_elements(target):
    @cuda.jit(void(int64[::1]))
    def fill(out):
        a = cuda.local.array(4, int64, alignment=None)
        s = cuda.shared.array(4, int64, alignment=8)
        i = cuda.threadIdx.x
        a[i] = i
        s[i] = a[i] * 2
        cuda.syncthreads()
        out[i] = s[3 - i]

    out = np.zeros(4, dtype=np.int64)
    fill[1, 4](out)
    target.assert_result("fill", out, [6, 4, 2, 0])
    markers = fill.inspect_markers(fill.signatures[0])
    assert "@tidal.local.array(i64 32, i64 8)" in markers


@pytest.mark.parametrize("alignment, message", [
    ("n", "cuda.local.array(): alignment must be a constant integer, not a value computed at run time"),
    ("2.0", "cuda.local.array(): alignment must be a constant integer, not float64"),
    ("0", "cuda.local.array(): Alignment must be positive, not 0"),
    ("24", "cuda.local.array(): Alignment must be a power of 2, not 24"),
    ("4", "cuda.local.array(): Alignment must be a multiple of 8, not 4"),
])
def test_bad_alignments(alignment, message):
    namespace = {"cuda": cuda, "np": np}
    exec(f"def bad(out, n):\n    a = cuda.local.array(4, np.int32, alignment={alignment})\n"
         f"    out[0] = a[0]\n", namespace)
    kernel = cuda.jit("void(int32[::1], int64)")
    with pytest.raises(TypingError, match=r"\d+:\d+: .*" + message.replace("(", r"\(").replace(")", r"\)")):
        kernel(namespace["bad"])


def test_dynamic_shared_arrays_take_at_most_16():
    def bad(out):
        dynamic = cuda.shared.array(0, np.float64, alignment=32)
        out[0] = dynamic[0]

    with pytest.raises(TypingError, match="dynamic shared memory starts 16-byte aligned"):
        cuda.jit("void(float64[::1])")(bad)

    @cuda.jit("void(float64[::1])")
    def fine(out):
        dynamic = cuda.shared.array(0, np.float64, alignment=16)
        out[0] = dynamic[0]
