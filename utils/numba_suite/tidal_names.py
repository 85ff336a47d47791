"""Names that the rewritten tests take from tidal (copied into the scratch folder).

`lookup("tidal", "double")` is tidal's `double` where tidal has one. Where it
has none, it is a placeholder that raises `MissingInTidal` when the test uses
it, so that one missing name fails the tests that use it, not every test of
the module that imports it.
"""

import importlib


class MissingInTidal(Exception):
    """A name that Numba has and tidal does not."""


class MissingName:
    def __init__(self, module, name):
        self._where = f"{module}.{name}"

    def _fail(self, *args, **kwargs):
        raise MissingInTidal(f"tidal has no {self._where}")

    __call__ = _fail
    __getitem__ = _fail
    __iter__ = _fail

    def __getattr__(self, attribute):
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        self._fail()

    def __repr__(self):
        return f"<missing in tidal: {self._where}>"


def lookup(module, name):
    """tidal's `module.name`, or a placeholder that fails when used."""
    try:
        found = importlib.import_module(module)
    except ImportError:
        return MissingName(module, name)
    try:
        return getattr(found, name)
    except AttributeError:
        pass
    try:
        return importlib.import_module(f"{module}.{name}")
    except ImportError:
        return MissingName(module, name)
