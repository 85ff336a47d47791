"""Enum and IntEnum members in kernels, as Numba types them: as globals,
as kernel and device-function arguments and results; an IntEnum member is
an int, an Enum member is compared (==, !=, is, is not) by class and value;
Color['red'] and .value; and the errors."""

from enum import Enum, IntEnum

import numpy as np
import pytest

from tidal import cuda
from tidal.errors import TypingError


class Color(Enum):
    red = 1
    green = 2


class Planet(Enum):
    EARTH = (5.976e+24, 6.37814e6)
    MARS = (6.421e+23, 3.3972e6)


class Shape(IntEnum):
    circle = 2
    square = 500


class Level(IntEnum):
    two = 2


def test_compare_members_as_python_does(target):
    @cuda.jit
    def compare(a, b, out):
        out[0] = a == b
        out[1] = a != b
        out[2] = a is b
        out[3] = a is not b

    pairs = [(Color.red, Color.red), (Color.red, Color.green), (Planet.EARTH, Planet.EARTH),
             (Planet.EARTH, Planet.MARS), (Shape.circle, Level.two), (Color.green, Shape.circle)]
    for n, (a, b) in enumerate(pairs):
        out = np.zeros(4, np.bool_)
        compare[1, 1](a, b, out)
        target.assert_result("compare", out, [a == b, a != b, a is b, a is not b], launches=n + 1)


def test_members_as_globals_lookups_and_values(target):
    @cuda.jit
    def k(x, out):
        out[0] = Color.red == Color.green
        out[1] = Color["green"] == Color.green
        out[2] = x - Shape.square if x > Shape.square else x + Shape.circle
        out[3] = Planet.MARS.value[0] > 1e23
        out[4] = Color.green.value * 10

    out = np.zeros(5, np.int64)
    k[1, 1](600, out)
    target.assert_result("k", out, [0, 1, 100, 1, 20])
    assert "int64" in k.signatures[0]


def test_members_through_device_functions(target):
    @cuda.jit(device=True)
    def pick(flag):
        return Color.red if flag else Color.green

    @cuda.jit(device=True)
    def is_red(c):
        return c == Color.red

    @cuda.jit
    def k(flag, shape, out):
        out[0] = pick(flag) == Color.red
        out[1] = is_red(pick(not flag))
        out[2] = shape * 2

    out = np.zeros(3, np.int64)
    k[1, 1](True, Shape.square, out)
    target.assert_result("k", out, [1, 0, 1000])
    assert "IntEnumMember(<enum 'Shape'>, int64)" in k.signatures[0]


def test_enum_errors_are_located():
    @cuda.jit
    def arithmetic(out):
        out[0] = Color.red + 1

    with pytest.raises(TypingError, match=r"test_enums\.py:\d+:\d+: cannot compute with "
                                          r"EnumMember\(<enum 'Color'>, int64\)"):
        arithmetic[1, 1](np.zeros(1))

    @cuda.jit
    def order(a, out):
        out[0] = a < Color.green

    with pytest.raises(TypingError, match="Enum members are only compared with ==, !=, is and is not"):
        order[1, 1](Color.red, np.zeros(1))
