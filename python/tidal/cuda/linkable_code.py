"""numba-cuda's code objects for ``link=[...]`` (``cuda.CUSource``,
``cuda.PTXSource``, ``Cubin``, ``Fatbin``, ``Object``, ``Archive``,
``LTOIR``): code held in memory instead of a file (docs/cpp.md).

CUDA C++ (``CUSource``) goes through tidal's Clang path on both targets, as
a ``.cu`` file does; PTX (``PTXSource``) is linked by the CUDA driver's JIT
linker on the cuda target, as a ``.ptx`` file is, and refused on the cpu
target. The binary kinds are made for numba-cuda's nvJitLink linker, which
tidal does not use: giving one to ``link=`` is a ``ValueError`` that says
what to pass instead."""

import io

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

    def link_item(self):
        """(kind, name, payload, options) as link= hands files to the C++ half."""
        if self.kind not in ("cu", "ptx"):
            raise ValueError(
                f"cannot link {type(self).__name__} {self.name!r}: tidal links CUDA C++ "
                f"(cuda.CUSource, .cu files) through its Clang and PTX (cuda.PTXSource, .ptx "
                f"files) through the CUDA driver; {type(self).__name__} objects are for "
                f"numba-cuda's nvJitLink, which tidal does not use: link the CUDA C++ or PTX "
                f"they were made from instead")
        data = self.data
        if isinstance(data, (bytes, bytearray, memoryview)):
            data = bytes(data).decode("utf-8")
        if not isinstance(data, str):
            raise TypeError(f"{type(self).__name__} data must be str or bytes (or a StringIO/"
                            f"BytesIO), not {type(data).__name__}")
        return (self.kind, self.name, data, ())


class PTXSource(LinkableCode):
    """PTX source code in memory."""
    kind = "ptx"
    default_name = "<unnamed-ptx>"


class CUSource(LinkableCode):
    """CUDA C/C++ source code in memory."""
    kind = "cu"
    default_name = "<unnamed-cu>"


class Fatbin(LinkableCode):
    """An ELF fatbin in memory (not linked by tidal)."""
    kind = "fatbin"
    default_name = "<unnamed-fatbin>"


class Cubin(LinkableCode):
    """An ELF cubin in memory (not linked by tidal)."""
    kind = "cubin"
    default_name = "<unnamed-cubin>"


class Object(LinkableCode):
    """An object file in memory (not linked by tidal)."""
    kind = "object"
    default_name = "<unnamed-object>"


class Archive(LinkableCode):
    """An archive of objects in memory (not linked by tidal)."""
    kind = "archive"
    default_name = "<unnamed-archive>"


class LTOIR(LinkableCode):
    """NVVM LTO-IR in memory (not linked by tidal)."""
    kind = "ltoir"
    default_name = "<unnamed-ltoir>"
