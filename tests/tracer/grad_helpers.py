"""Shared by the autodiff tests: a registry snapshot that tests restore afterwards."""
import contextlib

import registry
from registry import tables


@contextlib.contextmanager
def registry_snapshot():
    """Undo every register/unregister made inside the block through the public API, so
    registry versions bump and jit caches notice the restore too."""
    held = [(table, dict(table.entries))
            for table in (tables.GRADIENTS, tables.KERNELS, tables.SHAPE_RULES)]
    try:
        yield registry
    finally:
        for table, before in held:
            for key in set(table.entries) | set(before):
                args = key if isinstance(key, tuple) else (key,)
                if key not in before:
                    table.unregister(*args)
                elif table.entries.get(key) is not before[key]:
                    table.register(*args, before[key])
