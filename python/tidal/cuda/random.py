"""tidal.cuda.random: the xoroshiro128+ generator with Numba's API and
Numba's streams, bit for bit.

Kernels draw numbers with the device functions below (written in tidal's
kernel language, compiled into the kernel that calls them); the host makes
the array of generator states. State ``i`` is the seed's state (SplitMix64 of
the seed) moved on by ``(subsequence_start + i) * 2**64`` steps, so threads
draw from non-overlapping stretches of one sequence.

Numba moves each state on from the previous one, one jump at a time. Here
the jump is what it is, a linear map of the 128 state bits over GF(2), held
as a matrix: ``init_xoroshiro128p_states_cpu`` raises it to the powers
``2**j`` by squaring and fills the array by doubling (states ``[m, 2m)`` are
states ``[0, m)`` jumped ``m`` times), each step a handful of vectorised
NumPy table look-ups. It gives the states Numba's loop gives.
"""

import math
import operator
import threading

import numpy as np

from ..types import float32, float64, int64, uint32, uint64
from .device_arrays import DeviceNDArray, device_array
from .dispatcher import jit

__all__ = [
    "xoroshiro128p_dtype", "xoroshiro128p_type", "create_xoroshiro128p_states",
    "init_xoroshiro128p_states", "init_xoroshiro128p_states_cpu", "init_xoroshiro128p_state",
    "xoroshiro128p_next", "xoroshiro128p_jump", "xoroshiro128p_uniform_float32",
    "xoroshiro128p_uniform_float64", "xoroshiro128p_normal_float32",
    "xoroshiro128p_normal_float64", "uint64_to_unit_float32", "uint64_to_unit_float64",
    "rotl", "TWO_PI_FLOAT32", "TWO_PI_FLOAT64",
]

# One generator's state: two 64-bit words (Numba's layout).
xoroshiro128p_dtype = np.dtype([("s0", np.uint64), ("s1", np.uint64)], align=True)
# Numba's name for the record type is its dtype here (tidal types records by dtype).
xoroshiro128p_type = xoroshiro128p_dtype

TWO_PI_FLOAT32 = np.float32(2 * math.pi)
TWO_PI_FLOAT64 = np.float64(2 * math.pi)

_MASK64 = (1 << 64) - 1
# SplitMix64's constants, and xoroshiro128+'s jump polynomial (2**64 steps:
# low word, then high word). Kernels see each as two 32-bit halves, since
# tidal types a literal or global at or above 2**63 as an int64 that does
# not fit (Numba makes it a uint64); _word() puts the halves together.
_SPLITMIX_INCREMENT = (0x9E3779B9, 0x7F4A7C15)
_SPLITMIX_MULTIPLIER_1 = (0xBF58476D, 0x1CE4E5B9)
_SPLITMIX_MULTIPLIER_2 = (0x94D049BB, 0x133111EB)
_JUMP_LOW = (0xBEAC0467, 0xEBA5FACB)
_JUMP_HIGH = (0xD86B048B, 0x86AA9922)
_UNIT_FLOAT64 = np.float64(1.0) / np.float64(2.0 ** 53)
# The host's words, little-endian whatever the machine, so that byte p of a
# state holds its bits 8p to 8p + 7.
_WORDS = np.dtype("<u8")


# --- device functions (also what kernels import) ----------------------------------

@jit(device=True)
def _word(halves):
    """The uint64 whose high and low 32 bits are ``halves``."""
    return (uint64(halves[0]) << uint32(32)) | uint64(halves[1])


@jit(device=True)
def init_xoroshiro128p_state(states, index, seed):
    """Sets ``states[index]`` from a 64-bit seed through SplitMix64, so that
    small seeds do not start predictable sequences."""
    index = int64(index)
    z = uint64(seed) + _word(_SPLITMIX_INCREMENT)
    z = (z ^ (z >> uint32(30))) * _word(_SPLITMIX_MULTIPLIER_1)
    z = (z ^ (z >> uint32(27))) * _word(_SPLITMIX_MULTIPLIER_2)
    z = z ^ (z >> uint32(31))
    states[index].s0 = z
    states[index].s1 = z


@jit(device=True)
def rotl(x, k):
    """``x`` rotated left by ``k`` bits (0 < k < 64)."""
    x = uint64(x)
    k = uint32(k)
    return (x << k) | (x >> uint32(64 - k))


@jit(device=True)
def xoroshiro128p_next(states, index):
    """The next uint64 of ``states[index]``, which moves on one step."""
    index = int64(index)
    s0 = states[index].s0
    s1 = states[index].s1
    result = s0 + s1
    s1 = s1 ^ s0
    states[index].s0 = rotl(s0, uint32(55)) ^ s1 ^ (s1 << uint32(14))
    states[index].s1 = rotl(s1, uint32(36))
    return result


@jit(device=True)
def xoroshiro128p_jump(states, index):
    """Moves ``states[index]`` on by 2**64 steps."""
    index = int64(index)
    s0 = uint64(0)
    s1 = uint64(0)
    for word_index in range(2):
        word = _word(_JUMP_LOW)
        if word_index == 1:
            word = _word(_JUMP_HIGH)
        for bit in range(64):
            if (word >> uint32(bit)) & uint64(1):
                s0 = s0 ^ states[index].s0
                s1 = s1 ^ states[index].s1
            xoroshiro128p_next(states, index)
    states[index].s0 = s0
    states[index].s1 = s1


@jit(device=True)
def uint64_to_unit_float64(x):
    """A uint64 as a float64 in [0.0, 1.0): its top 53 bits over 2**53."""
    x = uint64(x)
    return float64(x >> uint32(11)) * _UNIT_FLOAT64


@jit(device=True)
def uint64_to_unit_float32(x):
    """A uint64 as a float32 in [0.0, 1.0): the float64 one, rounded."""
    return float32(uint64_to_unit_float64(x))


@jit(device=True)
def xoroshiro128p_uniform_float32(states, index):
    """A float32 in [0.0, 1.0) from ``states[index]`` (one step)."""
    return uint64_to_unit_float32(xoroshiro128p_next(states, index))


@jit(device=True)
def xoroshiro128p_uniform_float64(states, index):
    """A float64 in [0.0, 1.0) from ``states[index]`` (one step)."""
    return uint64_to_unit_float64(xoroshiro128p_next(states, index))


@jit(device=True)
def xoroshiro128p_normal_float32(states, index):
    """A float32 from the normal distribution (mean 0, sigma 1), by the
    Box-Muller transform of two float32 uniforms (two steps)."""
    u1 = xoroshiro128p_uniform_float32(states, index)
    u2 = xoroshiro128p_uniform_float32(states, index)
    return math.sqrt(float32(-2.0) * math.log(u1)) * math.cos(TWO_PI_FLOAT32 * u2)


@jit(device=True)
def xoroshiro128p_normal_float64(states, index):
    """A float64 from the normal distribution (two steps). As Numba's, it
    transforms two float32 uniforms, the logarithm taken in float32, so that
    the streams match Numba's."""
    u1 = xoroshiro128p_uniform_float32(states, index)
    u2 = xoroshiro128p_uniform_float32(states, index)
    return math.sqrt(float64(-2.0) * math.log(u1)) * math.cos(TWO_PI_FLOAT64 * u2)


# --- the host: states as a linear map over GF(2) ------------------------------------

def _host_word(halves):
    return (halves[0] << 32) | halves[1]


def _splitmix64(seed):
    """SplitMix64's output for ``seed`` (a Python int)."""
    z = (seed + _host_word(_SPLITMIX_INCREMENT)) & _MASK64
    z = ((z ^ (z >> 30)) * _host_word(_SPLITMIX_MULTIPLIER_1)) & _MASK64
    z = ((z ^ (z >> 27)) * _host_word(_SPLITMIX_MULTIPLIER_2)) & _MASK64
    return z ^ (z >> 31)


def _rotl(x, k):
    return (x << np.uint64(k)) | (x >> np.uint64(64 - k))


def _steps(s0, s1, count):
    """``count`` xoroshiro128+ steps of every state in (s0, s1), in place."""
    for _ in range(count):
        t = s1 ^ s0
        s0[:] = _rotl(s0, 55) ^ t ^ (t << np.uint64(14))
        s1[:] = _rotl(t, 36)


def _jump_columns():
    """The jump (2**64 steps) as a matrix: the images of the 128 basis states
    (bit b of s0 for b < 64, bit b - 64 of s1 after), by running Numba's jump
    over all of them at once."""
    bits = np.uint64(1) << np.arange(64, dtype=np.uint64)
    zeros = np.zeros(64, np.uint64)
    s0 = np.concatenate([bits, zeros])
    s1 = np.concatenate([zeros, bits])
    image0 = np.zeros(128, np.uint64)
    image1 = np.zeros(128, np.uint64)
    for word in (_host_word(_JUMP_LOW), _host_word(_JUMP_HIGH)):
        for bit in range(64):
            if (word >> bit) & 1:
                image0 ^= s0
                image1 ^= s1
            _steps(s0, s1, 1)
    return np.stack([image0, image1], axis=1).astype(_WORDS)


class _LinearMap:
    """A linear map of 128-bit states, applied by table: for each of the 16
    bytes of a state (little-endian words s0 then s1), the 256 XORs of the
    columns that byte's bits select."""

    def __init__(self, columns):
        self.columns = columns  # (128, 2): the image of each basis state
        tables = np.zeros((16, 256, 2), _WORDS)
        for bit in range(8):
            low, high = 1 << bit, 2 << bit
            tables[:, low:high] = tables[:, :low] ^ columns[bit::8][:, None, :]
        self.tables = tables

    def apply(self, states):
        """The images of ``states``, an (n, 2) array of words (s0, s1)."""
        states_bytes = np.ascontiguousarray(states, _WORDS).view(np.uint8).reshape(-1, 16)
        out = np.zeros((states_bytes.shape[0], 2), _WORDS)
        for position in range(16):
            out ^= self.tables[position].take(states_bytes[:, position], axis=0)
        return out

    def squared(self):
        return _LinearMap(self.apply(self.columns))


# _jump_powers[j] jumps 2**(64 + j) steps; built on first use, as far as
# needed, under the lock (each entry is the square of the one before).
_jump_powers = []
_jump_powers_lock = threading.Lock()


def _jump_power(j):
    if len(_jump_powers) <= j:
        with _jump_powers_lock:
            if not _jump_powers:
                _jump_powers.append(_LinearMap(_jump_columns()))
            while len(_jump_powers) <= j:
                _jump_powers.append(_jump_powers[-1].squared())
    return _jump_powers[j]


def _unsigned_64(value, what):
    """An integer argument as Numba's uint64() takes it: wrapped modulo 2**64."""
    try:
        return operator.index(value) & _MASK64
    except TypeError:
        raise TypeError(f"{what} must be an integer, got {value!r}") from None


def init_xoroshiro128p_states_cpu(states, seed, subsequence_start):
    """Fills the NumPy array ``states`` (of xoroshiro128p_dtype) on the host:
    state i is the seed's state jumped (subsequence_start + i) times."""
    _check_states(states, np.ndarray)
    seed = _unsigned_64(seed, "seed")
    subsequence_start = _unsigned_64(subsequence_start, "subsequence_start")
    count = states.shape[0]
    if count == 0:
        return
    first = _splitmix64(seed)
    words = np.empty((count, 2), _WORDS)
    start = np.array([[first, first]], _WORDS)
    # 1. The first state: jumped subsequence_start times, by its binary digits.
    j = 0
    while subsequence_start >> j:
        if (subsequence_start >> j) & 1:
            start = _jump_power(j).apply(start)
        j += 1
    words[0] = start[0]
    # 2. Doubling: states [m, 2m) are states [0, m) jumped m times.
    filled, j = 1, 0
    while filled < count:
        more = min(filled, count - filled)
        words[filled:filled + more] = _jump_power(j).apply(words[:more])
        filled += more
        j += 1
    states["s0"] = words[:, 0]
    states["s1"] = words[:, 1]


def _check_states(states, kind):
    """A 1-D array of xoroshiro128p_dtype (a NumPy array for the host
    function, a device array for init_xoroshiro128p_states), or TypeError."""
    dtype = getattr(states, "dtype", None)
    if not isinstance(states, kind) or dtype != xoroshiro128p_dtype or states.ndim != 1:
        what = "a NumPy array" if kind is np.ndarray else "a device array"
        got = (f"{type(states).__name__} of dtype {dtype} and {states.ndim} dimension(s)"
               if dtype is not None and hasattr(states, "ndim") else repr(states))
        raise TypeError(f"the random states must be {what}, 1-D, of dtype "
                        f"xoroshiro128p_dtype {xoroshiro128p_dtype}; got {got}")


def init_xoroshiro128p_states(states, seed, subsequence_start=0, stream=0):
    """Initialises the device array ``states`` for ``states.size`` generators
    (computed on the host, then copied on ``stream``): generator i starts
    (subsequence_start + i) * 2**64 steps into the seed's sequence, so no two
    overlap before a thread draws 2**64 numbers."""
    _check_states(states, DeviceNDArray)
    host = np.empty(states.shape, xoroshiro128p_dtype)
    init_xoroshiro128p_states_cpu(host, seed, subsequence_start)
    states.copy_to_device(host, stream=stream)


def create_xoroshiro128p_states(n, seed, subsequence_start=0, stream=0):
    """A new device array of ``n`` generator states, initialised as
    init_xoroshiro128p_states does."""
    states = device_array(n, dtype=xoroshiro128p_dtype, stream=stream)
    init_xoroshiro128p_states(states, seed, subsequence_start, stream)
    return states
