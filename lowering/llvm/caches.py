"""Bounded caches for the llvm backend: in memory (LRU) and on disk (entries bound to
their keys, a size cap).

Every signature a process compiles costs native code and text; without bounds a program
that sees many shapes grows without limit. `Lru` keeps the most recently used entries of
a cache; `read`/`write` store a cache entry (a module's object code, <key>.o; a graph's
artifact, <key>.g; a program's generated Python, <digest>.c) as one file that names
what it is for:

    MAGIC, the entry's file name (its key and kind), NUL, sha256 of all that and the
    payload, the payload

(compile_worker.cache_entry; a compile worker whose process ended writes one too), so a
file renamed, swapped or copied from another cache is only a miss, as is a truncated or
corrupted one: its content is never used. Reading never blocks (a FIFO or device
named like an entry is refused without waiting for a writer) and touches the entry, so
that when the directory outgrows TRACER_DISK_CACHE_SIZE (bytes, or with a K/M/G suffix;
default 1G) the least recently used entries are deleted. Each writing process rescans the
directory (one stat per file) on its first write and after every eighth of the cap it
writes, and then trims the cache to three quarters of the cap, so the cap can be
overshot by at most an eighth per concurrently writing process.
"""
import functools
import hashlib
import importlib.util
import marshal
import os
import re
import stat
from collections import OrderedDict

from lowering.llvm.compile_worker import MAGIC, atomic_write, cache_entry, digest
from lowering.settings import settings


def source_digest(*names):
    """sha256 (hex) of this package's files `names`: the code that generates a library,
    part of its identity (a cached module never calls a library of another ABI)."""
    digest = hashlib.sha256()
    for name in names:
        with open(os.path.join(os.path.dirname(__file__), name), "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()


_ENTRY = re.compile(r"([0-9a-f]{64}\.[ogc]|\.tmp-.*)\Z")    # what trim() may delete
_written = {}           # directory -> bytes this process wrote since its last scan


class Lru:
    """A mapping bounded to `capacity` entries that forgets the least recently used.

    Lock-free (each OrderedDict operation is atomic under the GIL; a lost race only
    evicts or keeps one entry too many), so it needs no care around fork."""

    def __init__(self, capacity):
        self.capacity = capacity
        self._items = OrderedDict()

    def get(self, key):
        value = self._items.get(key)
        if value is not None:
            try:
                self._items.move_to_end(key)
            except KeyError:        # evicted by another thread meanwhile
                pass
        return value

    def put(self, key, value):
        items = self._items
        items[key] = value
        try:
            items.move_to_end(key)
            while len(items) > self.capacity:
                items.popitem(last=False)
        except KeyError:
            pass

    def __len__(self):
        return len(self._items)

    def clear(self):
        self._items.clear()


def read(directory, name):
    """The payload of the entry `name` in `directory`, or None if there is no such
    regular file or it is not an intact entry written for `name`."""
    path = os.path.join(directory, name)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        # read(2) to the end, the first call asking for all of it: a file object would
        # stat, seek and test for a terminal again (a warm first call reads four entries)
        data = b"".join(iter(functools.partial(os.read, fd, st.st_size + 1), b""))
        head = MAGIC + name.encode() + b"\0"
        n = len(head)
        if data[:n] != head or data[n:n + 32] != digest(head, memoryview(data)[n + 32:]):
            return None
        try:
            os.utime(fd)            # recently used: evicted last
        except OSError:
            pass
        return data[n + 32:]
    except OSError:
        return None
    finally:
        os.close(fd)


def write(directory, name, payload):
    """Store `payload` as the entry `name` in `directory` (see the module docstring)."""
    data = cache_entry(name, payload)
    cap = settings.disk_cache_size
    written = _written.get(directory)
    if written is None or written + len(data) > cap // 8:
        trim(directory, cap)
        written = 0
    if atomic_write(directory, name, data):
        _written[directory] = written + len(data)


def trim(directory, cap):
    """If the cache entries in `directory` take more than `cap` bytes, delete the least
    recently used (read or written) down to three quarters of it."""
    files, total = [], 0
    try:
        with os.scandir(directory) as it:
            for e in it:
                if _ENTRY.match(e.name):
                    try:
                        st = e.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if not stat.S_ISREG(st.st_mode):
                        continue
                    files.append((st.st_mtime_ns, st.st_size, e.path))
                    total += st.st_size
    except OSError:
        return
    if total <= cap:
        return
    files.sort()
    for _, size, path in files:
        if total <= cap * 3 // 4:
            break
        try:
            os.unlink(path)
            total -= size
        except OSError:
            pass


def python_code(directory, source, name):
    """compile(source, name, "exec"), or the code an earlier process compiled from the
    same source, name and Python (the entry <digest>.c in `directory`; None: no disk
    cache): Python's compiler takes ~25 us a line, a third of a millisecond for a small
    program's generated runner, the entry's read a tenth of that."""
    entry = hashlib.sha256(b"\0".join((importlib.util.MAGIC_NUMBER, name.encode(),
                                        source.encode()))).hexdigest() + ".c"
    data = read(directory, entry) if directory else None
    if data is not None:
        return marshal.loads(data)
    code = compile(source, name, "exec")
    if directory:
        write(directory, entry, marshal.dumps(code))
    return code
