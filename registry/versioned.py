"""The one table class behind every registry table, and the versions caches key on.

A table maps a key (a kernel name, or a tuple whose first part is the kernel name, such as
(kernel, backend)) to an entry. Registering replaces (that is how users override a
built-in, as in TensorFlow.js). Every change bumps the kernel's version and a global
epoch, so caches (jit, compiled code) can tell whether what they hold is stale.

Threads: changes are made under one lock (so no version bump is lost), reads take none.
A cache built while another thread registers must take its `snapshot()` before it starts
reading the tables: it is then rebuilt on next use if anything it read changed meanwhile.

Every table's calls share two helpers: the check of a kernel name, and the "did you mean"
hint of the error for an absent key.
"""
import difflib
import os
import threading

from ir.errors import ArgumentError

_versions = {}
# [epoch]: read in place by jit's call path, where a function call would cost
EPOCH = _epoch = [0]
_lock = threading.Lock()
# a child forked while another thread registers gets the lock free; every change made under
# it is one dict assignment, so the tables are whole (lowering.forks does this above here)
os.register_at_fork(after_in_child=_lock._at_fork_reinit)
_ABSENT = object()


def _touch(kernel):
    """Bump `kernel`'s version (None: no kernel) and the epoch; the caller holds _lock and
    has already changed the table (so a reader that sees the new version sees the entry)."""
    if kernel is not None:
        _versions[kernel] = _versions.get(kernel, 0) + 1
    _epoch[0] += 1


def bump_epoch():
    """Make every cache entry check its kernels' versions on its next use (nothing
    changed; jit's disable_jit relies on it)."""
    with _lock:
        _epoch[0] += 1


def check_kernel_name(name, op):
    """Raise ArgumentError, naming the call `op`, unless `name` is a non-empty string."""
    if not isinstance(name, str) or not name:
        raise ArgumentError(f"{op}: kernel name must be a non-empty string, got {name!r}")


def did_you_mean(name, names):
    """' Did you mean ...?' with up to three of `names` close to `name`, or ''."""
    close = difflib.get_close_matches(name, sorted(names), n=3)
    return f" Did you mean {' or '.join(map(repr, close))}?" if close else ""


def epoch():
    """A counter that changes whenever any table changes (cheap staleness check)."""
    return _epoch[0]


def version(name):
    """A counter that changes whenever anything registered for kernel `name` does."""
    return _versions.get(name, 0)


def snapshot():
    """(epoch, {kernel name: version}) as of now, read together: what a cache entry built
    from the tables from now on must compare with to know whether it is current."""
    with _lock:
        return _epoch[0], dict(_versions)


class VersionedTable:
    """key -> entry for one kind of fact, with the register/get/has/unregister calls.

    The calls take the key's parts as arguments (`register(name, backend, impl)`,
    `get(name, backend)`). `check(*parts, entry)` rejects a bad registration with an
    ArgumentError; `missing(*parts)` builds the error `get` and `unregister` raise for an
    absent key. `per_kernel=False` (the backends table) bumps only the epoch."""

    def __init__(self, missing, check=None, per_kernel=True):
        self.entries = {}
        self._missing, self._check, self._per_kernel = missing, check, per_kernel

    def register(self, *parts_and_entry):
        """Add or replace the entry under the key (the last argument is the entry)."""
        *parts, entry = parts_and_entry
        if self._check is not None:
            self._check(*parts, entry)
        with _lock:
            self.entries[parts[0] if len(parts) == 1 else tuple(parts)] = entry
            _touch(parts[0] if self._per_kernel else None)

    def get(self, *parts):
        """The entry under the key; an absent one is an error naming what is there."""
        try:
            return self.entries[parts[0] if len(parts) == 1 else parts]
        except KeyError:
            raise self._missing(*parts) from None

    def has(self, *parts):
        return (parts[0] if len(parts) == 1 else parts) in self.entries

    def unregister(self, *parts):
        """Remove the entry; an absent one is an error (`discard` is the quiet form)."""
        if not self.discard(*parts):
            raise self._missing(*parts)

    def discard(self, *parts):
        """Remove the entry if there is one; True if there was."""
        with _lock:
            if self.entries.pop(parts[0] if len(parts) == 1 else parts, _ABSENT) is _ABSENT:
                return False
            _touch(parts[0] if self._per_kernel else None)
            return True

    def keys(self):
        """Every key, sorted."""
        return sorted(self.entries)
