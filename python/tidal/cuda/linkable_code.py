"""numba-cuda's code objects for ``link=[...]`` (``cuda.CUSource``,
``cuda.PTXSource``, ``Cubin``, ``Fatbin``, ``Object``, ``Archive``,
``LTOIR``): code held in memory instead of a file (docs/cpp.md).

CUDA C++ (``CUSource``) goes through tidal's Clang path on both targets, as
a ``.cu`` file does; PTX (``PTXSource``) and the binaries (``Cubin``,
``Fatbin``, ``Object``, ``Archive``) are linked by the CUDA driver's JIT
linker on the cuda target, as ``.ptx``, ``.cubin``, ``.fatbin``, ``.o`` and
``.a`` files are, and refused on the cpu target at the call that needs them
(GPU machine code). ``LTOIR`` holding tidal's own LTO-IR (LLVM bitcode,
``cuda.compile(..., output='ltoir')``) is linked as a ``.bc`` file is, on
both targets; NVVM's LTO-IR (nvcc -dlto, NVRTC) needs nvJitLink, which
tidal does not use: a ``ValueError`` that says what to pass instead."""

import io
import os

__all__ = ["LinkableCode", "PTXSource", "CUSource", "Fatbin", "Cubin", "Object", "Archive",
           "LTOIR"]


class LinkableCode:
    """Code to link, held in memory: ``data`` (str, bytes, or a StringIO /
    BytesIO read when linked) and the ``name`` errors give it. numba-cuda's
    ``setup_callback``/``teardown_callback`` (run around the module's
    launches and unloading) and ``nrt`` are not supported: a
    NotImplementedError where given."""

    kind = None
    default_name = "<unnamed>"

    def __init__(self, data, name=None, setup_callback=None, teardown_callback=None,
                 nrt=False):
        if setup_callback and not callable(setup_callback):
            raise TypeError("setup_callback must be callable")
        if teardown_callback and not callable(teardown_callback):
            raise TypeError("teardown_callback must be callable")
        if setup_callback or teardown_callback or nrt:
            raise NotImplementedError(
                "tidal links code objects without numba-cuda's setup_callback, "
                "teardown_callback and nrt options")
        # Checked here, where the traceback shows the line that made it (at
        # the link, the error would come from the launch).
        if not isinstance(data, (str, bytes, bytearray, memoryview, io.StringIO, io.BytesIO)):
            raise TypeError(f"{type(self).__name__} data must be str or bytes (or a StringIO/"
                            f"BytesIO), not {type(data).__name__}")
        self._name = name
        self._data = data
        self.setup_callback = setup_callback
        self.teardown_callback = teardown_callback
        self.nrt = nrt

    @property
    def name(self):
        return self._name or self.default_name

    @property
    def data(self):
        if isinstance(self._data, (io.StringIO, io.BytesIO)):
            return self._data.getvalue()
        return self._data

    def __repr__(self):
        return f"<{type(self).__name__} {self.name}>"

    @staticmethod
    def from_path(path):
        """The code object of a file, by its extension (.cu, .ptx, .cubin,
        .fatbin, .o, .a/.lib, .ltoir), named by the file's stem as
        numba-cuda names it."""
        root, extension = os.path.splitext(os.fspath(path))
        kinds = {".cu": CUSource, ".ptx": PTXSource, ".cubin": Cubin, ".fatbin": Fatbin,
                 ".o": Object, ".a": Archive, ".lib": Archive, ".ltoir": LTOIR}
        if extension not in kinds:
            raise ValueError(f"Don't know how to link {path}")
        with open(path, "r" if extension in (".cu", ".ptx") else "rb") as file:
            data = file.read()
        return kinds[extension](data, name=os.path.basename(root))

    @classmethod
    def from_path_or_obj(cls, path_or_obj):
        """A path's code object (from_path), or a code object as it is."""
        if isinstance(path_or_obj, (str, os.PathLike)):
            return cls.from_path(path_or_obj)
        return path_or_obj

    def link_item(self):
        """(kind, name, payload, options) as link= hands files to the C++ half."""
        data = self.data
        if self.kind not in ("cu", "ptx"):
            if isinstance(data, str):
                raise TypeError(f"{type(self).__name__} data must be bytes (or a BytesIO), "
                                f"not str")
            if not isinstance(data, (bytes, bytearray, memoryview)):
                raise TypeError(f"{type(self).__name__} data must be bytes (or a BytesIO), "
                                f"not {type(data).__name__}")
            return binary_link_item(self.kind, self.name, bytes(data)) + ((),)
        if isinstance(data, (bytes, bytearray, memoryview)):
            data = bytes(data).decode("utf-8")
        if not isinstance(data, str):
            raise TypeError(f"{type(self).__name__} data must be str or bytes (or a StringIO/"
                            f"BytesIO), not {type(data).__name__}")
        return (self.kind, self.name, data, ())


# How each binary kind's files start (what the CUDA driver's linker checks).
_ELF = b"\x7fELF"
_MAGIC = {"cubin": (_ELF, "an ELF header"), "object": (_ELF, "an ELF header"),
          "fatbin": (b"\x50\xed\x55\xba", "the fatbin magic 0xBA55ED50"),
          "archive": (b"!<arch>\n", "an archive header (!<arch>)")}
_LLVM_BITCODE = b"BC\xc0\xde"
_NVVM_LTOIR = (0x7F4E43ED).to_bytes(4, "little")
_WHAT = {"cubin": "a cubin", "fatbin": "a fatbin", "object": "an object file",
         "archive": "an archive", "ltoir": "LTO-IR"}


def binary_link_item(kind, name, data):
    """(kind, name, payload) of a binary to link, checked: a cubin, fatbin,
    object or archive as the driver's linker takes it (cuda target); LTO-IR
    that is tidal's (LLVM bitcode) as 'bc', linked on both targets; NVVM's
    LTO-IR refused, saying why."""
    if kind == "ltoir":
        if data.startswith(_LLVM_BITCODE):
            return ("bc", name, data)
        made_by = ("NVVM's LTO-IR (nvcc -dlto, NVRTC, numba-cuda)" if
                   data.startswith(_NVVM_LTOIR) else "not LLVM bitcode")
        raise ValueError(
            f"cannot link LTO-IR {name!r}: it is {made_by}, which only NVIDIA's nvJitLink "
            f"links, and tidal does not use nvJitLink; link the CUDA C++ it was compiled "
            f"from (a .cu file or cuda.CUSource), or tidal's own LTO-IR "
            f"(cuda.compile(..., output='ltoir'), LLVM bitcode)")
    magic, header = _MAGIC[kind]
    if not data.startswith(magic):
        raise ValueError(f"cannot link {name!r}: it is not {_WHAT[kind]} (it does not start "
                         f"with {header})")
    return (kind, name, data)


class PTXSource(LinkableCode):
    """PTX source code in memory."""
    kind = "ptx"
    default_name = "<unnamed-ptx>"


class CUSource(LinkableCode):
    """CUDA C/C++ source code in memory."""
    kind = "cu"
    default_name = "<unnamed-cu>"


class Fatbin(LinkableCode):
    """A fatbin in memory (linked by the CUDA driver, cuda target)."""
    kind = "fatbin"
    default_name = "<unnamed-fatbin>"


class Cubin(LinkableCode):
    """An ELF cubin in memory (linked by the CUDA driver, cuda target)."""
    kind = "cubin"
    default_name = "<unnamed-cubin>"


class Object(LinkableCode):
    """An object file (nvcc -dc) in memory (linked by the CUDA driver, cuda
    target)."""
    kind = "object"
    default_name = "<unnamed-object>"


class Archive(LinkableCode):
    """An archive of objects in memory (linked by the CUDA driver, cuda
    target)."""
    kind = "archive"
    default_name = "<unnamed-archive>"


class LTOIR(LinkableCode):
    """LTO-IR in memory: tidal's (LLVM bitcode, cuda.compile(output='ltoir'))
    is linked on both targets; NVVM's needs nvJitLink, which tidal does not
    use."""
    kind = "ltoir"
    default_name = "<unnamed-ltoir>"
