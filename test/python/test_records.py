"""NumPy structured dtypes (records): a[i].field read and write (also
augmented), whole records copied, records passed as (read-only) scalars, on
every target."""

import numpy as np
import pytest

from tidal import cuda
from tidal.errors import TypingError

PARTICLE = np.dtype([("x", np.float32), ("y", np.float32), ("mass", np.float64),
                     ("id", np.int16), ("alive", np.bool_)], align=True)


def test_fields_read_write_and_augmented(target, rng):
    @cuda.jit
    def step(particles, dt, out):
        i = cuda.grid(1)
        if i < particles.size:
            p = particles[i]
            p.x += dt * p.mass
            particles[i].y = p.x * 2
            out[i] = p.id + p.alive
            if p.id % 2 == 0:
                p.alive = False

    n = 100
    particles = np.zeros(n, PARTICLE)
    particles["x"] = rng.random(n)
    particles["mass"] = rng.random(n)
    particles["id"] = np.arange(n)
    particles["alive"] = True
    before = particles.copy()
    out = np.zeros(n, np.int64)
    step[1, 128](particles, np.float32(0.5), out)
    if target.ran("step"):
        x = (before["x"] + np.float32(0.5) * before["mass"]).astype(np.float32)
        np.testing.assert_allclose(particles["x"], x, rtol=1e-6)
        np.testing.assert_allclose(particles["y"], particles["x"] * 2, rtol=1e-6)
        np.testing.assert_array_equal(out, np.arange(n) + 1)
        np.testing.assert_array_equal(particles["alive"], np.arange(n) % 2 == 1)
    assert "Record(x:float32, y:float32, mass:float64, id:int16, alive:bool)" in step.signatures[0]


def test_record_copy_and_record_scalar_argument(target):
    @cuda.jit
    def k(src, dst, template):
        i = cuda.grid(1)
        if i < src.size:
            dst[i] = src[src.size - 1 - i]
            dst[i].mass = dst[i].mass + template.mass

    src = np.zeros(10, PARTICLE)
    src["id"] = np.arange(10)
    src["mass"] = np.arange(10) * 1.5
    dst = np.zeros(10, PARTICLE)
    template = np.zeros(1, PARTICLE)[0]
    template["mass"] = 100.0
    k[1, 16](src, dst, template)
    target.assert_result("k", dst["id"], np.arange(10)[::-1])
    target.assert_result("k", dst["mass"], np.arange(10)[::-1] * 1.5 + 100.0)


def test_record_errors():
    @cuda.jit
    def missing(particles):
        particles[0].velocity = 1

    with pytest.raises(TypingError, match="has no field 'velocity'"):
        missing[1, 1](np.zeros(2, PARTICLE))

    @cuda.jit
    def write_scalar(record):
        record.mass = 2.0

    with pytest.raises(TypingError, match="cannot write to field 'mass' of a read-only record"):
        write_scalar[1, 1](np.zeros(1, PARTICLE)[0])

    nested = np.dtype([("pos", np.float32, (3,)), ("id", np.int32)])

    @cuda.jit
    def takes(a):
        pass

    with pytest.raises(TypeError, match="field 'pos' is not a number"):
        takes[1, 1](np.zeros(2, nested))


def test_fields_by_string_constant(target, rng):
    """r['x'] reads and writes the same field as r.x, also augmented, also on
    a[i]['x'] directly (Numba's spelling in its record tests)."""
    @cuda.jit
    def k(particles, out):
        i = cuda.grid(1)
        if i < particles.size:
            p = particles[i]
            p['x'] += p['mass']
            particles[i]['y'] = p.x * 2
            out[i] = particles[i]['id'] + p['alive']

    n = 50
    particles = np.zeros(n, PARTICLE)
    particles["x"] = rng.random(n)
    particles["mass"] = rng.random(n)
    particles["id"] = np.arange(n)
    particles["alive"] = True
    before = particles.copy()
    out = np.zeros(n, np.int64)
    k[1, 64](particles, out)
    x = (before["x"] + before["mass"]).astype(np.float32)
    target.assert_result("k", particles["x"], x, rtol=1e-6)
    target.assert_result("k", particles["y"], x * 2, rtol=1e-6)
    target.assert_result("k", out, np.arange(n) + 1)


def test_field_by_string_errors():
    @cuda.jit
    def missing(particles):
        particles[0]['velocity'] = 1

    with pytest.raises(TypingError, match=r"test_records\.py:\d+:\d+: .*has no field 'velocity'"):
        missing[1, 1](np.zeros(2, PARTICLE))

    @cuda.jit
    def by_number(particles, out):
        out[0] = particles[0][1]

    with pytest.raises(TypingError, match=r"test_records\.py:\d+:\d+: a record's field is named by "
                                          r"a string constant, not by int64"):
        by_number[1, 1](np.zeros(2, PARTICLE), np.zeros(1))

    @cuda.jit
    def write_scalar(record):
        record['mass'] = 2.0

    with pytest.raises(TypingError, match="cannot write to field 'mass' of a read-only record"):
        write_scalar[1, 1](np.zeros(1, PARTICLE)[0])
