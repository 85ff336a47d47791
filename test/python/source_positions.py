"""Where a piece of a test kernel's source is: what located errors are checked against."""

import inspect


def position_of(func, text):
    """The file line and 1-based column of the first occurrence of text in func's source."""
    lines, start = inspect.getsourcelines(func)
    for offset, line in enumerate(lines):
        if text in line:
            return start + offset, line.index(text) + 1
    raise AssertionError(f"{text!r} not in {func.__name__}")
