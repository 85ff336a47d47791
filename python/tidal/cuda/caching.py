"""The disk cache of @cuda.jit(cache=True) (docs/cache.md): where entries
live, what their key holds, how they are checked, read and written.

The C++ half (python/src/DispatcherCache.cpp) turns a specialisation into an
entry (a dict of str -> bytes fields) and back; this half keys it on
everything that changes the code, writes it atomically and trusts nothing it
reads: an entry with a wrong magic, version, key or checksum is a miss, and
the compile that follows replaces it."""

import collections
import hashlib
import io
import linecache
import os
import pickle
import sys
import types
import warnings

# json and tempfile are imported where they are used: a hit must stay cheap
# (tempfile alone costs about 10 ms to import).

# Bumped whenever the layout of an entry or of its key changes.
FORMAT_VERSION = 1
MAGIC = b"TIDAL-KERNEL-CACHE\n"
SUFFIX = ".tidalk"
# One index per function: the entries written from the current version of
# its source file, so that those of an older version are removed.
INDEX_SUFFIX = ".tidali"

class _CompileStats(tuple):
    """Numba's dispatcher.stats, a named tuple: where the cache is, and hits
    and misses per signature. Written out rather than made by
    collections.namedtuple, whose exec of the class's source was 0.15 ms of
    a cache hit's 2 (a new process imports this module for its first
    cache=True kernel)."""

    __slots__ = ()
    _fields = ("cache_path", "cache_hits", "cache_misses")

    def __new__(cls, cache_path, cache_hits, cache_misses):
        return tuple.__new__(cls, (cache_path, cache_hits, cache_misses))

    def __getnewargs__(self):
        return tuple(self)

    def __repr__(self):
        return ("_CompileStats(" +
                ", ".join(f"{name}={value!r}" for name, value in zip(self._fields, self)) + ")")

    def _asdict(self):
        return dict(zip(self._fields, self))

    cache_path = property(lambda self: self[0], doc="The cache's folder (None: no cache).")
    cache_hits = property(lambda self: self[1], doc="Hits per signature (a Counter).")
    cache_misses = property(lambda self: self[2], doc="Misses per signature (a Counter).")


CompileStats = _CompileStats

# Modules whose attributes a kernel reads are part of its key, except these,
# which only change with tidal's or Python's own build.
_STABLE_MODULES = ("math", "cmath", "numpy", "tidal", "numba", "builtins", "operator")


class CacheWarning(RuntimeWarning):
    """The kernel cache could not be written (the kernel still runs)."""


def _build_id():
    """tidal's version, its compiled part (frontend, plugin and runtime are
    one extension module) and the device functions it compiles into kernels
    (cmath's, tidal/cuda/_cmath.py): a rebuilt tidal never reads older
    entries."""
    from .. import __version__
    from .._tidal import __file__ as native_file
    parts = [__version__]
    for path in (native_file, os.path.join(os.path.dirname(__file__), "_cmath.py")):
        info = os.stat(path)
        parts += [path, info.st_size, info.st_mtime_ns]
    return " ".join(map(str, parts))


_BUILD_ID = None
_HOST = None


def _host_description():
    global _HOST
    if _HOST is None:
        from .._tidal import host_description
        _HOST = host_description()
    return _HOST


def _source_file(py_func):
    """The file a kernel was defined in, or None when it has none (exec(),
    an interactive session), as Numba's locators decide."""
    filename = py_func.__code__.co_filename
    if filename.startswith("<") and filename.endswith(">"):
        return None
    if not os.path.isfile(filename):
        return None
    return os.path.abspath(filename)


def make_private_folders(path):
    """Creates `path` and the folders above it that are missing, each 0700
    (os.makedirs gives its mode to the last one only)."""
    missing = []
    while not os.path.isdir(path):
        missing.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            pass


def _writable(directory):
    try:
        make_private_folders(directory)
    except OSError:
        return False
    return os.access(directory, os.W_OK | os.X_OK)


def cache_location(source_file):
    """(root, folder): the folder of a source file's entries and the root
    it is trusted from. TIDAL_CACHE_DIR (a folder per source folder below
    it), or __pycache__ beside the source, or, when that cannot be written,
    the user's cache folder (as Numba's user-wide locator)."""
    source_dir = os.path.dirname(source_file)
    # The source folder's path, spelled as one folder name.
    mangled = source_dir.strip(os.sep).replace(os.sep, "_").replace(":", "_") or "root"
    root = os.environ.get("TIDAL_CACHE_DIR")
    if root:
        root = os.path.abspath(root)
        return root, os.path.join(root, mangled)
    beside = os.path.join(source_dir, "__pycache__")
    if _writable(beside):
        return beside, beside
    user = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    root = os.path.join(user, "tidal")
    return root, os.path.join(root, mangled)


def cache_directory(source_file):
    """The folder of a source file's entries (cache_location)."""
    return cache_location(source_file)[1]


def distrust(root, path):
    """Why `path` (the cache's root or a folder or file below it) could
    have been written by someone else, or None: every folder from `root`
    down to it, and it, must be owned by this user and not writable by
    group or others, as ssh checks its files. What does not exist yet is
    not checked (nothing there to load)."""
    uid = os.geteuid()
    relative = os.path.relpath(path, root)
    current = root
    for part in [""] + ([] if relative == os.curdir else relative.split(os.sep)):
        current = os.path.join(current, part) if part else current
        try:
            info = os.stat(current)
        except (FileNotFoundError, NotADirectoryError):
            return None  # nothing there (a folder that cannot be made: CacheWarning)
        except OSError as error:
            return f"{current} cannot be checked ({error.strerror})"
        if info.st_uid != uid:
            return f"{current} is owned by uid {info.st_uid}, not by this user (uid {uid})"
        if info.st_mode & 0o022:
            who = " and ".join(name for bit, name in ((0o020, "group"), (0o002, "others"))
                               if info.st_mode & bit)
            return f"{current} is writable by {who} (mode {info.st_mode & 0o7777:04o})"
    return None


_WARNED = set()


def warn_untrusted(what, why):
    """The warning of an untrusted cache, once per (what, why)."""
    if (what, why) in _WARNED:
        return
    _WARNED.add((what, why))
    from ..errors import UntrustedCacheWarning
    warnings.warn(f"not using the {what}: {why}: anyone who can write there could run code "
                  f"in this process; compiling instead, and writing nothing there",
                  UntrustedCacheWarning, stacklevel=3)


def _source_lines(filename):
    """The lines of a source file as linecache gives them. A UTF-8 file
    (Python's default encoding) is read directly: linecache's reading
    (tokenize's encoding detection) was a tenth of a cache hit. Files with a
    coding cookie, and sources that only linecache holds (exec'd code that
    tidal registered), go through linecache."""
    try:
        with open(filename, "rb") as file:
            data = file.read()
        head = data.split(b"\n", 2)[:2]
        if not any(b"coding" in line and line.lstrip().startswith(b"#") for line in head):
            # Universal newlines, as linecache reads: str.splitlines would
            # also split at form feeds and other separators, and the
            # function's lines would be the wrong ones.
            return io.StringIO(data.decode("utf-8"), newline=None).readlines()
    except (OSError, UnicodeDecodeError, ValueError):
        pass
    return linecache.getlines(filename)


class _Fingerprint:
    """A hash of a function's source and of everything it freezes: the
    globals and closure variables it names (numbers, tuples, arrays, the
    attributes it reads of user modules) and, recursively, the device
    functions it calls."""

    def __init__(self):
        self.hash = hashlib.sha256()
        self.seen = set()

    def add(self, *items):
        for item in items:
            data = item if isinstance(item, bytes) else str(item).encode()
            self.hash.update(len(data).to_bytes(8, "little"))
            self.hash.update(data)

    def function(self, py_func):
        if id(py_func) in self.seen:
            self.add("seen", py_func.__qualname__)
            return
        self.seen.add(id(py_func))
        code = py_func.__code__
        self.add("function", code.co_filename, py_func.__qualname__)
        codes = list(self._codes(code))
        # Its source text, as the frontend reads it (linecache), from its
        # first decorator to its last line.
        last = max((line for c in codes for _, _, line in c.co_lines() if line), default=0)
        lines = _source_lines(code.co_filename)
        self.add("source", "".join(lines[code.co_firstlineno - 1:last]))
        names = []
        for c in codes:
            self.add(c.co_code, c.co_names, c.co_varnames, c.co_freevars, c.co_cellvars,
                     c.co_firstlineno, c.co_linetable)
            for const in c.co_consts:
                if not isinstance(const, types.CodeType):
                    self.add(type(const).__name__, repr(const))
            names.extend(c.co_names)
        attributes = set(names)
        namespace = py_func.__globals__
        for name in dict.fromkeys(names):
            if name in namespace:
                self.add("global", name)
                self.value(namespace[name], attributes)
        for name, cell in zip(code.co_freevars, py_func.__closure__ or ()):
            self.add("closure", name)
            try:
                self.value(cell.cell_contents, attributes)
            except ValueError:  # an empty cell
                self.add("empty")

    @staticmethod
    def _codes(code):
        yield code
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                yield from _Fingerprint._codes(const)

    def value(self, value, attributes=()):
        if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
            self.add(type(value).__name__, repr(value))
        elif isinstance(value, (tuple, list)):
            self.add(type(value).__name__, len(value))
            for item in value:
                self.value(item)
        elif isinstance(value, types.ModuleType):
            self.add("module", value.__name__)
            if value.__name__.split(".")[0] not in _STABLE_MODULES:
                # The attributes a kernel may read of it (mod.N).
                for name in sorted(attributes):
                    if name in value.__dict__ and not isinstance(value.__dict__[name],
                                                                 types.ModuleType):
                        self.add("attribute", name)
                        self.value(value.__dict__[name])
        elif hasattr(value, "py_func") and (getattr(value, "__tidal_device__", False) or
                                            getattr(value, "__tidal_kernel__", False)):
            self.add("tidal function", repr(sorted(value.options.items())),
                     getattr(value, "signatures", None) if
                     getattr(value, "__tidal_device__", False) else "")
            self.function(value.py_func)
        elif type(value).__name__ != "ndarray" and not isinstance(value, type) and \
                hasattr(value, "__cuda_array_interface__"):
            # A device array is captured by reference: its pointer is in the
            # code, which no later process may reuse (numba-cuda's error).
            raise pickle.PicklingError(
                "Cannot serialize kernels or device functions referencing global device "
                "arrays. Pass the array(s) as arguments to the kernel instead.")
        elif type(value).__name__ == "ndarray":
            self.add("ndarray", value.dtype.str, value.shape)
            self.add(hashlib.sha256(value.tobytes()).digest())
        elif hasattr(value, "dtype") and hasattr(value, "item") and not isinstance(value, type):
            self.add("scalar", value.dtype.str, repr(value.item()))
        elif isinstance(value, types.FunctionType):
            self.add("python function", value.__module__, value.__qualname__)
            self.function(value)
        elif isinstance(value, type) or callable(value):
            self.add("callable", getattr(value, "__module__", ""),
                     getattr(value, "__qualname__", repr(value)))
        else:
            # Anything else: its type and repr (a repr with an address only
            # makes the key never match, which is safe).
            self.add("object", type(value).__qualname__, repr(value))

    def digest(self):
        return self.hash.hexdigest()


def _function_name(py_func):
    return getattr(py_func, "__qualname__", py_func.__name__).replace("<locals>", "locals")


class KernelCache:
    """One kernel's entries on disk, and its hits and misses. The C++ half
    calls load(kind, signature, exact), save(kind, signature, fields, exact)
    and reject(kind, signature, why, exact); kind is "cpu", "cuda" or
    "ptx<sm>", signature the argument types as Numba prints them (the
    stats' keys), exact their mangled names (record layouts that print
    alike differ there)."""

    def __init__(self, dispatcher):
        py_func = dispatcher.py_func
        source = _source_file(py_func)
        if source is None:
            raise RuntimeError(
                f"cannot cache function {_function_name(py_func)!r}: no locator available "
                f"for file {py_func.__code__.co_filename!r}")
        self.dispatcher = dispatcher
        self.source_file = source
        self.cache_root, self.cache_path = cache_location(source)
        stem = os.path.splitext(os.path.basename(source))[0]
        self.prefix = f"{stem}.{_function_name(py_func)}"
        self.hits = collections.Counter()
        self.misses = collections.Counter()
        self.exact = {}  # signature -> its exact types, as the C++ half gave them

    # The key ----------------------------------------------------------------

    def key(self, kind, signature, exact=""):
        """Everything the code of (kind, signature) depends on, hashed.
        Without `exact`, the one the C++ half last gave for the signature."""
        if exact:
            self.exact[signature] = exact
        else:
            exact = self.exact.get(signature, "")
        global _BUILD_ID
        if _BUILD_ID is None:
            _BUILD_ID = _build_id()
        target = "cpu" if kind == "cpu" else "cuda"
        options = dict(self.dispatcher._tidal_options(target))
        # Extensions change the arguments, never the code.
        for name in ("cache", "extensions"):
            options.pop(name, None)
        other = {k: v for k, v in self.dispatcher.options.items()
                 if k not in ("cache", "extensions")}
        fingerprint = _Fingerprint()
        fingerprint.add(FORMAT_VERSION, _BUILD_ID, sys.version, kind, signature, exact,
                        repr(sorted(options.items())), repr(sorted(other.items(), key=str)))
        if kind == "cpu":
            fingerprint.add(_host_description())
        fingerprint.function(self.dispatcher.py_func)
        return fingerprint.digest()

    def path(self, kind, key):
        return os.path.join(self.cache_path, f"{self.prefix}.{kind}.{key[:24]}{SUFFIX}")

    # Reading -----------------------------------------------------------------

    def load(self, kind, signature, exact=""):
        """The entry's fields, or None (a miss: no file, or one that is not
        exactly what this key wrote)."""
        key = self.key(kind, signature, exact)
        fields = None
        path = self.path(kind, key)
        if self._trusted(path):
            try:
                with open(path, "rb") as file:
                    fields = _decode(file.read(), key)
            except OSError:
                pass
        self._count(kind, signature, fields is not None)
        return fields

    def _trusted(self, path):
        """Whether `path`, and every folder from the cache's root down to
        it, is this user's alone (distrust); else warns, once."""
        why = distrust(self.cache_root, path)
        if why is not None:
            warn_untrusted(f"kernel cache in {self.cache_path}", why)
        return why is None

    def reject(self, kind, signature, why, exact=""):
        """An entry that the C++ half could not use: a miss after all, and
        removed so that the compile that follows writes a good one."""
        if kind in ("cpu", "cuda"):
            self.hits[signature] -= 1
            if self.hits[signature] <= 0:
                del self.hits[signature]
            self.misses[signature] += 1
        try:
            os.unlink(self.path(kind, self.key(kind, signature, exact)))
        except OSError:
            pass

    def _count(self, kind, signature, hit):
        if kind in ("cpu", "cuda"):  # a specialisation (ptx<sm> is a part of one)
            (self.hits if hit else self.misses)[signature] += 1

    # Writing -----------------------------------------------------------------

    def save(self, kind, signature, fields, exact=""):
        """Writes the entry: to a file of its own in the folder, then renamed
        over the entry, so that a reader sees a whole entry or none, and
        processes that write the same entry at once each leave a whole one."""
        import tempfile
        key = self.key(kind, signature, exact)
        data = _encode(fields, key)
        temporary = None
        if not self._trusted(self.path(kind, key)):  # the folders, and an entry there
            return
        try:
            make_private_folders(self.cache_path)
            handle, temporary = tempfile.mkstemp(prefix=".tmp-", suffix=SUFFIX,
                                                 dir=self.cache_path)
            with os.fdopen(handle, "wb") as file:
                file.write(data)
            os.chmod(temporary, 0o644)  # as other files of __pycache__ (mkstemp's is 0600)
            os.replace(temporary, self.path(kind, key))
            temporary = None
            self._index(os.path.basename(self.path(kind, key)))
        except OSError as error:
            warnings.warn(f"cannot write the cache of kernel {_function_name(self.dispatcher.py_func)!r} "
                          f"in {self.cache_path}: {error}", CacheWarning, stacklevel=2)
        finally:
            if temporary is not None:
                try:
                    os.unlink(temporary)
                except OSError:
                    pass


    def _index(self, entry):
        """Adds the entry's file to the function's index, stamped with its
        source file's modification time and size (as Numba's index is).
        An index of another stamp lists entries of an older source, which no
        key will match again: their files are removed and the index starts
        anew. Hits never read or write it (an entry is found by its key), so
        a process that only hits leaves the folder as it was. Processes that
        write at once may lose a name from the index: the entry stays
        usable, and only its removal waits."""
        import json
        import tempfile
        path = os.path.join(self.cache_path, self.prefix + INDEX_SUFFIX)
        source = os.stat(self.source_file)
        stamp = [source.st_mtime_ns, source.st_size]
        try:
            with open(path) as file:
                index = json.load(file)
            if not isinstance(index, dict) or not isinstance(index.get("entries"), list):
                index = None
        except (OSError, ValueError):
            index = None
        if index is None or index.get("version") != FORMAT_VERSION or index.get("stamp") != stamp:
            for name in (index or {}).get("entries", []):
                if isinstance(name, str) and name != entry and os.path.basename(name) == name:
                    try:
                        os.unlink(os.path.join(self.cache_path, name))
                    except OSError:
                        pass
            index = {"version": FORMAT_VERSION, "stamp": stamp, "entries": []}
        if entry in index["entries"]:
            return
        index["entries"].append(entry)
        handle, temporary = tempfile.mkstemp(prefix=".tmp-", suffix=INDEX_SUFFIX,
                                             dir=self.cache_path)
        try:
            with os.fdopen(handle, "w") as file:
                json.dump(index, file)
            os.chmod(temporary, 0o644)
            os.replace(temporary, path)
        except OSError:
            os.unlink(temporary)
            raise


def _encode(fields, key):
    """MAGIC, a JSON header line (version, key, field sizes, checksum), the
    fields' bytes one after another."""
    import json
    names = sorted(fields)
    body = b"".join(fields[name] for name in names)
    header = {"version": FORMAT_VERSION, "key": key,
              "fields": [[name, len(fields[name])] for name in names],
              "checksum": hashlib.sha256(body).hexdigest()}
    return MAGIC + json.dumps(header).encode() + b"\n" + body


def _decode(data, key):
    """The fields of an entry, or None unless it is whole and for `key`."""
    if not data.startswith(MAGIC):
        return None
    end = data.find(b"\n", len(MAGIC))
    if end < 0:
        return None
    import json
    try:
        header = json.loads(data[len(MAGIC):end])
        if header["version"] != FORMAT_VERSION or header["key"] != key:
            return None
        body = memoryview(data)[end + 1:]
        if sum(size for _, size in header["fields"]) != len(body) or \
                hashlib.sha256(body).hexdigest() != header["checksum"]:
            return None
        fields, offset = {}, 0
        for name, size in header["fields"]:
            fields[str(name)] = bytes(body[offset:offset + size])
            offset += size
        return fields
    except (ValueError, KeyError, TypeError):
        return None
