"""A disk cache entry is code: tidal loads one only when every folder from
the cache's root down to it, and the entry itself, are the user's alone
(owned by this user, not writable by group or others), as ssh checks its
files; otherwise it warns once (UntrustedCacheWarning), compiles, and
writes nothing there (issue 27 §3). Both caches: kernels' (cache=True,
python/tidal/cuda/caching.py) and compiled CUDA C++'s (cxx/, in
TIDAL_CACHE_DIR/cxx). Folders tidal creates are 0700; a truncated,
corrupted or foreign entry is a miss."""

import ast
import os
import stat
import subprocess
import sys
import warnings

import numpy as np
import pytest

from child_processes import python_environment
from mock_driver import MOCK
from test_cache import SIGNATURE, entries, load, run_scale, write_kernels
from tidal.cuda import caching
from tidal.errors import UntrustedCacheWarning

# A user id that is not this process's (tests run as root can chown to it).
OTHER_UID = os.geteuid() + 4242

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user "
                                                          "needs root")


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("TIDAL_CACHE_DIR", str(folder))
    caching._WARNED.clear()  # once per process: each test sees its own warning
    return folder


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_folders_tidal_creates_are_private(target, tmp_path, cache_dir):
    path = write_kernels(tmp_path)
    run_scale(load(path), target)
    (entry,) = [p for p in cache_dir.rglob("*" + caching.SUFFIX) if f".{target.name}." in p.name]
    assert mode(cache_dir) == 0o700 and mode(entry.parent) == 0o700
    assert mode(entry) & 0o022 == 0


def _make_world_writable_root(cache_dir, entry):
    os.chmod(cache_dir, 0o777)
    return str(cache_dir), "is writable by group and others (mode 0777)"


def _make_group_writable_entry(cache_dir, entry):
    os.chmod(entry, 0o664)
    return str(entry), "is writable by group (mode 0664)"


def _make_others_writable_folder(cache_dir, entry):
    os.chmod(entry.parent, 0o702)
    return str(entry.parent), "is writable by others (mode 0702)"


def _make_foreign_entry(cache_dir, entry):
    os.chown(entry, OTHER_UID, -1)
    return str(entry), f"is owned by uid {OTHER_UID}, not by this user (uid {os.geteuid()})"


def _make_foreign_folder(cache_dir, entry):
    os.chown(entry.parent, OTHER_UID, -1)
    return str(entry.parent), f"is owned by uid {OTHER_UID}"


UNTRUSTED = [_make_world_writable_root, _make_group_writable_entry,
             _make_others_writable_folder,
             pytest.param(_make_foreign_entry, marks=needs_root),
             pytest.param(_make_foreign_folder, marks=needs_root)]


def _name(case):
    return case.__name__[len("_make_"):]


@pytest.mark.parametrize("untrust", UNTRUSTED, ids=_name)
def test_an_entry_others_could_have_written_is_not_loaded(target, tmp_path, cache_dir, untrust):
    path = write_kernels(tmp_path)
    run_scale(load(path), target)
    (entry,) = [p for p in cache_dir.rglob("*" + caching.SUFFIX) if f".{target.name}." in p.name]
    written = entry.read_bytes()
    where, why = untrust(cache_dir, entry)
    with pytest.warns(UntrustedCacheWarning) as caught:
        stats = run_scale(load(path), target)  # compiled, and right
    assert dict(stats.cache_misses) == {SIGNATURE: 1} and not stats.cache_hits
    (message,) = {str(w.message) for w in caught}
    assert message.startswith(f"not using the kernel cache in {entry.parent}: {where} {why}")
    assert "compiling instead, and writing nothing there" in message
    # Nothing written there: the entry is the one that was.
    assert entry.read_bytes() == written
    assert not [p for p in cache_dir.rglob(".tmp-*")]
    # Once per process: the next load misses without a word.
    with warnings.catch_warnings():
        warnings.simplefilter("error", UntrustedCacheWarning)
        stats = run_scale(load(path), target)
    assert dict(stats.cache_misses) == {SIGNATURE: 1}


def test_an_untrusted_folder_gets_no_entries(target, tmp_path, cache_dir):
    cache_dir.mkdir()
    os.chmod(cache_dir, 0o777)
    path = write_kernels(tmp_path)
    with pytest.warns(UntrustedCacheWarning, match=r"is writable by group and others"):
        run_scale(load(path), target)
    assert entries(cache_dir) == [] and list(cache_dir.iterdir()) == []


def test_a_sticky_shared_root_is_refused_too(target, tmp_path, cache_dir):
    # /tmp's mode: others may not replace what they do not own, but they may
    # create the folders tidal would use.
    cache_dir.mkdir()
    os.chmod(cache_dir, 0o1777)
    path = write_kernels(tmp_path)
    with pytest.warns(UntrustedCacheWarning, match=r"mode 1777"):
        run_scale(load(path), target)


def test_the_pycache_root_is_checked(target, tmp_path, monkeypatch):
    monkeypatch.delenv("TIDAL_CACHE_DIR", raising=False)
    caching._WARNED.clear()
    path = write_kernels(tmp_path)
    run_scale(load(path), target)
    pycache = tmp_path / "__pycache__"
    assert entries(pycache, target.name)
    os.chmod(pycache, 0o775)
    with pytest.warns(UntrustedCacheWarning, match=rf"{pycache} is writable by group"):
        stats = run_scale(load(path), target)
    assert dict(stats.cache_misses) == {SIGNATURE: 1}


def test_distrust_names_the_first_folder_at_fault(tmp_path):
    root = tmp_path / "root"
    (root / "a" / "b").mkdir(parents=True, mode=0o700)
    os.chmod(root, 0o700)
    leaf = root / "a" / "b" / "entry"
    leaf.write_text("")
    os.chmod(leaf, 0o600)
    assert caching.distrust(str(root), str(leaf)) is None
    assert caching.distrust(str(root), str(root / "a" / "missing" / "x")) is None
    os.chmod(root / "a", 0o730)
    assert caching.distrust(str(root), str(leaf)) == \
        f"{root / 'a'} is writable by group (mode 0730)"


# --- the disk cache of compiled CUDA C++ -------------------------------------

CXX_SCRIPT = r'''
import warnings
caught = warnings.catch_warnings(record=True)
record = caught.__enter__()
warnings.simplefilter("always")
import numpy as np
import tidal._cxx as cxx
from tidal import cuda

lib = cuda.include({source!r})


@cuda.jit
def step(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = lib.step(x[i])


x = np.arange(4, dtype=np.float32)
step[1, 4](x)
print(repr((cxx.cache_counts(), [float(v) for v in x],
            [(type(w.message).__name__, str(w.message)) for w in record
             if type(w.message).__name__ == "UntrustedCacheWarning"])))
'''


def run_cxx(target, tmp_path, cache, **settings):
    (tmp_path / "step.cu").write_text("__device__ float step(float x) { return x + 1; }\n")
    script = CXX_SCRIPT.format(source=str(tmp_path / "step.cu"))
    environment = python_environment(TIDAL_TARGET=target.name, TIDAL_CACHE_DIR=str(cache),
                                     **settings)
    if target.mock:
        environment["TIDAL_CUDA_DRIVER"] = str(MOCK)
    done = subprocess.run([sys.executable, "-c", script], env=environment,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    counts, values, caught = ast.literal_eval(done.stdout.strip().splitlines()[-1])
    if target.computes:
        assert values == [1.0, 2.0, 3.0, 4.0]
    return counts, caught


@pytest.mark.parametrize("untrust", UNTRUSTED, ids=_name)
def test_compiled_cxx_others_could_have_written_is_not_loaded(target, tmp_path, untrust):
    cache = tmp_path / "cache"
    counts, caught = run_cxx(target, tmp_path, cache)
    assert counts["disk_writes"] == 1 and caught == []
    assert mode(cache) == 0o700 and mode(cache / "cxx") == 0o700  # created private
    (entry,) = (cache / "cxx").glob("*.tcxx")
    assert mode(entry) & 0o022 == 0
    written = entry.read_bytes()
    where, why = untrust(cache, entry)
    counts, caught = run_cxx(target, tmp_path, cache)
    assert counts["disk_hits"] == 0 and counts["compiles"] == 1 and counts["disk_writes"] == 0
    (warning,) = caught
    assert warning[0] == "UntrustedCacheWarning"
    assert warning[1].startswith(f"not using the compiled CUDA C++ cache in {cache / 'cxx'}: "
                                 f"{where} {why}"), warning
    assert entry.read_bytes() == written and len(list((cache / "cxx").iterdir())) == 1


def test_an_untrusted_cxx_folder_gets_no_entries(target, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    os.chmod(cache, 0o777)
    counts, caught = run_cxx(target, tmp_path, cache)
    assert counts["disk_writes"] == 0 and [c[0] for c in caught] == ["UntrustedCacheWarning"]
    assert list(cache.iterdir()) == []


@pytest.mark.parametrize("damage", [
    lambda data: data[:len(data) // 2],                          # truncated
    lambda data: data[:-100] + bytes(b ^ 0x5A for b in data[-100:]),  # corrupted bitcode
    lambda data: data.replace(b"TIDAL-CXX 1", b"TIDAL-CXX 9", 1),    # another format
    lambda data: b"",
], ids=["truncated", "corrupted", "other-format", "empty"])
def test_a_broken_cxx_entry_is_a_miss(target, tmp_path, damage):
    cache = tmp_path / "cache"
    run_cxx(target, tmp_path, cache)
    (entry,) = (cache / "cxx").glob("*.tcxx")
    entry.write_bytes(damage(entry.read_bytes()))
    counts, caught = run_cxx(target, tmp_path, cache)
    assert counts["disk_hits"] == 0 and counts["compiles"] == 1 and counts["disk_writes"] == 1
    assert caught == []
    counts, _ = run_cxx(target, tmp_path, cache)  # written whole again
    assert counts["disk_hits"] == 1 and counts["compiles"] == 0
