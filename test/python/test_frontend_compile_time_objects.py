"""Methods of compile-time Python objects (a str literal, a math function)
are rejected with an UnsupportedError at the call, instead of crashing the
interpreter (/work/shared/bugs/str_method_call_segv.py): the bound method
made by the attribute access lives as long as the compilation."""

import math

import numpy as np
import pytest

from tidal import cuda
from tidal.errors import UnsupportedError


def test_str_method_call_is_unsupported():
    @cuda.jit
    def k(x):
        t = 'abc'.upper()
        x[0] = 1

    with pytest.raises(UnsupportedError, match="call to unsupported function 'str.upper'") as info:
        k[1, 1](np.zeros(1))
    assert info.value.column == 13


def test_str_join_is_unsupported():
    @cuda.jit
    def k(x):
        t = 'x'.join(())
        x[0] = 1

    with pytest.raises(UnsupportedError, match="'str.join'"):
        k[1, 1](np.zeros(1))


def test_method_of_a_math_function_is_unsupported():
    @cuda.jit
    def k(x):
        x[0] = math.sin.__call__(1.0)

    with pytest.raises(UnsupportedError, match="call to unsupported function"):
        k[1, 1](np.zeros(1))
