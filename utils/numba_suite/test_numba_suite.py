"""Tests of the suite's own tools: the import rewriting, the placeholders, the list."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import expectations  # noqa: E402
import rewrite  # noqa: E402
import tidal_names  # noqa: E402

NUMBA_SOURCE = '''\
import numpy as np
from numba import cuda, float32, njit
from numba.cuda.testing import (unittest,
                                CUDATestCase)
from numba.core import types
from numba.core.errors import TypingError, NumbaPerformanceWarning
from numba.cuda.tests.cudapy import recursion_usecases


class T(CUDATestCase):
    def test(self):
        from numba import cuda
        program = """\\
from numba import cuda
from numba.cuda import libdevice
print(1)
"""
        return program
'''


def test_rewrite_keeps_line_numbers_and_routes_names():
    rewritten = rewrite.rewrite_source(NUMBA_SOURCE, for_tidal=True)
    lines = rewritten.splitlines()
    assert len(lines) == len(NUMBA_SOURCE.splitlines())
    assert lines[1] == ("from tidal_names import lookup as _tidal_lookup; "
                        "cuda = _tidal_lookup('tidal', 'cuda'); "
                        "float32 = _tidal_lookup('tidal', 'float32'); from numba import njit")
    assert lines[2] == "from testing_for_tidal import unittest, CUDATestCase"
    assert lines[3] == ""
    assert lines[4] == "from numba.core import types"
    assert lines[5] == ("from tidal_names import lookup as _tidal_lookup; "
                        "TypingError = _tidal_lookup('tidal.errors', 'TypingError'); "
                        "NumbaPerformanceWarning = _tidal_lookup('tidal.errors', "
                        "'NumbaPerformanceWarning')")
    assert lines[6] == "from cudapy import recursion_usecases"
    assert lines[11] == ("        from tidal_names import lookup as _tidal_lookup; "
                         "cuda = _tidal_lookup('tidal', 'cuda')")
    assert lines[13] == "from tidal import cuda"
    assert lines[14] == "from tidal.cuda import libdevice"
    compile(rewritten, "rewritten.py", "exec")


def test_rewrite_for_the_simulator_changes_only_the_package_imports():
    rewritten = rewrite.rewrite_source(NUMBA_SOURCE, for_tidal=False)
    assert rewritten == NUMBA_SOURCE.replace("from numba.cuda.tests.cudapy import",
                                             "from cudapy import")


def test_a_name_tidal_lacks_fails_where_it_is_used():
    assert tidal_names.lookup("os", "path") is os.path
    missing = tidal_names.lookup("os", "no_such_name")
    with pytest.raises(tidal_names.MissingInTidal, match="tidal has no os.no_such_name"):
        missing(1)
    with pytest.raises(tidal_names.MissingInTidal):
        missing[1]
    with pytest.raises(tidal_names.MissingInTidal):
        missing.attribute
    assert isinstance(tidal_names.lookup("no_such_module", "x"), tidal_names.MissingName)


def test_the_list_keeps_its_reasons_and_catches_both_ways(tmp_path):
    path = tmp_path / "expected.txt"
    path.write_text("# comment\na.b.C.test_old  a reason written by hand\n")
    results = {"a.b.C.test_old": {"outcome": "error", "cause": "E: x"},
               "a.b.C.test_new": {"outcome": "fail", "cause": "F: y"},
               "a.b.C.test_pass": {"outcome": "pass"},
               "a.b.C.test_skip": {"outcome": "skip"}}
    count = expectations.write_expected_failures(
        results, lambda test_id, result: "new: " + result["cause"], str(path))
    assert count == 2
    assert expectations.read_expected_failures(str(path)) == {
        "a.b.C.test_new": "new: F: y", "a.b.C.test_old": "a reason written by hand"}
    expected = expectations.read_expected_failures(str(path))
    results["a.b.C.test_old"] = {"outcome": "pass"}
    results["a.b.C.test_pass"] = {"outcome": "timeout", "cause": "timeout"}
    assert expectations.compare(results, expected) == (["a.b.C.test_pass"], ["a.b.C.test_old"])


HANGING_AND_CRASHING = '''\
import os
import time
import unittest


class T(unittest.TestCase):
    def test_1_passes(self):
        pass

    def test_2_hangs(self):
        time.sleep(60)

    def test_3_kills_the_interpreter(self):
        os._exit(3)

    def test_4_fails(self):
        raise ValueError("first line\\nsecond line")

    def test_5_passes(self):
        pass


class Broken(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        raise RuntimeError("no set-up")

    def test_never_runs(self):
        pass
'''


def test_a_hang_and_a_crash_are_counted_and_the_module_goes_on(tmp_path):
    import scheduler
    (tmp_path / "package").mkdir()
    (tmp_path / "package" / "__init__.py").write_text("")
    (tmp_path / "package" / "test_module.py").write_text(HANGING_AND_CRASHING)
    ids = [f"package.test_module.T.test_{name}" for name in
           ("1_passes", "2_hangs", "3_kills_the_interpreter", "4_fails", "5_passes")]
    ids.append("package.test_module.Broken.test_never_runs")
    environment = scheduler.worker_environment("simulator", "")
    results = scheduler.run_tests(str(tmp_path), environment, ids, timeout=3)
    outcomes = [results[test_id]["outcome"] for test_id in ids]
    assert outcomes == ["pass", "timeout", "crash", "error", "pass", "error"]
    assert results[ids[2]]["cause"] == "crash: the process ended with status 3"
    assert results[ids[3]]["cause"] == "ValueError: first line"
    assert results[ids[5]]["cause"] == "fixture: RuntimeError: no set-up"


def test_update_of_some_modules_keeps_the_other_modules_lines(tmp_path):
    listed = tmp_path / "expected_failures.txt"
    listed.write_text("a.test_x.T.test_1  reason one\n"
                      "a.test_x.T.test_2  reason two\n"
                      "b.test_y.T.test_3  reason three\n")
    results = {"a.test_x.T.test_1": {"outcome": "pass"},
               "a.test_x.T.test_2": {"outcome": "fail"},
               "a.test_x.T.test_4": {"outcome": "error"}}
    count = expectations.write_expected_failures(results, lambda t, r: "new cause", path=listed,
                                                 partial=True)
    assert expectations.read_expected_failures(listed) == {
        "a.test_x.T.test_2": "reason two", "a.test_x.T.test_4": "new cause",
        "b.test_y.T.test_3": "reason three"}
    assert count == 3
    # A whole run drops what it did not see.
    expectations.write_expected_failures(results, lambda t, r: "new cause", path=listed)
    assert set(expectations.read_expected_failures(listed)) == {"a.test_x.T.test_2",
                                                                "a.test_x.T.test_4"}


def test_rewrite_routes_the_public_compiler_functions():
    source = ("from numba.cuda.compiler import compile_ptx_for_current_device, "
              "compile_kernel\n")
    (line,) = rewrite.rewrite_source(source, for_tidal=True).splitlines()
    assert line == ("from tidal_names import lookup as _tidal_lookup; "
                    "compile_ptx_for_current_device = "
                    "_tidal_lookup('tidal.cuda', 'compile_ptx_for_current_device'); "
                    "from numba.cuda.compiler import compile_kernel")
    assert rewrite.rewrite_source(source, for_tidal=False) == source
