"""Locks a forked child gets unlocked.

fork copies only the thread that called it: a lock another thread held at that moment
stays held in the child, by no one, and the child's first use of it hangs for ever
(multiprocessing's fork start method, pre-fork servers). `lock()` is a threading.Lock
that every child re-initializes before its own code runs, as CPython does for its own
locks; what the lock guards is left as it was, so it must never be seen half changed
(each user says why its state is whole, or resets it in an at-fork handler of its own).
"""
import os
import threading
import weakref

_locks = weakref.WeakSet()


def lock():
    made = threading.Lock()
    _locks.add(made)
    return made


def _after_fork():
    for made in _locks:
        made._at_fork_reinit()


os.register_at_fork(after_in_child=_after_fork)
