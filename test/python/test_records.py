"""NumPy structured dtypes (records): a[i].field, a[i]['field'] and a[i][0]
read and write (also augmented), sub-array fields (1-D and N-D) as views and
assigned whole, nested records, whole records copied, record scalars passed
and written back, records as globals, constants and shared/local arrays, and
Numba's alignment rule, on every target."""

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

    read_only = np.zeros(1, PARTICLE)
    read_only.setflags(write=False)
    with pytest.raises(TypingError, match="cannot write to field 'mass' of a read-only record"):
        write_scalar[1, 1](read_only[0])

    strings = np.dtype([("name", "U5"), ("id", np.int32)])

    @cuda.jit
    def takes(a):
        pass

    with pytest.raises(TypeError, match="field 'name' is of dtype <U5, which kernels can't take"):
        takes[1, 1](np.zeros(2, strings))


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
    def by_run_time_number(particles, i, out):
        out[0] = particles[0][i]

    with pytest.raises(TypingError, match=r"test_records\.py:\d+:\d+: a record's field is named by "
                                          r"a string constant or a constant integer, not by an "
                                          r"integer computed at run time"):
        by_run_time_number[1, 1](np.zeros(2, PARTICLE), 1, np.zeros(1))

    @cuda.jit
    def out_of_range(particles, out):
        out[0] = particles[0][5]

    with pytest.raises(TypingError, match=r"field index 5 out of range for Record\(.*\), which has "
                                          r"5 fields"):
        out_of_range[1, 1](np.zeros(2, PARTICLE), np.zeros(1))

    @cuda.jit
    def write_scalar(record):
        record['mass'] = 2.0

    read_only = np.zeros(1, PARTICLE)
    read_only.setflags(write=False)
    with pytest.raises(TypingError, match="cannot write to field 'mass' of a read-only record"):
        write_scalar[1, 1](read_only[0])


def test_fields_by_position(target):
    """r[0] is the first field, as in Numba (a constant index)."""
    @cuda.jit
    def k(particles, out):
        i = cuda.grid(1)
        if i < particles.size:
            particles[i][1] = particles[i][0] * 3
            out[i] = particles[i][3]

    particles = np.zeros(4, PARTICLE)
    particles["x"] = np.arange(4)
    particles["id"] = np.arange(4) + 10
    out = np.zeros(4, np.int64)
    k[1, 4](particles, out)
    target.assert_result("k", particles["y"], np.arange(4) * 3.0)
    target.assert_result("k", out, np.arange(4) + 10)


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


def test_record_scalar_argument_is_written_back(target):
    """A record scalar argument is the record's own bytes on the cpu target
    and copied to the device and back on the cuda target, as Numba does: the
    kernel's writes reach it; one from a read-only array stays read-only."""
    @cuda.jit
    def write(r, out):
        for a in range(3):
            out[a] = r.h[a] * r.g
        r.g = 7
        r.h[0] = 1.5
        r['j'][1, 2] = 2.5

    recs = np.zeros(2, WITH_ARRAYS)
    rec = recs[0]
    rec["g"] = 3
    rec["h"] = [1.0, 2.0, 4.0]
    out = np.zeros(3, np.float32)
    write[1, 1](rec, out)
    target.assert_result("write", out, np.array([3.0, 6.0, 12.0], np.float32))
    target.assert_result("write", recs["g"], [7, 0])
    target.assert_result("write", recs["h"][0], np.array([1.5, 2.0, 4.0], np.float32))
    target.assert_result("write", recs["j"][0, 1, 2], 2.5)
    copied_back = [c["bytes"] for c in target.driver_calls("cuMemcpyDtoH_v2") or []]
    if target.mock:  # the record and out, each copied back once
        assert sorted(copied_back) == sorted([WITH_ARRAYS.itemsize, out.nbytes])

    @cuda.jit
    def write_sub_array(r):
        r.h[0] = 1.0

    recs.setflags(write=False)
    with pytest.raises(TypingError, match="read-only array"):
        write_sub_array[1, 1](recs[0])

    @cuda.jit
    def read(r, out):
        out[0] = r.g

    target.forget_driver_calls()
    read[1, 1](recs[0], out)
    target.assert_result("read", out[0], 7)
    if target.mock:  # a read-only record is not copied back
        assert [c["bytes"] for c in target.driver_calls("cuMemcpyDtoH_v2")] == [out.nbytes]


def test_whole_sub_array_assignment(target, rng):
    """r.h = array copies the elements (converted to the field's type, read
    from a view of any layout); r.h = number sets every element; a field of
    another record is an array too (Numba's dest['a'] = src['a'])."""
    @cuda.jit
    def k(recs, rows, fill):
        i = cuda.grid(1)
        if i < recs.size:
            recs[i].h = rows[i]            # float64 row into float32[3]
            if i + 2 <= rows.shape[0]:
                recs[i]['j'] = rows[i:i + 2, ::-1]
            else:
                recs[i]['j'] = fill
            recs[i].k = fill

    n = 6
    recs = np.zeros(n, WITH_ARRAYS)
    rows = rng.random((n + 1, 3))
    k[1, 8](recs, rows, np.int64(9))
    target.assert_result("k", recs["h"], rows[:n].astype(np.float32))
    j = np.full((n, 2, 3), 9.0)
    for i in range(n):
        if i + 2 <= rows.shape[0]:
            j[i] = rows[i:i + 2, ::-1]
    target.assert_result("k", recs["j"], j)
    target.assert_result("k", recs["k"], np.full((n, 5), 9))

    @cuda.jit
    def copy(index, src, dest):
        dest['h'] = src[index]['h']
        dest.g = src[index].g

    src = np.zeros(2, WITH_ARRAYS)
    src[1] = (5, [1, 2, 3], np.zeros((2, 3)), np.zeros(5))
    dest = np.zeros(1, WITH_ARRAYS)
    copy[1, 1](1, src, dest[0])
    target.assert_result("copy", dest["h"][0], np.array([1, 2, 3], np.float32))
    target.assert_result("copy", dest["g"][0], 5)


def test_whole_sub_array_assignment_errors():
    @cuda.jit
    def wrong_rank(recs, m):
        recs[0].j = m[0]

    with pytest.raises(TypingError, match=r"test_records\.py:\d+:\d+: cannot store a value of type "
                                          r"array\(float64, 1d, C\) into field 'j' of type "
                                          r"array\(float64, 2d, C\): give a number or an array of 2 "
                                          r"dimensions"):
        wrong_rank[1, 1](np.zeros(2, WITH_ARRAYS), np.zeros((2, 3)))


def test_unaligned_sub_array_is_an_error():
    packed = np.dtype([("flag", np.uint8), ("h", np.float32, 2)])  # h at byte 1

    @cuda.jit
    def k(recs):
        recs[0].h[0] = 1.0

    with pytest.raises(TypeError, match=r"array field 'h' starts at byte 1, not a multiple of its "
                                        r"elements' alignment \(4\)"):
        k[1, 1](np.zeros(2, packed))


POINT = np.dtype([("x", np.float32), ("y", np.float32)], align=True)
BODY = np.dtype([("id", np.int32), ("centre", POINT), ("corners", POINT, 2),
                 ("history", np.float64, 3)], align=True)


def test_nested_records_read_and_written(target):
    """A field whose dtype is a record is a view of its bytes: its fields,
    its sub-arrays and sub-arrays of records read and write in place, and a
    record of the same dtype can be stored into it whole."""
    @cuda.jit
    def k(bodies, origin, out):
        i = cuda.grid(1)
        if i < bodies.size:
            b = bodies[i]
            b.centre.x += 1
            b['centre']['y'] = b.id * 2
            b.corners[1].x = b.centre.x + b.corners[0].y
            b.history[2] = b.centre.y
            out[i] = b.corners[0].x + b.centre.x
            if b.id == 0:
                b.corners[0] = origin
                b.centre = b.corners[1]

    n = 4
    bodies = np.zeros(n, BODY)
    bodies["id"] = np.arange(n)
    bodies["centre"]["x"] = np.arange(n) * 10
    bodies["corners"]["x"][:, 0] = 0.5
    bodies["corners"]["y"][:, 0] = 0.25
    origin = np.zeros(1, POINT)
    origin[0] = (-1.0, -2.0)
    out = np.zeros(n)
    k[1, 4](bodies, origin[0], out)
    centre_x = np.arange(n) * 10 + 1.0
    target.assert_result("k", out, centre_x + 0.5)
    corner_x = centre_x + 0.25
    expected_centre_x = centre_x.copy()
    expected_centre_x[0] = corner_x[0]
    expected_centre_y = np.arange(n) * 2.0
    expected_centre_y[0] = 0.0
    target.assert_result("k", bodies["centre"]["x"], expected_centre_x)
    target.assert_result("k", bodies["centre"]["y"], expected_centre_y)
    target.assert_result("k", bodies["corners"]["x"][:, 1], corner_x)
    target.assert_result("k", bodies["corners"][0, 0].tolist(), (-1.0, -2.0))
    target.assert_result("k", bodies["history"][:, 2], np.arange(n) * 2.0)
    assert ("Record(id:int32, centre:Record(x:float32, y:float32), "
            "corners:Record(x:float32, y:float32)[2], history:float64[3])") in k.signatures[0]


def test_nested_record_errors():
    @cuda.jit
    def wrong_record(bodies, other):
        bodies[0].centre = other

    with pytest.raises(TypingError, match=r"test_records\.py:\d+:\d+: cannot store a value of type "
                                          r"Record\(x:float64\) into field 'centre' of Record\(.*\), "
                                          r"which is a Record\(x:float32, y:float32\)"):
        wrong_record[1, 1](np.zeros(2, BODY), np.zeros(1, [("x", np.float64)])[0])

    @cuda.jit
    def number_into_record(bodies):
        bodies[0].centre = 1.0

    with pytest.raises(TypingError, match="cannot store a value of type float64 into field 'centre'"):
        number_into_record[1, 1](np.zeros(2, BODY))

    @cuda.jit
    def record_into_number(bodies):
        bodies[0].id = bodies[1].centre

    with pytest.raises(TypingError, match=r"into field 'id' of Record\(.*\), which is a int32"):
        record_into_number[1, 1](np.zeros(2, BODY))

    @cuda.jit
    def missing(bodies):
        bodies[0].centre.z = 1

    with pytest.raises(TypingError, match=r"Record\(x:float32, y:float32\) has no field 'z'"):
        missing[1, 1](np.zeros(2, BODY))


def test_packed_field_is_not_aligned():
    """As on Numba's CUDA target, a field that a packed dtype (no
    align=True) puts at an offset its type can't be loaded from is an error
    where it is used."""
    packed = np.dtype([("a", np.int32), ("b", np.float64)])  # b at byte 4

    @cuda.jit
    def k(a):
        i = cuda.grid(1)
        a[i].a = a[i].b

    with pytest.raises(TypingError, match=r"test_records\.py:\d+:\d+: Record\(a:int32, b:float64\)"
                                          r"\.b of type float64 is not aligned"):
        k[1, 1](np.zeros(2, packed))

    @cuda.jit
    def only_a(a):
        a[0].a = 5

    recs = np.zeros(2, packed)
    only_a[1, 1](recs)  # a at byte 0 is aligned


GLOBAL_TABLE = np.array([(1.0, 2), (3.0, 4), (5.0, 6)], dtype=[("x", float), ("y", int)])
GLOBAL_RECORD = np.array([(2.5, 7)], dtype=[("x", float), ("y", int)])[0]
ALIGNED_TABLE = np.array([(1, 2, 0xDEADBEEF), (4, 5, 0xBEEFDEAD)],
                         dtype=np.dtype([("a", np.uint8), ("b", np.uint8), ("y", np.uint32)],
                                        align=True))
EMPTY_TABLE = np.array([], dtype=[("x", float), ("y", int)])
RECARRAY_TABLE = GLOBAL_TABLE.view(np.recarray)


def test_records_as_globals_and_constants(target):
    """A global array of records (a numpy.recarray too) and a global record
    scalar are frozen into constant memory, read-only; cuda.const.array_like
    takes a record array."""
    @cuda.jit
    def k(xs, ys, aligned, empty):
        i = cuda.grid(1)
        table = cuda.const.array_like(GLOBAL_TABLE)
        if i < table.size:
            xs[i] = table[i].x + GLOBAL_RECORD.x
            ys[i] = table[i]['y'] * GLOBAL_RECORD['y'] + RECARRAY_TABLE[i].y
        if i < ALIGNED_TABLE.size:
            aligned[i] = ALIGNED_TABLE[i].a + ALIGNED_TABLE[i].b + ALIGNED_TABLE[i].y
        empty[0] = len(cuda.const.array_like(EMPTY_TABLE))

    xs = np.zeros(3)
    ys = np.zeros(3, np.int64)
    aligned = np.zeros(2, np.uint64)
    empty = np.full(1, -1)
    k[1, 4](xs, ys, aligned, empty)
    target.assert_result("k", xs, GLOBAL_TABLE["x"] + 2.5)
    target.assert_result("k", ys, GLOBAL_TABLE["y"] * 8)
    target.assert_result("k", aligned, [3 + 0xDEADBEEF, 9 + 0xBEEFDEAD])
    target.assert_result("k", empty, [0])

    @cuda.jit
    def write_global(out):
        GLOBAL_TABLE[0].x = 1.0

    with pytest.raises(TypingError, match="cannot write to field 'x' of a read-only record"):
        write_global[1, 1](np.zeros(1))


def test_shared_and_local_arrays_of_records(target):
    """cuda.shared.array and cuda.local.array take a structured dtype (a
    NumPy dtype or Numba's Record type): arrays of records, copied whole and
    by field."""
    @cuda.jit
    def k(src, dst):
        shared = cuda.shared.array(16, dtype=BODY)
        scratch = cuda.local.array(2, BODY)
        t = cuda.threadIdx.x
        shared[t] = src[t]
        cuda.syncthreads()
        scratch[0] = shared[15 - t]
        scratch[1].id = shared[t].id + 100
        scratch[1].history = shared[t].history
        dst[t] = scratch[0]
        dst[t].history[0] = scratch[1].id + scratch[1].history[1]

    src = np.zeros(16, BODY)
    src["id"] = np.arange(16)
    src["history"][:, 1] = np.arange(16) * 0.5
    src["centre"]["x"] = np.arange(16) * 3
    dst = np.zeros(16, BODY)
    k[1, 16](src, dst)
    expected = src[::-1].copy()
    expected["history"][:, 0] = np.arange(16) + 100 + np.arange(16) * 0.5
    if target.ran("k"):
        np.testing.assert_array_equal(dst, expected)


def test_device_function_returns_a_record(target):
    """A device function may return a record of an array it was given (by
    reference, as the array's element) and its fields."""
    @cuda.jit(device=True)
    def first(records):
        return records[0]

    @cuda.jit(device=True)
    def first_field(record):
        return record[0]

    @cuda.jit
    def k(records, out, ids):
        out[0] = first(records)
        ids[0] = first_field(records[1])

    records = np.zeros(2, WITH_ARRAYS)
    records[0] = (4, [1, 2, 3], np.ones((2, 3)), np.arange(5))
    records[1]["g"] = 9
    out = np.zeros(1, WITH_ARRAYS)
    ids = np.zeros(1, np.int32)
    k[1, 1](records, out, ids)
    target.assert_result("k", out, records[:1])
    target.assert_result("k", ids, [9])


def test_signatures_with_nested_records_and_sub_arrays(target):
    """Numba's text form of a record type (nested Record(...) fields and
    nestedarray(float64, (2, 3)) fields) and its type object both declare a
    kernel's argument."""
    numba = pytest.importorskip("numba")
    nested = np.dtype([("id", np.int32), ("centre", POINT)], align=True)

    def k(records):
        records[0].centre.y = 2.5
        records[1].j[1, 2] = 4.0

    both = np.dtype([("id", np.int32), ("centre", POINT), ("j", np.float64, (2, 3))], align=True)
    text = "void(" + str(numba.from_dtype(both)[::1]) + ")"
    assert "nestedarray(float64, (2, 3))" in text and "centre[type=Record(" in text
    for launches, signature in enumerate((text, (numba.from_dtype(both)[::1],)), start=1):
        kernel = cuda.jit(signature)(k)
        records = np.zeros(2, both)
        kernel[1, 1](records)
        target.assert_result("k", records["centre"]["y"], [2.5, 0.0], launches=launches)
        target.assert_result("k", records["j"][1, 1, 2], 4.0, launches=launches)

    def reads(records, out):
        out[0] = records[0].centre.x

    declared = cuda.jit((numba.from_dtype(nested)[:], numba.float32[:]))(reads)
    assert "Record(id:int32, centre:Record(x:float32, y:float32))" in declared.signatures[0]

    with pytest.raises(TypeError, match="record field 'name' must be a number, a record or a "
                                        "nestedarray of either"):
        cuda.jit("void(array(Record(name[type=UniTuple(int64 x 2);offset=0];16;False), 1d, C))")(k)
