"""tidal.cuda.random: the generator states and the four draws are bit for
bit Numba's (Numba's own functions, run on the CPU as Numba compiles them
for the host, are the reference), on every target; the device-side state
functions agree with the host's; bad states and seeds are refused."""

import functools
import warnings

import numpy as np
import pytest

from tidal import cuda
from tidal.cuda import random as tidal_random
from tidal.errors import TypingError

# The reference: Numba's own functions, compiled for the host by Numba (a
# test-only dependency, which a GPU kit's Python may lack: the tests that
# need it say so and skip; the others run).
try:
    with warnings.catch_warnings():  # llvmlite's DeprecationWarning at import
        warnings.simplefilter("ignore", DeprecationWarning)
        import numba
        from numba.cuda import random as numba_random
except ImportError as error:
    numba = numba_random = None
    NO_NUMBA = f"Numba (the reference) is not importable here: {error}"
needs_numba = pytest.mark.skipif(numba is None, reason=NO_NUMBA if numba is None else "")

UNIFORM_FLOAT32, UNIFORM_FLOAT64, NORMAL_FLOAT32, NORMAL_FLOAT64 = range(4)
DRAW_DTYPES = [np.float32, np.float64, np.float32, np.float64]


@cuda.jit
def draw_kernel(states, out, distribution):
    thread = cuda.grid(1)
    if thread < states.size:
        for i in range(out.shape[1]):
            if distribution == UNIFORM_FLOAT32:
                out[thread, i] = tidal_random.xoroshiro128p_uniform_float32(states, thread)
            elif distribution == UNIFORM_FLOAT64:
                out[thread, i] = tidal_random.xoroshiro128p_uniform_float64(states, thread)
            elif distribution == NORMAL_FLOAT32:
                out[thread, i] = tidal_random.xoroshiro128p_normal_float32(states, thread)
            else:
                out[thread, i] = tidal_random.xoroshiro128p_normal_float64(states, thread)


def numba_draws(states, out, distribution):
    """The draws of Numba's functions, as draw_kernel makes them."""
    _numba_draws()(states, out, distribution)


@functools.lru_cache(maxsize=None)
def _numba_draws():
    return numba.njit(_numba_draws_loop)


def _numba_draws_loop(states, out, distribution):
    for thread in range(states.size):
        for i in range(out.shape[1]):
            if distribution == UNIFORM_FLOAT32:
                out[thread, i] = numba_random.xoroshiro128p_uniform_float32(states, thread)
            elif distribution == UNIFORM_FLOAT64:
                out[thread, i] = numba_random.xoroshiro128p_uniform_float64(states, thread)
            elif distribution == NORMAL_FLOAT32:
                out[thread, i] = numba_random.xoroshiro128p_normal_float32(states, thread)
            else:
                out[thread, i] = numba_random.xoroshiro128p_normal_float64(states, thread)


def numba_states(n, seed, subsequence_start=0):
    states = np.empty(n, numba_random.xoroshiro128p_dtype)
    numba_random.init_xoroshiro128p_states_cpu(states, np.uint64(seed % 2**64),
                                               np.uint64(subsequence_start))
    return states


@needs_numba
@pytest.mark.parametrize("n, seed, subsequence_start", [
    (1, 1, 0), (10, 1, 0), (37, 12345, 3), (1000, 0, 0), (257, 2**63 + 5, 100),
    (3, -1, 7), (64, 2**64 - 1, 1),
])
def test_host_states_are_numbas(n, seed, subsequence_start):
    states = np.empty(n, tidal_random.xoroshiro128p_dtype)
    tidal_random.init_xoroshiro128p_states_cpu(states, seed, subsequence_start)
    np.testing.assert_array_equal(states, numba_states(n, seed, subsequence_start))


def test_large_subsequence_starts_are_jumps_of_one_sequence():
    # Too far for Numba's loop: state i of start k is state i + 1 of start k - 1.
    def states(start, n=20):
        out = np.empty(n, tidal_random.xoroshiro128p_dtype)
        tidal_random.init_xoroshiro128p_states_cpu(out, 99, start)
        return out

    for start in (2**40 + 7, 2**63, 2**64 - 1):
        np.testing.assert_array_equal(states(start)[:-1], states(start - 1)[1:])
    # subsequence_start is a uint64, as Numba's: -1 is 2**64 - 1.
    np.testing.assert_array_equal(states(-1), states(2**64 - 1))


@needs_numba
@pytest.mark.parametrize("distribution", [UNIFORM_FLOAT32, UNIFORM_FLOAT64,
                                          NORMAL_FLOAT32, NORMAL_FLOAT64])
@pytest.mark.parametrize("threads, seed, subsequence_start", [
    (1, 1, 0), (64, 42, 0), (100, 2**40 + 3, 5),
])
def test_draws_are_numbas(target, distribution, threads, seed, subsequence_start):
    states = cuda.random.create_xoroshiro128p_states(threads, seed=seed,
                                                     subsequence_start=subsequence_start)
    expected_states = numba_states(threads, seed, subsequence_start)
    np.testing.assert_array_equal(states.copy_to_host(), expected_states)
    dtype = DRAW_DTYPES[distribution]
    out = np.zeros((threads, 25), dtype)
    draw_kernel[(threads + 31) // 32, 32](states, out, distribution)
    if target.ran("draw_kernel"):
        expected = np.zeros_like(out)
        numba_draws(expected_states, expected, distribution)
        if target.name == "cpu" or distribution in (UNIFORM_FLOAT32, UNIFORM_FLOAT64):
            np.testing.assert_array_equal(out, expected)
        else:  # a GPU's log and cos (libdevice) may differ from the host's in the last bits
            np.testing.assert_allclose(out, expected, rtol=1e-6 if dtype == np.float32 else 1e-14)
        # The states moved on as Numba's did.
        np.testing.assert_array_equal(states.copy_to_host(), expected_states)


def test_draws_have_the_right_distributions(target):
    states = cuda.random.create_xoroshiro128p_states(2048, seed=1)
    uniform = np.zeros((2048, 64), np.float64)
    draw_kernel[64, 32](states, uniform, UNIFORM_FLOAT64)
    normal = np.zeros((2048, 64), np.float32)
    draw_kernel[64, 32](states, normal, NORMAL_FLOAT32)
    if target.ran("draw_kernel", launches=2):
        assert 0.0 <= uniform.min() and uniform.max() < 1.0
        assert abs(uniform.mean() - 0.5) < 5e-3
        assert abs(normal.mean()) < 1e-2 and abs(normal.std() - 1.0) < 1e-2


@cuda.jit
def device_state_kernel(states, seed, jumps, out):
    thread = cuda.grid(1)
    if thread < states.size:
        tidal_random.init_xoroshiro128p_state(states, thread, seed)
        for _ in range(jumps + thread):
            tidal_random.xoroshiro128p_jump(states, thread)
        out[thread] = tidal_random.xoroshiro128p_next(states, thread)


def test_device_side_state_functions_match_the_host(target):
    # Device init and jump give the states the host computes (checked
    # against Numba's above), and next the sum of the state's two words.
    n, seed, jumps = 8, 2024, 2
    states = cuda.device_array(n, tidal_random.xoroshiro128p_dtype)
    out = np.zeros(n, np.uint64)
    device_state_kernel[1, 32](states, seed, jumps, out)
    if target.ran("device_state_kernel"):
        expected = np.empty(n, tidal_random.xoroshiro128p_dtype)
        tidal_random.init_xoroshiro128p_states_cpu(expected, seed, jumps)
        np.testing.assert_array_equal(out, expected["s0"] + expected["s1"])
        s0, s1 = expected["s0"].copy(), expected["s1"].copy()
        tidal_random._steps(s0, s1, 1)  # next moved each state on one step
        moved = states.copy_to_host()
        np.testing.assert_array_equal(moved["s0"], s0)
        np.testing.assert_array_equal(moved["s1"], s1)


def test_every_target_draws_what_the_cpu_target_draws(target):
    # Without Numba (a GPU kit's Python): a GPU's draws against the cpu
    # target's, bit for bit for the uniform draws.
    from tidal.cuda.target import use_target
    draws = {}
    for name in ("cpu", target.name):
        with use_target(name):
            states = cuda.random.create_xoroshiro128p_states(96, seed=5, subsequence_start=2)
            for distribution, dtype in enumerate(DRAW_DTYPES):
                out = np.zeros((96, 10), dtype)
                draw_kernel[3, 32](states, out, distribution)
                draws[name, distribution] = out
    if target.ran("draw_kernel", launches=4):
        for distribution in (UNIFORM_FLOAT32, UNIFORM_FLOAT64):
            np.testing.assert_array_equal(draws[target.name, distribution],
                                          draws["cpu", distribution])
        for distribution in (NORMAL_FLOAT32, NORMAL_FLOAT64):
            np.testing.assert_allclose(draws[target.name, distribution], draws["cpu", distribution],
                                       rtol=1e-5 if distribution == NORMAL_FLOAT32 else 1e-13)


def test_create_init_and_streams(target):
    stream = cuda.stream()
    states = cuda.random.create_xoroshiro128p_states(10, seed=1, stream=stream)
    stream.synchronize()
    host = states.copy_to_host()
    assert len(np.unique(host)) == 10
    shifted = cuda.random.create_xoroshiro128p_states(10, seed=1, subsequence_start=3)
    np.testing.assert_array_equal(host[3:], shifted.copy_to_host()[:-3])
    again = cuda.device_array(10, cuda.random.xoroshiro128p_dtype)
    cuda.random.init_xoroshiro128p_states(again, 1)
    np.testing.assert_array_equal(again.copy_to_host(), host)
    assert cuda.random.create_xoroshiro128p_states(0, seed=1).size == 0


@needs_numba
def test_numbas_names_are_all_here():
    public = {name for name in dir(numba_random) if not name.startswith("_")}
    imported = {"config", "cuda", "float32", "float64", "uint32", "int64", "uint64",
                "from_dtype", "jit", "math", "np"}
    assert sorted(public - imported - set(dir(tidal_random))) == []


def test_bad_states_and_seeds(target):
    wrong = cuda.device_array(10, np.float64)
    with pytest.raises(TypeError,
                       match="must be a device array, 1-D, of dtype xoroshiro128p_dtype"):
        cuda.random.init_xoroshiro128p_states(wrong, 1)
    host = np.empty(10, cuda.random.xoroshiro128p_dtype)
    with pytest.raises(TypeError, match="must be a device array.*got ndarray"):
        cuda.random.init_xoroshiro128p_states(host, 1)
    with pytest.raises(TypeError, match="seed must be an integer, got 1.5"):
        cuda.random.create_xoroshiro128p_states(4, seed=1.5)
    with pytest.raises(TypeError, match="subsequence_start must be an integer"):
        cuda.random.create_xoroshiro128p_states(4, seed=1, subsequence_start="3")
    # A kernel that draws from an array that is not of generator states.
    floats = cuda.to_device(np.zeros(32))
    out = np.zeros((32, 1), np.float32)
    with pytest.raises(TypingError, match="s0"):
        draw_kernel[1, 32](floats, out, UNIFORM_FLOAT32)
