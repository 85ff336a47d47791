"""datetime64 and timedelta64 arrays and scalars: int64 counts of NumPy's
units, as Numba types them; arithmetic in the finer unit of the two, NaT
kept (NaT in, NaT out; comparisons with NaT false, != true); ufuncs over
them; and the operations they refuse."""

import numpy as np
import pytest

from tidal import cuda, vectorize
from tidal.errors import TypingError

NAT_D = np.datetime64("NaT", "D")


def test_array_differences_and_sums(target):
    @cuda.jit
    def k(start, end, delta, later):
        for i in range(cuda.grid(1), delta.size, cuda.gridsize(1)):
            delta[i] = end[i] - start[i]
            later[i] = start[i] + delta[i] * 2

    start = np.arange("2005-02", "2006-02", dtype="datetime64[D]")
    end = start + np.arange(start.size) * 3
    end[4] = NAT_D
    delta = np.zeros_like(start, dtype="timedelta64[D]")
    later = np.zeros_like(start)
    k[1, 32](start, end, delta, later)
    target.assert_result("k", delta.view(np.int64), (end - start).view(np.int64))
    if target.ran("k"):
        np.testing.assert_array_equal(later, start + (end - start) * 2)
        assert np.isnat(delta[4]) and np.isnat(later[4])
    assert "array(datetime64[D], 1d, C)" in k.signatures[0]


def test_scalars_compare_and_convert_to_the_finer_unit(target):
    @cuda.jit
    def k(dates, target_date, step, base, matches, out, hours):
        for i in range(cuda.grid(1), matches.size, cuda.gridsize(1)):
            matches[i] = dates[i] == target_date
            out[i] = dates[i] - step
            hours[i] = dates[i] - base  # datetime64[D] - datetime64[h]: in hours

    dates = np.arange("2005-02", "2005-03", dtype="datetime64[D]")
    dates[7] = NAT_D
    matches = np.zeros(dates.size, np.bool_)
    out = np.zeros_like(dates)
    hours = np.zeros(dates.size, "timedelta64[h]")
    base = np.datetime64("2005-02-01T06", "h")
    k[1, 32](dates, dates[5], np.timedelta64(2, "D"), base, matches, out, hours)
    if target.ran("k"):
        assert list(matches.nonzero()[0]) == [5]
        np.testing.assert_array_equal(out, dates - np.timedelta64(2, "D"))
        np.testing.assert_array_equal(hours, dates - base)
    target.assert_result("k", matches.astype(np.int64), (dates == dates[5]).astype(np.int64))


def test_nat_comparisons_and_timedelta_division(target):
    a = np.array(["NaT", -7], "timedelta64[s]")
    b = np.array([3, 2], "timedelta64[s]")
    flags = np.zeros(4, np.bool_)
    ratio = np.zeros(2)
    whole = np.zeros(2, np.int64)

    @cuda.jit
    def k2(a, b, flags, ratio, whole, halves):
        flags[0] = a[0] == b[0]
        flags[1] = a[0] != b[0]
        flags[2] = a[0] < b[0]
        flags[3] = a[1] < b[1]
        ratio[0] = a[1] / b[1]
        ratio[1] = a[0] / b[1]
        whole[0] = a[1] // b[1]
        halves[0] = a[1] // 2
        halves[1] = a[0] * 3

    halves = np.zeros(2, "timedelta64[s]")
    k2[1, 1](a, b, flags, ratio, whole, halves)
    target.assert_result("k2", flags, [False, True, False, True])
    if target.ran("k2"):
        assert ratio[0] == -3.5 and np.isnan(ratio[1])
        assert whole[0] == -4  # floored, as NumPy's
        assert halves[0] == np.timedelta64(-4, "s") and np.isnat(halves[1])


def test_vectorize_over_datetimes(target):
    @vectorize(["timedelta64[D](datetime64[D], datetime64[D])"], target="cuda")
    def difference(start, end):
        return end - start

    start = np.arange("2005-02", "2005-04", dtype="datetime64[D]")
    end = start + 10
    result = difference(start, end)
    assert result.dtype == np.dtype("timedelta64[D]")
    if not target.mock:  # the mock driver runs nothing
        np.testing.assert_array_equal(result, end - start)


def test_refused_operations_are_located():
    @cuda.jit
    def add_dates(a, out):
        out[0] = a[0] + a[1]

    with pytest.raises(TypingError, match=r"test_datetime\.py:\d+:\d+: unsupported operand types "
                                          r"for \+: datetime64\[D\] and datetime64\[D\]"):
        add_dates[1, 1](np.zeros(2, "datetime64[D]"), np.zeros(1, "datetime64[D]"))

    @cuda.jit
    def into_ints(a, out):
        out[0] = a[0]

    with pytest.raises(TypingError, match=r"cannot convert datetime64\[D\] to int64"):
        into_ints[1, 1](np.zeros(1, "datetime64[D]"), np.zeros(1, np.int64))

    @cuda.jit
    def calendar(a, b, out):
        out[0] = a[0] - b[0]

    with pytest.raises(TypingError, match=r"datetime64\[M\] and datetime64\[D\]: their units "
                                          r"convert to no common one"):
        calendar[1, 1](np.zeros(1, "datetime64[M]"), np.zeros(1, "datetime64[D]"),
                       np.zeros(1, "timedelta64[D]"))


LAUNCH_DAY = np.datetime64("2005-02-03", "D")


def test_global_datetimes_and_integer_counts(target):
    @cuda.jit
    def k(a, is_nat, after, before):
        for i in range(a.size):
            is_nat[i] = a[i] == NAT_D         # NaT equals nothing, itself included
            after[i] = a[i] + 1               # one day later: an int counts the unit
            before[i] = LAUNCH_DAY - (i + 1)

    a = np.array(["2005-02-01", "NaT"], "datetime64[D]")
    is_nat = np.ones(2, np.bool_)
    after = np.zeros(2, "datetime64[D]")
    before = np.zeros(2, "datetime64[D]")
    k[1, 1](a, is_nat, after, before)
    target.assert_result("k", is_nat, [False, False])
    if not target.mock:
        np.testing.assert_array_equal(after, a + 1)
        np.testing.assert_array_equal(before, LAUNCH_DAY - np.arange(1, 3))
