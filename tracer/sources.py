"""Where a traced value was made, in the user's words: the first frame outside this
project's packages. Every node records it (graph-cache keys and error messages name
it), so it is made once per place; and the names by which decorated module-level
functions pickle."""
import functools
import os
import sys

_PKG_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_PKG_DIRS = tuple(os.path.join(_PKG_ROOT, p) + os.sep
                  for p in ("tracer", "ir", "registry", "lowering"))


def user_source(depth=2):
    """'file:line (function)' of the innermost frame outside this project's packages.
    Tracing asks this of every node; a frame's line is decoded from its code's line
    table, so each place's string is made once, by its code and instruction."""
    f = sys._getframe(depth)
    while f is not None and _inside(f.f_code.co_filename):
        f = f.f_back
    if f is None:
        return None
    code = f.f_code
    key = id(code), f.f_lasti
    found = _sources.get(key)
    if found is None:
        if len(_sources) >= 4096:
            _sources.clear()
        found = _sources[key] = code, f"{code.co_filename}:{f.f_lineno} ({code.co_name})"
    return found[1]


_sources = {}   # (id(code), offset) -> (code, its source): the code held keeps its id unique


@functools.lru_cache(maxsize=1024)
def _inside(filename):
    return filename.startswith(_PKG_DIRS)


def global_name(obj, fun):
    """fun's qualified name when fun's module binds `obj` to it (what a decorator made of
    a module-level function), else None: such an object pickles by that name, as the
    function would."""
    found = sys.modules.get(getattr(fun, "__module__", None))
    for part in getattr(fun, "__qualname__", "<>").split("."):
        found = getattr(found, part, None)
    return fun.__qualname__ if found is obj else None


def user_stacklevel():
    """warnings.warn's stacklevel, for its caller, that names the first frame outside this
    project."""
    frame, level = sys._getframe(2), 2
    while frame is not None and frame.f_code.co_filename.startswith(_PKG_DIRS):
        frame, level = frame.f_back, level + 1
    return level
