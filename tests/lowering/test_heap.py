"""lowering/heap.py: no full collection runs while a graph is traced or compiled, the
threshold comes back afterwards (after nested and concurrent builds too), and a threshold
someone set meanwhile is kept."""
import gc
import threading

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from concurrency import run_threads
from lowering import heap
from lowering.heap import building


@pytest.fixture
def threshold(monkeypatch):
    monkeypatch.setenv("TRACER_BACKGROUND_COMPILE", "0")     # the compile ends in the call
    assert heap._builds == 0
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*saved)


def _full_collections(fun):
    seen = []

    def note(phase, info):
        if phase == "start" and info["generation"] == 2:
            seen.append(info)
    gc.callbacks.append(note)
    try:
        fun()
    finally:
        gc.callbacks.remove(note)
    return len(seen)


def _chain(x):
    for i in range(300):
        x = tnp.tanh(x * (1.0 + i / 1000)) + x * 0.5
    return tnp.sum(x)


def test_no_full_collection_while_tracing_and_compiling(threshold):
    gc.collect()
    f = tracer.jit(tracer.grad(_chain))
    assert _full_collections(lambda: f(np.ones(16, np.float32))) == 0
    assert gc.get_threshold() == (700, 10, 10)
    junk = [[] for _ in range(200_000)]       # outside a build they run as before
    assert _full_collections(lambda: [junk.append([]) for _ in range(200_000)]) > 0


def test_nested_and_concurrent_builds_restore_the_threshold(threshold):
    start = threading.Barrier(4)

    def work(i):
        with building():
            start.wait()
            with building():
                assert gc.get_threshold()[2] > 10 ** 6
    run_threads(work, 4)
    assert gc.get_threshold() == (700, 10, 10)


def test_a_threshold_set_during_a_build_is_kept(threshold):
    with building():
        gc.set_threshold(500, 5, 20)
    assert gc.get_threshold() == (500, 5, 20)
