"""shard_map over a mesh in one process: blocks per PartitionSpec, collectives over the
mesh's names, results joined per out_specs (NumPy oracles of jax.shard_map's results on
an 8-device CPU mesh), under jit and grad; the one-process distributed world."""
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from tracer import P, lax

MESH = tracer.make_mesh((2, 4), ("x", "y"))
A = np.arange(48.0).reshape(8, 6)


def position_scale(b):
    return b * (lax.axis_index("x") * 10 + lax.axis_index("y"))


def test_blocks_follow_the_spec_axes():
    got = tracer.shard_map(position_scale, MESH, P("y", "x"), P("y", "x"))(A)
    want = A.copy()
    for x in range(2):
        for y in range(4):
            want[2 * y:2 * y + 2, 3 * x:3 * x + 3] *= 10 * x + y
    np.testing.assert_array_equal(got, want)


def test_tuple_entries_split_major_first():
    f = tracer.shard_map(lambda b: lax.axis_index("x") * 10 + lax.axis_index("y") +
                         0 * b[:1, 0].astype(np.int32), MESH, P(("y", "x")), P(("y", "x")))
    np.testing.assert_array_equal(f(A), [0, 10, 1, 11, 2, 12, 3, 13])


def test_psum_makes_an_output_replicated_over_its_axis():
    f = tracer.shard_map(lambda b: lax.psum(b, "y"), MESH, P(("x", "y")), P("x"))
    np.testing.assert_array_equal(f(A), A.reshape(2, 4, 6).sum(1))


def test_replicated_inputs_pytrees_and_a_ring():
    def f(tree, c):
        b = tree["a"]
        return {"s": b + c, "r": lax.ppermute(b, "y", [(i, (i + 1) % 4) for i in range(4)])}
    c = np.arange(6.0)
    got = tracer.shard_map(f, MESH, ({"a": P("y")}, P()), {"s": P("y"), "r": P("y")})(
        {"a": A}, c)
    np.testing.assert_array_equal(got["s"], A + c)
    np.testing.assert_array_equal(got["r"], np.roll(A.reshape(4, 2, 6), 1, 0).reshape(8, 6))


def test_all_gather_inside_gives_every_position_the_whole_array():
    f = tracer.shard_map(lambda b: lax.all_gather(b, ("y"), tiled=True), MESH,
                         P("y"), P())
    np.testing.assert_array_equal(f(A), A)


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_under_jit(backend):
    f = tracer.shard_map(lambda b: lax.pmean(tnp.tanh(b), ("x", "y")), MESH,
                         P(("x", "y")), P())
    np.testing.assert_allclose(tracer.jit(f, backend=backend)(A), np.tanh(A).mean(0, keepdims=True),
                               rtol=1e-12)


def test_grad_through_shard_map_matches_finite_differences():
    w = np.random.default_rng(0).standard_normal((2, 6))   # one row per x position

    def loss(a):
        f = tracer.shard_map(lambda b: lax.psum(tnp.sin(b), "y") * (lax.axis_index("x") + 1),
                             MESH, P(("x", "y")), P("x"))
        return tnp.sum(f(a) * w)
    tracer.check_grads(loss, (A / 10,), modes=("rev",))


def test_errors_name_the_problem():
    with pytest.raises(tracer.ShapeError, match="does not divide evenly"):
        tracer.shard_map(lambda b: b, MESH, P("y"), P("y"))(np.ones((6, 2)))
    with pytest.raises(tracer.ArgumentError, match="axis .x.*out_specs omits a mesh axis"):
        tracer.shard_map(lambda b: b, MESH, P("x"), P())(A)
    with pytest.raises(tracer.ShapeError, match="only the mesh's axes"):
        tracer.shard_map(lambda b: b, MESH, P("z"), P())(A)
    with pytest.raises(tracer.ArgumentError, match="make_mesh"):
        tracer.make_mesh((2, 2), ("x",))


def test_one_process_world():
    tracer.distributed.initialize()
    assert (tracer.distributed.process_index(), tracer.distributed.process_count()) == (0, 1)
