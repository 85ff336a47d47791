"""Exceptions that tidal raises for programs it can't compile."""


class CompileError(Exception):
    """A kernel tidal rejects. The message names file:line:col and shows the
    source line with a caret; the parts are attributes too."""

    def __init__(self, message, file=None, line=0, column=0, end_column=0,
                 reason=None):
        # Exception's, never the next class's: under tidal.install_as_numba_cuda()
        # TypingError is Numba's TypingError too, whose __init__ restyles the message.
        Exception.__init__(self, message)
        self.msg = message  # as Numba's errors
        self.loc = None
        self.file = file
        self.line = line
        self.column = column
        self.end_column = end_column
        self.reason = reason if reason is not None else message


class TypingError(CompileError):
    """Types that don't fit: an undefined name, a bad operand, ..."""


class UnsupportedError(CompileError):
    """Python that kernels can't contain: with, try, lists, generators, ..."""


class _Warning(Warning):
    """The base of tidal's warnings. Under tidal.install_as_numba_cuda() each
    is Numba's class of that name too (NumbaPerformanceWarning, ...); this
    keeps the message as given (Numba's __init__ restyles it) and gives the
    `msg` and `loc` attributes Numba's warnings have."""

    def __init__(self, *args):
        Warning.__init__(self, *args)
        self.msg = args[0] if args else ""
        self.loc = None


class PerformanceWarning(_Warning):
    """A launch that runs slower on a GPU than it could: a grid too small to
    fill the GPU, a host array copied to and from the device at each launch.
    Given on both targets (on the cpu target, once per kernel for a host
    array: it says what a GPU's launch would cost). Numba's
    NumbaPerformanceWarning, under that name too, so that warning filters
    written for Numba work. Switched off by
    TIDAL_CUDA_LOW_OCCUPANCY_WARNINGS=0 / TIDAL_CUDA_WARN_ON_IMPLICIT_COPY=0,
    or by Numba's config of those names (numba.core.config, when the program
    imported it) or NUMBA_ environment variables."""


NumbaPerformanceWarning = PerformanceWarning


class UntrustedCacheWarning(_Warning):
    """A disk cache entry that someone else could have written: a folder
    from the cache's root down to the entry, or the entry, is owned by
    another user or writable by group or others (as ssh checks its files).
    An entry is code that tidal would run, so it is not loaded: the kernel
    (or CUDA C++) is compiled instead, and nothing is written there. Given
    once per folder and reason (docs/cache.md)."""


class InvalidConfigWarning(_Warning):
    """Options that Numba's CUDA target does not support together, such as
    cuda.jit(debug=True) with opt=True (the default). Numba's
    NumbaInvalidConfigWarning, under that name too."""


NumbaInvalidConfigWarning = InvalidConfigWarning


class CompileWarning(_Warning):
    """What a kernel compiles to differs from what its source asks, as a GPU
    would have it: print() of more than 32 items (CUDA's vprintf takes 32)
    prints its raw format string instead, on every target. Numba's
    NumbaWarning, under that name too."""


NumbaWarning = CompileWarning
