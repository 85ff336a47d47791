"""The differential check in make check: 300 random programs of the
language's subset (difftest.py), each compiled for the cpu target and
compared with CPython running the same function per thread. Any number more
runs with `/usr/bin/python3 test/python/difftest.py --seed S --count N`."""

import sys

import pytest

import difftest

CHUNK = 50


@pytest.mark.parametrize("first_seed", range(0, 300, CHUNK))
def test_programs_agree_with_cpython(first_seed, tmp_path):
    sys.path.insert(0, str(tmp_path))
    failures = []
    try:
        for seed in range(first_seed, first_seed + CHUNK):
            message, source, _ = difftest.run_one(seed, str(tmp_path))
            if message is not None:
                failures.append(f"seed {seed}: {message}\n{source}")
    finally:
        sys.path.remove(str(tmp_path))
    assert not failures, "\n\n".join(failures[:3])
