"""Errors from compiled code say what the numpy backend says: the offending index, the axis
and its length, and the user's source line; the checks keep the take loop vectorized.
Functions with more arguments than ctypes can pass (1024) still compile and run."""
import re

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from lowering.llvm import run_eager, target
from lowering.settings import settings

X = np.arange(12.0).reshape(4, 3)
LINE = r"\S*test_llvm_errors\.py:\d+"


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
@pytest.mark.parametrize("idx,shown", [([0, 7, 1], 7), ([2, -5, 0], -5),
                                       (np.array([9, 0], np.int32), 9)])
def test_out_of_bounds_take_names_index_axis_length_and_source(backend, idx, shown):
    f = tracer.jit(lambda x, i: tnp.take(x, i, axis=0), backend=backend)
    np.testing.assert_array_equal(f(X, np.array([0, -1])), X[[0, -1]])
    with pytest.raises(tracer.OutOfBoundsError,
                       match=rf"take: index {shown} is out of bounds for axis 0 of size 4 "
                             rf"\(in 'take' node created at {LINE}"):
        f(X, np.asarray(idx))


ROW_0 = np.arange(4)[:, None] == 0
OPS_THAT_COUNT_FROM_THE_END = {
    "getitem": lambda x, i: x[:, i],
    "take": lambda x, i: tnp.take(x, i, axis=1),
    "take_along_axis": lambda x, i: tnp.take_along_axis(x, tnp.where(ROW_0, i, 0), axis=1),
    "two arrays": lambda x, i: x[tnp.zeros(2, np.int64), tnp.full(2, i)],
    "at set": lambda x, i: x.at[:, i].set(0.0),
    "at add": lambda x, i: x.at[1:, i].add(1.0),
}


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
@pytest.mark.parametrize("op", OPS_THAT_COUNT_FROM_THE_END)
@pytest.mark.parametrize("i", [-10, -4, 3, 4])
def test_out_of_bounds_traced_index_is_named_as_written(backend, op, i):
    """The ops count -3..-1 from the end of the axis of 3 but leave -10 and -4 alone, so
    the kernel names what the user wrote (as eager indexing does), not -7 or -1; and
    take_along_axis and several index arrays check each index on its own axis (row 0's
    index 4 in the flattened array is row 1's element 1, which take_along_axis read)."""
    f = tracer.jit(OPS_THAT_COUNT_FROM_THE_END[op], backend=backend)
    np.testing.assert_array_equal(f(X, -3), f(X, 0))
    with pytest.raises(tracer.OutOfBoundsError,
                       match=rf"take: index {i} is out of bounds for axis 1 of size 3 "):
        f(X, i)


def test_out_of_bounds_scatter_add_and_huge_indices():
    upd = np.ones((2, 3))
    scatter = tracer.jit(lambda u, i: tracer.run_kernel("scatter_add", [u, i],
                                                        {"axis": 1, "size": 4}))
    np.testing.assert_array_equal(scatter(upd, np.array([0, 3, 0]))[0], [2, 0, 0, 1])
    with pytest.raises(IndexError, match=rf"scatter_add: index -3 is out of bounds for axis 1 "
                                         rf"of size 4 \(in 'scatter_add' node created at {LINE}"):
        scatter(upd, np.array([0, -3, 0]))
    take = tracer.jit(lambda x, i: tracer.run_kernel("take", [x, i], {"axis": 1}))
    with pytest.raises(IndexError, match=r"take: index 1099511627776 is out of bounds for axis "
                                         r"1 of size 3"):
        take(X, np.array([0, 2**40]))
    with pytest.raises(IndexError, match=r"index >= 140737488355327 is out of bounds"):
        take(X, np.array([2**62]))
    with pytest.raises(IndexError, match=r"index <= -140737488355328 is out of bounds"):
        take(X, np.array([-2**63]))


def test_eager_llvm_kernel_reports_the_index():
    with pytest.raises(IndexError, match=r"take: index 4 is out of bounds for axis 0 of size 4 "
                                         r"\(llvm backend\)"):
        run_eager("take", [X, np.array([4])], {"axis": 0})


def test_empty_axis_and_empty_indices():
    empty = np.zeros((0, 3))
    f = tracer.jit(lambda x, i: tracer.run_kernel("take", [x, i], {"axis": 0}))
    assert f(empty, np.zeros(0, np.int64)).shape == (0, 3)
    with pytest.raises(IndexError, match="take: index 0 is out of bounds for axis 0 of size 0"):
        f(empty, np.zeros(2, np.int64))


def test_threaded_split_reports_an_offending_index(monkeypatch):
    monkeypatch.setattr(settings, "parallel_ns", 0)
    monkeypatch.setenv("TRACER_NUM_THREADS", "2")
    a = np.random.default_rng(0).normal(size=(64, 40))
    f = tracer.jit(lambda a, i: tnp.exp(tnp.take(a, i, axis=0)) * 2.0)
    idx = np.arange(64) % 64
    assert "parallel" in f.lower(a, idx).steps
    np.testing.assert_allclose(f(a, idx), np.exp(a[idx]) * 2)
    idx[[5, 50]] = 64
    with pytest.raises(IndexError, match="index 64 is out of bounds for axis 0 of size 64"):
        f(a, idx)


def test_checked_take_loop_still_vectorizes():
    """Bounds are checked with a running min and max (vector reductions), not by
    recording each offending index in the loop, which would keep it scalar."""
    f = tracer.jit(lambda x, i: tnp.take(x, i) * 2.0)
    text = f.lower(np.arange(1000.0), np.arange(4096)).as_text()
    optimized = str(target._optimize(text))
    assert re.search(r"<\d+ x double>", optimized) and re.search(r"<\d+ x i64>", optimized)


def test_more_arguments_than_ctypes_can_pass():
    """ctypes passes at most 1024 arguments; a segment takes its arrays as one tuple."""
    xs = [np.full(2, float(k)) for k in range(1500)]
    f = tracer.jit(lambda *a: sum(a[1:], a[0]))
    np.testing.assert_array_equal(f(*xs), [sum(range(1500))] * 2)
    np.testing.assert_array_equal(f(*xs[::-1]), [sum(range(1500))] * 2)


def test_split_call_of_a_group_with_more_buffers_than_ctypes_can_pass(monkeypatch):
    monkeypatch.setattr(settings, "parallel_ns", 0)
    monkeypatch.setattr(settings, "max_loop_nodes", 10 ** 6)   # one loop of 1,100 inputs
    monkeypatch.setenv("TRACER_NUM_THREADS", "2")
    xs = [np.full(64, float(k)) for k in range(1100)]
    f = tracer.jit(lambda *a: sum(a[1:], a[0]))
    assert f.lower(*xs).steps == ["parallel"]
    np.testing.assert_array_equal(f(*xs), np.full(64, float(sum(range(1100)))))
