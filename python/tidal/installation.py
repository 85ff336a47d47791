"""Where tidal's files are, found from the package's own location: an
installed package (pip) holds them beside itself (``tidal/lib``,
``tidal/bin``, ``tidal/include``, ``tidal/docs``); the build tree
(``PYTHONPATH=build/python``) has them two levels up (``build/lib``,
``build/bin``). Nothing here depends on the checkout the package was built
from. libdevice comes from a CUDA toolkit, found as the compiler finds it
(llvm-plugin/Libdevice.h).
"""

import os

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_BUILD_TREE = os.path.dirname(os.path.dirname(PACKAGE_DIR))  # build/python/tidal -> build


def _first_existing(*candidates):
    for candidate in candidates:
        if os.path.exists(candidate):
            return candidate
    return None


def plugin_path():
    """TidalPasses.so, for ``opt -load-pass-plugin=...`` (None if absent)."""
    return _first_existing(os.path.join(PACKAGE_DIR, "lib", "TidalPasses.so"),
                           os.path.join(_BUILD_TREE, "lib", "TidalPasses.so"))


def tidalc_path():
    """The tidalc program (None if absent)."""
    return _first_existing(os.path.join(PACKAGE_DIR, "bin", "tidalc"),
                           os.path.join(_BUILD_TREE, "bin", "tidalc"))


def cmake_dir():
    """The folder of TidalConfig.cmake, for an out-of-tree pass plugin's
    ``cmake -DTidal_DIR=...`` (docs/research.md; None if absent)."""
    return _first_existing(os.path.join(PACKAGE_DIR, "lib", "cmake", "tidal"),
                           os.path.join(_BUILD_TREE, "lib", "cmake", "tidal"))


def include_dir():
    """The headers of the plugin's host ABI and passes (installed package only)."""
    return _first_existing(os.path.join(PACKAGE_DIR, "include"))


def docs_dir():
    """markers.md and plugin.md (installed package only)."""
    return _first_existing(os.path.join(PACKAGE_DIR, "docs"))


def libdevice_path():
    """libdevice.10.bc: TIDAL_LIBDEVICE, then $CUDA_HOME, then /usr/local/cuda."""
    override = os.environ.get("TIDAL_LIBDEVICE")
    if override:
        return override if os.path.exists(override) else None
    home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
    return _first_existing(os.path.join(home, "nvvm", "libdevice", "libdevice.10.bc"))


def llvm_version():
    """The version of the libLLVM this process loaded with tidal's
    extension (LLVM's C API, LLVMGetVersion), or None."""
    import ctypes
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "libLLVM" in line}
    except OSError:
        return None
    for path in sorted(paths):
        try:
            get_version = ctypes.CDLL(path).LLVMGetVersion
        except (OSError, AttributeError):
            continue
        parts = [ctypes.c_uint() for _ in range(3)]
        get_version(*map(ctypes.byref, parts))
        return ".".join(str(part.value) for part in parts)
    return None
