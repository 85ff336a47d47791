"""NumPy structured dtypes (records): a[i].field and a[i]['field'] read and
write (also augmented), sub-array fields (1-D and N-D) as views, whole
records copied, records passed as (read-only) scalars, on every target."""

import numpy as np
import pytest

from tidal import cuda
from tidal.errors import TypingError, UnsupportedError

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

    nested = np.dtype([("inner", [("a", np.int32), ("b", np.float32)]), ("id", np.int32)])

    @cuda.jit
    def takes(a):
        pass

    with pytest.raises(TypeError, match="field 'inner' is neither a number nor an array of numbers"):
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


WITH_ARRAYS = np.dtype([("g", np.int32), ("h", np.float32, 3), ("j", np.float64, (2, 3)),
                        ("k", np.uint8, 5)], align=True)


def test_sub_array_fields_read_and_write(target, rng):
    """r.h[i] and r.j[i, j] read and write the record's own bytes; r['h'] is
    the same view; the view has the field's shape."""
    @cuda.jit
    def k(recs, out):
        i = cuda.grid(1)
        if i < recs.size:
            r = recs[i]
            total = 0.0
            for a in range(r.h.shape[0]):
                total += r.h[a]
            for a in range(2):
                for b in range(3):
                    r.j[a, b] = r.j[a, b] * 2 + r['h'][b]
            r.h[0] += 1
            recs[i]['k'][4] = r.k.size + r.j.shape[1]
            out[i] = total + r.g

    n = 20
    recs = np.zeros(n, WITH_ARRAYS)
    recs["g"] = np.arange(n)
    recs["h"] = rng.random((n, 3))
    recs["j"] = rng.random((n, 2, 3))
    before = recs.copy()
    out = np.zeros(n)
    k[1, 32](recs, out)
    target.assert_result("k", out, before["h"].astype(np.float64).sum(axis=1) + np.arange(n),
                         rtol=1e-6)
    j = before["j"] * 2 + before["h"][:, None, :].astype(np.float64)
    target.assert_result("k", recs["j"], j, rtol=1e-12)
    h = before["h"].copy()
    h[:, 0] += 1
    target.assert_result("k", recs["h"], h, rtol=1e-6)
    target.assert_result("k", recs["k"][:, 4], np.full(n, 8))
    target.assert_result("k", recs["k"][:, :4], before["k"][:, :4])
    assert "Record(g:int32, h:float32[3], j:float64[2][3], k:uint8[5])" in k.signatures[0]


def test_sub_array_of_a_record_scalar_is_read_only(target):
    @cuda.jit
    def read(r, out):
        for a in range(3):
            out[a] = r.h[a] * r.g

    rec = np.zeros(1, WITH_ARRAYS)[0]
    rec["g"] = 3
    rec["h"] = [1.0, 2.0, 4.0]
    out = np.zeros(3, np.float32)
    read[1, 1](rec, out)
    target.assert_result("read", out, np.array([3.0, 6.0, 12.0], np.float32))

    @cuda.jit
    def write(r):
        r.h[0] = 1.0

    with pytest.raises(TypingError, match="read-only array"):
        write[1, 1](rec)


def test_whole_sub_array_assignment_is_an_error():
    @cuda.jit
    def k(recs):
        recs[0].h = 1.0

    with pytest.raises(UnsupportedError, match=r"test_records\.py:\d+:\d+: assigning to the whole array "
                                        r"field 'h' of Record\(.*\) is not supported"):
        k[1, 1](np.zeros(2, WITH_ARRAYS))


def test_unaligned_sub_array_is_an_error():
    packed = np.dtype([("flag", np.uint8), ("h", np.float32, 2)])  # h at byte 1

    @cuda.jit
    def k(recs):
        recs[0].h[0] = 1.0

    with pytest.raises(TypeError, match=r"array field 'h' starts at byte 1, not a multiple of its "
                                        r"elements' alignment \(4\)"):
        k[1, 1](np.zeros(2, packed))
