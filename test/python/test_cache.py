"""The disk cache of @cuda.jit(cache=True) (python/tidal/cuda/caching.py,
python/src/DispatcherCache.cpp): hits in a new process and in a new module
of the same file, what the key holds (source, globals, device functions,
options), stale and broken entries, concurrent writers, Numba's errors and
dispatcher.stats."""

import ast
import importlib.util
import io
import itertools
import os
import pickle
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import tidal
from mock_driver import MOCK, play_raise
from tidal import cuda
from tidal.cuda import caching

SIGNATURE = "(array(float32, 1d, C))"

KERNELS = '''
import numpy as np
from tidal import cuda

FACTOR = {factor}


@cuda.jit(device=True)
def times(x):
    return x * FACTOR


@cuda.jit(cache=True{options})
def scale(a):
    i = cuda.grid(1)
    if i < a.shape[0]:
        a[i] = times(a[i]) + {offset}
'''

_names = itertools.count()


def write_kernels(folder, factor=3, offset=1, options=""):
    path = Path(folder) / "cached_kernels.py"
    path.write_text(KERNELS.format(factor=factor, offset=offset, options=options))
    return path


def load(path):
    """The module at path, imported afresh (a new Dispatcher, as in a new
    process, reading the same file)."""
    name = f"cached_kernels_{next(_names)}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_scale(module, target, factor=3, offset=1):
    a = np.arange(16, dtype=np.float32)
    expected = a * factor + offset
    target.forget_driver_calls()  # the mock's count of launches: this one
    module.scale[1, 16](a)
    target.assert_result("scale", a, expected)
    return module.scale.stats


def entries(folder, kind=None):
    return sorted(p.name for p in Path(folder).rglob("*" + caching.SUFFIX)
                  if kind is None or f".{kind}" in p.name)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("TIDAL_CACHE_DIR", str(folder))
    return folder


def test_a_new_module_of_the_same_file_hits(target, tmp_path, cache_dir):
    path = write_kernels(tmp_path)
    stats = run_scale(load(path), target)
    assert dict(stats.cache_misses) == {SIGNATURE: 1} and not stats.cache_hits
    stats = run_scale(load(path), target)
    assert dict(stats.cache_hits) == {SIGNATURE: 1} and not stats.cache_misses
    assert stats.cache_path.startswith(str(cache_dir))
    assert len(entries(cache_dir, target.name)) == 1
    if target.name == "cuda":
        # And the PTX, for the device's sm, in an entry of its own.
        assert len(entries(cache_dir, "ptx")) == 1


def test_a_hit_keeps_the_inspection_views(target, tmp_path, cache_dir):
    path = write_kernels(tmp_path)
    first = load(path)
    run_scale(first, target)
    second = load(path)
    run_scale(second, target)
    assert second.scale.stats.cache_hits[SIGNATURE] == 1
    assert second.scale.inspect_markers(SIGNATURE) == first.scale.inspect_markers(SIGNATURE)
    assert ".entry" in second.scale.inspect_asm(SIGNATURE)
    types = io.StringIO()
    second.scale.inspect_types(file=types)
    assert "a = array(float32, 1d, C)" in types.getvalue()


SCRIPT = '''
import sys
import numpy as np
sys.path.insert(0, {folder!r})
import cached_kernels
a = np.arange(16, dtype=np.float32)
cached_kernels.scale[1, 16](a)
stats = cached_kernels.scale.stats
print(repr((dict(stats.cache_hits), dict(stats.cache_misses), [float(x) for x in a[:3]])))
'''


def run_script(target, folder, env=None, script=SCRIPT):
    environment = dict(os.environ, **(env or {}))
    environment["TIDAL_TARGET"] = target.name
    environment["PYTHONPATH"] = os.path.dirname(os.path.dirname(tidal.__file__))
    if target.mock:
        environment["TIDAL_CUDA_DRIVER"] = str(MOCK)
    return subprocess.run([sys.executable, "-c", script.format(folder=str(folder))],
                          env=environment, capture_output=True, text=True, timeout=120)


def test_a_new_process_hits(target, tmp_path, cache_dir):
    write_kernels(tmp_path)
    first = run_script(target, tmp_path)
    assert first.returncode == 0, first.stderr
    second = run_script(target, tmp_path)
    assert second.returncode == 0, second.stderr
    hits, misses, _ = ast.literal_eval(first.stdout)
    assert (hits, misses) == ({}, {SIGNATURE: 1})
    hits, misses, values = ast.literal_eval(second.stdout)
    assert (hits, misses) == ({SIGNATURE: 1}, {})
    if target.computes:
        assert values == [1.0, 4.0, 7.0]


AFTER_A_HIT = SCRIPT + '''
from tidal import cuda


@cuda.jit
def fresh(a):
    i = cuda.grid(1)
    if i < a.shape[0]:
        a[i] = a[i] * 2 + 0.5


fresh[1, 16](a)
print(repr([float(x) for x in a[:3]]))
'''


def test_a_process_that_hit_compiles_new_kernels(target, tmp_path, cache_dir):
    # The second process's JIT is made for the entry's object (its data
    # layout from the entry, no TargetMachine yet); a kernel it then compiles
    # makes the TargetMachine and links into the same JIT.
    write_kernels(tmp_path)
    assert run_script(target, tmp_path).returncode == 0
    second = run_script(target, tmp_path, script=AFTER_A_HIT)
    assert second.returncode == 0, second.stderr
    first_line, second_line = second.stdout.splitlines()
    hits, misses, values = ast.literal_eval(first_line)
    assert (hits, misses) == ({SIGNATURE: 1}, {})
    if target.computes:
        assert values == [1.0, 4.0, 7.0]
        assert ast.literal_eval(second_line) == [2.5, 8.5, 14.5]


def test_the_default_folder_is_pycache_beside_the_source(target, tmp_path, monkeypatch):
    monkeypatch.delenv("TIDAL_CACHE_DIR", raising=False)
    path = write_kernels(tmp_path)
    stats = run_scale(load(path), target)
    assert stats.cache_path == str(tmp_path / "__pycache__")
    assert entries(tmp_path / "__pycache__", target.name)[0].startswith("cached_kernels.scale.")


@pytest.mark.parametrize("change", [
    {"offset": 2},                      # the kernel's source
    {"factor": 5},                      # a global it froze (in a device function)
    {"options": ", fastmath=True"},     # an option
])
def test_what_changes_the_code_misses(target, tmp_path, cache_dir, change):
    path = write_kernels(tmp_path)
    run_scale(load(path), target)
    before = entries(cache_dir, target.name)
    write_kernels(tmp_path, **change)
    stats = run_scale(load(path), target, factor=change.get("factor", 3),
                      offset=change.get("offset", 1))
    assert dict(stats.cache_misses) == {SIGNATURE: 1} and not stats.cache_hits
    # The entry of the edited file's older version is removed as the new
    # one is written (the function's index is stamped with its source).
    after = entries(cache_dir, target.name)
    assert len(before) == len(after) == 1 and before != after


def test_each_function_has_one_index_beside_its_entries(target, tmp_path, cache_dir):
    # Numba's layout, which its suite counts: one index per function, one
    # entry per specialisation; closures of one function with different
    # frozen values are entries of one index, kept side by side.
    path = tmp_path / "closures.py"
    path.write_text(textwrap.dedent("""
        import numpy as np
        from tidal import cuda

        def make(x):
            @cuda.jit(cache=True)
            def add(a):
                a[0] += x
            return add

        first, second = make(1), make(2)
    """))
    module = load(path)
    a = np.zeros(1)
    module.first[1, 1](a)
    module.first[1, 1](a)
    module.second[1, 1](a)
    folder = Path(module.first.stats.cache_path)
    names = sorted(os.listdir(folder))
    indexes = [n for n in names if n.endswith(".tidali")]
    assert indexes == ["closures.make.locals.add.tidali"], names
    assert len(entries(cache_dir, target.name)) == 2, names
    if target.computes:
        assert a[0] == 4
    # A process that only hits leaves every file as it was.
    stamps = {n: os.stat(folder / n).st_mtime_ns for n in names}
    module = load(path)
    module.first[1, 1](a)
    module.second[1, 1](a)
    assert {n: os.stat(folder / n).st_mtime_ns for n in os.listdir(folder)} == stamps


def test_an_edit_of_a_device_function_misses(target, tmp_path, cache_dir):
    path = write_kernels(tmp_path)
    run_scale(load(path), target)
    path.write_text(path.read_text().replace("return x * FACTOR", "return x * FACTOR - 1"))
    a = np.arange(16, dtype=np.float32)
    module = load(path)
    target.forget_driver_calls()
    module.scale[1, 16](a)
    target.assert_result("scale", a, np.arange(16, dtype=np.float32) * 3)
    assert dict(module.scale.stats.cache_misses) == {SIGNATURE: 1}


def test_an_edit_in_a_file_with_form_feeds_and_crlf_misses(target, tmp_path, cache_dir):
    # The key holds the kernel's source lines as linecache numbers them
    # (universal newlines), which is what the frontend compiles: a form feed
    # or a CRLF above the kernel must not shift which lines those are. An
    # edit of the kernel's last line that the bytecode does not see (a
    # comment) is a new key.
    path = tmp_path / "cached_kernels.py"
    text = KERNELS.format(factor=3, offset=1, options="").replace(
        "FACTOR = 3", "# page one\x0c page two\x0c page three\nFACTOR = 3")
    path.write_bytes(text.replace("\n", "\r\n").encode())
    run_scale(load(path), target)
    path.write_bytes(text.replace("+ 1", "+ 1  # edited").replace("\n", "\r\n").encode())
    stats = run_scale(load(path), target)
    assert dict(stats.cache_misses) == {SIGNATURE: 1} and not stats.cache_hits


def test_a_debug_kernel_has_its_own_entry(target, tmp_path, cache_dir, monkeypatch):
    path = write_kernels(tmp_path)
    run_scale(load(path), target)
    monkeypatch.setenv("TIDAL_CPU_DEBUG", "1")
    stats = run_scale(load(path), target)
    if target.name == "cpu":  # the cpu target's debug mode is another code
        assert dict(stats.cache_misses) == {SIGNATURE: 1}
    else:
        assert dict(stats.cache_hits) == {SIGNATURE: 1}


RAISING = '''
from tidal import cuda


@cuda.jit(cache=True, debug=True)
def check(x):
    if x[0] < 0:
        raise ValueError("negative input")
'''


def test_a_cached_debug_kernel_raises_what_it_raised(target, tmp_path, cache_dir):
    # From the cache, the cuda target reads the table of raise sites from the
    # entry's marker IR: the exception slot names the same raise.
    path = tmp_path / "cached_raise.py"
    path.write_text(RAISING)
    for outcome in ("cache_misses", "cache_hits"):
        module = load(path)
        module.check[1, 1](np.ones(1))
        assert dict(getattr(module.check.stats, outcome)) == {"(array(float64, 1d, C))": 1}
        play_raise(target, module.check, "negative input")
        with pytest.raises(ValueError, match=r"tid=\[0, 0, 0\] ctaid=\[0, 0, 0\]: negative input$"):
            module.check[1, 1](-np.ones(1))


def _damage_truncate(data):
    return data[:len(data) // 2]


def _damage_garbage(data):
    return bytes(range(256)) * 4


def _damage_flip_a_byte(data):
    return data[:-10] + bytes([data[-10] ^ 0xFF]) + data[-9:]


def _damage_wrong_version(data):
    return data.replace(b'"version": %d' % caching.FORMAT_VERSION, b'"version": 999', 1)


def _damage_empty(data):
    return b""


@pytest.mark.parametrize("damage", [_damage_truncate, _damage_garbage, _damage_flip_a_byte,
                                    _damage_wrong_version, _damage_empty],
                         ids=lambda f: f.__name__[len("_damage_"):])
def test_a_broken_entry_is_compiled_again(target, tmp_path, cache_dir, damage):
    path = write_kernels(tmp_path)
    run_scale(load(path), target)
    (entry,) = [p for p in cache_dir.rglob("*" + caching.SUFFIX) if f".{target.name}." in p.name]
    entry.write_bytes(damage(entry.read_bytes()))
    stats = run_scale(load(path), target)
    assert dict(stats.cache_misses) == {SIGNATURE: 1} and not stats.cache_hits
    # The compile wrote a whole entry again.
    stats = run_scale(load(path), target)
    assert dict(stats.cache_hits) == {SIGNATURE: 1}


def test_an_entry_that_does_not_link_is_a_miss(target, tmp_path, cache_dir):
    # A whole entry (checksum right) whose code is not an object file: the
    # C++ half rejects it, the cache counts a miss and compiles again.
    path = write_kernels(tmp_path)
    first = load(path)
    run_scale(first, target)
    cache = first.scale._cache
    kind = target.name
    fields = cache.load(kind, SIGNATURE)
    fields.pop("kernel_name")
    if "object" in fields:
        fields["object"] = b"not an object file"
    cache.save(kind, SIGNATURE, fields)
    assert_missed_then_written_again(path, target)


def assert_missed_then_written_again(path, target):
    """The entry at hand is refused (a miss, compiled again), and the compile
    wrote one that the next load hits."""
    stats = run_scale(load(path), target)
    assert dict(stats.cache_misses) == {SIGNATURE: 1} and not stats.cache_hits
    stats = run_scale(load(path), target)
    assert dict(stats.cache_hits) == {SIGNATURE: 1}


def test_an_object_for_another_data_layout_is_a_miss(target, tmp_path, cache_dir):
    # The cpu target's entries record the object's data layout, from which a
    # new process's JIT is made without a TargetMachine; an entry whose layout
    # is not the JIT's is refused and compiled again, one without the field
    # (an older entry) still loads.
    path = write_kernels(tmp_path)
    first = load(path)
    run_scale(first, target)
    cache, kind = first.scale._cache, target.name
    fields = cache.load(kind, SIGNATURE)
    if "object" not in fields:  # the cuda target keeps IR and PTX, no object
        assert "data_layout" not in fields
        return
    assert fields["data_layout"].startswith(b"e-m:e")
    older = dict(fields)
    del older["data_layout"]
    cache.save(kind, SIGNATURE, older)
    stats = run_scale(load(path), target)
    assert dict(stats.cache_hits) == {SIGNATURE: 1}
    fields["data_layout"] = b"E-m:e-p:32:32-i64:64"
    cache.save(kind, SIGNATURE, fields)
    assert_missed_then_written_again(path, target)


CONCURRENT = '''
import sys
import numpy as np
sys.path.insert(0, {folder!r})
import cached_kernels
a = np.arange(16, dtype=np.float32)
cached_kernels.scale[1, 16](a)
print("ok")
'''


def test_processes_writing_the_same_entry_at_once(target, tmp_path, cache_dir):
    write_kernels(tmp_path)
    environment = dict(os.environ, TIDAL_TARGET=target.name,
                       PYTHONPATH=os.path.dirname(os.path.dirname(tidal.__file__)))
    if target.mock:
        environment["TIDAL_CUDA_DRIVER"] = str(MOCK)
    processes = [subprocess.Popen([sys.executable, "-c", CONCURRENT.format(folder=str(tmp_path))],
                                  env=environment, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(4)]
    for process in processes:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0 and out == "ok\n", err
    # One whole entry, no temporary file left behind.
    assert len(entries(cache_dir, target.name)) == 1
    assert not [p for p in cache_dir.rglob(".tmp-*")]
    stats = run_scale(load(tmp_path / "cached_kernels.py"), target)
    assert dict(stats.cache_hits) == {SIGNATURE: 1}


def test_cache_needs_a_file():
    namespace = {"cuda": cuda}
    exec("def k(a):\n    a[0] = 1\n", namespace)
    with pytest.raises(RuntimeError, match=r"cannot cache function 'k': no locator available "
                                           r"for file '<string>'"):
        cuda.jit(cache=True)(namespace["k"])


def test_an_unwritable_cache_warns_and_runs(target, tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("TIDAL_CACHE_DIR", str(blocker))
    path = write_kernels(tmp_path)
    with pytest.warns(caching.CacheWarning, match="cannot write the cache of kernel 'scale'"):
        run_scale(load(path), target)


def test_stats_without_a_cache(target):
    @cuda.jit
    def plain(a):
        a[0] = 1

    plain[1, 1](np.zeros(1, np.int32))
    stats = plain.stats
    assert stats.cache_path is None and not stats.cache_hits and not stats.cache_misses


def test_a_cached_kernel_pickles(target, tmp_path, cache_dir):
    module = load(write_kernels(tmp_path))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = pickle.loads(pickle.dumps(module.scale))
    # The same process: the same kernel.
    assert again is module.scale


DECLARED = '''
from tidal import cuda


@cuda.jit("void(float32[::1], float32)", cache=True)
def add(a, x):
    i = cuda.grid(1)
    if i < a.shape[0]:
        a[i] += x
'''


def test_a_declared_signature_is_compiled_from_the_cache(target, tmp_path, cache_dir):
    path = tmp_path / "declared_kernels.py"
    path.write_text(DECLARED)
    signature = "(array(float32, 1d, C), float32)"
    first = load(path)
    assert dict(first.add.stats.cache_misses) == {signature: 1}  # compiled at declaration
    second = load(path)
    assert dict(second.add.stats.cache_hits) == {signature: 1}
    a = np.zeros(4, np.float32)
    target.forget_driver_calls()
    second.add[1, 4](a, 2)  # an int converts to the declared float32
    target.assert_result("add", a, np.full(4, 2, np.float32))


def test_record_layouts_that_print_alike_are_different_entries(target, tmp_path, cache_dir):
    # Numba's test_caching.record_return: a packed and an aligned record of
    # the same fields print alike ("Record(a:int8, b:float64)"); the key had
    # only that text, so the packed call read the aligned entry's code and
    # returned garbage. The key holds the exact layouts.
    path = tmp_path / "records.py"
    path.write_text(textwrap.dedent("""
        import numpy as np
        from tidal import cuda

        packed = np.dtype([('a', np.int8), ('b', np.float64)])
        aligned = np.dtype([('a', np.int8), ('b', np.float64)], align=True)

        @cuda.jit(cache=True)
        def record_return(r, ary, i):
            r[()] = ary[i]
    """))
    for attempt in range(2):  # the second module reads the entries
        module = load(path)
        for dtype in (module.aligned, module.packed):
            source = np.zeros(2, dtype)
            source[1] = (2, 43.5)
            out = np.zeros((), dtype)
            module.record_return[1, 1](out, source, np.asarray(1))
            if target.computes:
                assert tuple(out[()]) == (2, 43.5), (attempt, dtype)
        stats = module.record_return.stats
        assert sum(stats.cache_misses.values()) == (2 if attempt == 0 else 0), stats
    assert len(entries(cache_dir, target.name)) == 2
