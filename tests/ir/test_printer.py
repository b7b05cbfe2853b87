"""The printer's exact text, pinned (golden): any change to it is deliberate."""
import numpy as np
import pytest

import registry
import tracer
import tracer.numpy as tnp
from ir import Graph, Literal, Node, ShapedArray, Var

X23 = np.ones((2, 3), np.float32)


def text(fun, *args):
    return str(tracer.make_graph(fun)(*args))


def test_elementwise_with_a_broadcast_python_scalar():
    assert text(lambda x: x * 2.0 + 1, X23) == """\
{ lambda ; a:f32[2,3]. let
    b:f32[2,3] = broadcast_to[shape=(2, 3)] 2.0:f32[]
    c:f32[2,3] = mul a b
    d:f32[2,3] = broadcast_to[shape=(2, 3)] 1.0:f32[]
    e:f32[2,3] = add c d
  in (e) }"""


def test_reductions_with_keepdims():
    f = (lambda x: tnp.sum(x, axis=-1, keepdims=True) + tnp.max(x, axis=0, keepdims=True)
         - tnp.mean(x))
    assert text(f, X23) == """\
{ lambda ; a:f32[2,3]. let
    b:f32[2] = reduce_sum[axes=(1,)] a
    c:f32[2,1] = reshape[shape=(2, 1)] b
    d:f32[3] = reduce_max[axes=(0,)] a
    e:f32[1,3] = reshape[shape=(1, 3)] d
    f:f32[2,3] = broadcast_to[shape=(2, 3)] c
    g:f32[2,3] = broadcast_to[shape=(2, 3)] e
    h:f32[2,3] = add f g
    i:f32[] = reduce_sum[axes=(0, 1)] a
    j:f32[] = div i 6.0:f32[]
    k:f32[2,3] = broadcast_to[shape=(2, 3)] j
    l:f32[2,3] = sub h k
  in (l) }"""


def test_indexing_basic_array_and_traced():
    f = (lambda x, i: x[1:, ::-1][None, ..., 0] + x[:, np.array([2, 0])][0] + x[0, i])
    assert text(f, np.ones((3, 4), np.float32), np.int32(1)) == """\
{ lambda a:i64[2]; b:f32[3,4] c:i32[]. let
    d:f32[3,4] = rev[axes=(1,)] b
    e:f32[2,4] = slice[limit=(3, 4) start=(1, 0) step=(1, 1)] d
    f:f32[2,1] = slice[limit=(2, 1) start=(0, 0) step=(1, 1)] e
    g:f32[1,2] = reshape[shape=(1, 2)] f
    h:f32[3,2] = take[axis=1] b a
    i:f32[1,2] = slice[limit=(1, 2) start=(0, 0) step=(1, 1)] h
    j:f32[2] = reshape[shape=(2,)] i
    k:f32[1,2] = broadcast_to[shape=(1, 2)] j
    l:f32[1,2] = add g k
    m:f32[1,4] = slice[limit=(1, 4) start=(0, 0) step=(1, 1)] b
    n:f32[4] = reshape[shape=(4,)] m
    o:i32[] = add c 4:i32[]
    p:bool[] = lt c 0:i32[]
    q:bool[] = ge o 0:i32[]
    r:bool[] = and p q
    s:i32[] = select r o c
    t:f32[] = take[axis=0] n s
    u:f32[1,2] = broadcast_to[shape=(1, 2)] t
    v:f32[1,2] = add l u
  in (v) }"""


@pytest.fixture
def divmod_kernel():
    """A user kernel with two outputs, registered for the test only."""
    registry.register_shape_rule("test_divmod", lambda a, b: (a, ShapedArray(a.shape, a.dtype)))
    registry.register_kernel("test_divmod", "numpy",
                             lambda a, b: (np.floor_divide(a, b), np.mod(a, b)))
    yield
    registry.unregister_kernel("test_divmod", "numpy")
    registry.unregister_shape_rule("test_divmod")


def test_multi_output_custom_kernel(divmod_kernel):
    def f(a, b):
        q, r = tracer.run_kernel("test_divmod", [a, b])
        return q * 10 + r
    a, b = np.array([7, 8, 9], np.int32), np.array([2, 3, 4], np.int32)
    assert text(f, a, b) == """\
{ lambda ; a:i32[3] b:i32[3]. let
    c:i32[3] d:i32[3] = test_divmod a b
    e:i32[3] = broadcast_to[shape=(3,)] 10:i32[]
    f:i32[3] = mul c e
    g:i32[3] = add f d
  in (g) }"""
    np.testing.assert_array_equal(tracer.jit(f, backend="numpy")(a, b), [31, 22, 21])


def test_constants_become_constvars_and_literals_keep_their_dtype():
    c = np.arange(3, dtype=np.float32)
    f = lambda x: (x + c) * np.float32(0.1) - True  # noqa: E731
    assert text(f, X23) == """\
{ lambda a:f32[3]; b:f32[2,3]. let
    c:f32[2,3] = broadcast_to[shape=(2, 3)] a
    d:f32[2,3] = add b c
    e:f32[2,3] = broadcast_to[shape=(2, 3)] 0.1:f32[]
    f:f32[2,3] = mul d e
    g:f32[2,3] = broadcast_to[shape=(2, 3)] 1.0:f32[]
    h:f32[2,3] = sub f g
  in (h) }"""


def test_grad_graph():
    g = tracer.grad(lambda x: tnp.sum(x * tnp.sin(x)))
    assert text(g, np.ones(3)) == """\
{ lambda ; a:f64[3]. let
    b:f64[] = convert[dtype=float64] 1.0:f64[]
    c:f64[3] = sin a
    d:f64[3] = broadcast_to[shape=(3,)] b
    e:f64[3] = mul d c
    f:f64[3] = mul d a
    g:f64[3] = cos a
    h:f64[3] = mul f g
    i:f64[3] = add e h
  in (i) }"""


def test_pytree_outputs_literal_outputs_and_names_past_z():
    g = tracer.make_graph(lambda x: (x, [tnp.exp(x)], {"k": 2.0}))(np.float64(1.0))
    assert str(g) == """\
{ lambda ; a:f64[]. let
    b:f64[] = exp a
  in (a b 2.0:f64[]) }"""

    def chain(x):
        for _ in range(27):
            x = tnp.negative(x)
        return x
    lines = text(chain, np.ones(2)).splitlines()
    assert lines[-2].strip() == "bb:f64[2] = neg ba"   # a..z, then ba, bb (as jaxpr)


def test_printing_is_deterministic_across_traces_and_hand_built_graphs():
    f = lambda x: tnp.sum(tnp.tanh(x) * x, axis=0)  # noqa: E731
    assert text(f, X23) == text(f, X23.copy())
    a, b = Var(ShapedArray((3,), np.int32)), Var(ShapedArray((3,), np.bool_))
    g = Graph([a], [b], [Node("gt", [a, Literal(np.int32(0))], [b])])
    assert str(g) == """\
{ lambda ; a:i32[3]. let
    b:bool[3] = gt a 0:i32[]
  in (b) }"""
