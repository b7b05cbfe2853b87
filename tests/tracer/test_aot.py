"""JAX's ahead-of-time stages: jit(f).trace / .lower / .compile, eval_shape,
ShapeDtypeStruct, block_until_ready and jit's compiler_options."""
import pickle

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from tracer import ShapeDtypeStruct

X = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)


def f(x, y):
    return {"s": tnp.sum(x * y["a"]), "p": x @ y["b"]}


ARGS = (X, {"a": X, "b": np.ones((3, 4), np.float32)})


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_compiled_runs_like_the_jitted_function(backend):
    jf = tracer.jit(f, backend=backend)
    compiled = jf.lower(*ARGS).compile()
    got, want = compiled(*ARGS), jf(*ARGS)
    assert set(got) == {"s", "p"}
    np.testing.assert_array_equal(got["p"], want["p"])
    np.testing.assert_array_equal(got["s"], want["s"])
    assert compiled.runtime_executable() is jf.lower(*ARGS).program


def test_stage_trees_and_infos():
    lowered = tracer.jit(f).lower(*ARGS)
    assert lowered.in_tree == tracer.tree_util.tree_structure((ARGS, {}))
    (x_info, y_info), kw = lowered.args_info
    assert kw == {} and x_info.shape == (2, 3) and x_info.dtype == np.float32
    assert y_info["b"].shape == (3, 4) and not y_info["b"].donated
    assert lowered.out_info == {"s": ShapeDtypeStruct((), np.float32),
                                "p": ShapeDtypeStruct((2, 4), np.float32)}
    assert lowered.compile().out_info == lowered.out_info


def test_donated_leaves_are_marked_however_the_argument_is_passed():
    g = tracer.jit(lambda z, y, x: (z, y, x), donate_argnames=("z", "y"))
    z, y, x = {"c": np.ones(2)}, {"b": np.ones(2)}, {"a": np.ones(2)}
    args_info, kwargs_info = g.lower(z, y=y, x=x).args_info
    assert args_info[0]["c"].donated and kwargs_info["y"]["b"].donated
    assert not kwargs_info["x"]["a"].donated
    assert g.lower(z, y=y, x=x).donate_argnums == (0, 2)   # leaves: z.c, x.a, y.b


def test_static_arguments_are_fixed_by_lower():
    g = tracer.jit(lambda n, x: x * n, static_argnums=0)
    compiled = g.lower(3, X).compile()
    np.testing.assert_array_equal(compiled(X), X * 3)
    with pytest.raises(TypeError, match="input pytree does not match"):
        compiled(3, X)


def test_compiled_checks_its_arguments():
    compiled = tracer.jit(lambda x: tnp.sqrt(x ** 2) + 1.0).lower(X).compile()
    with pytest.raises(TypeError, match=r"compiled for PyTreeDef\(\(\(\*,\), \{\}\)\), called with "
                                        r"PyTreeDef\(\(\(\[\*\],\), \{\}\)\)"):
        compiled([X])
    with pytest.raises(TypeError, match=r"Argument 'x' compiled with float32\[2,3\] and "
                                        r"called with int32\[2,3\]"):
        compiled(X.astype(np.int32))
    with pytest.raises(TypeError, match="compiled with float32\\[2,3\\] and called with "
                                        "float32\\[3\\]"):
        compiled(X[0])
    with pytest.raises(TypeError, match="Cannot apply transformations"):
        tracer.vmap(compiled)(np.stack([X, X]))


def test_python_scalar_stands_for_the_compiled_dtype():
    compiled = tracer.jit(lambda x: 2 * x).lower(ShapeDtypeStruct((), "float32")).compile()
    out = compiled(1.5)
    assert out.dtype == np.float32 and out == 3.0
    with pytest.raises(TypeError, match="Argument types differ"):
        tracer.jit(lambda x: 2 * x).lower(np.int32(1)).compile()(1.5)


def test_as_text_dialects():
    g = lambda x: tnp.tanh(x) * 2 + 1
    lowered = tracer.jit(g).lower(X)
    assert lowered.as_text() == lowered.as_text("llvm") == lowered.program.as_text()
    assert "define" in lowered.as_text()
    assert lowered.as_text("hlo") == str(lowered.graph)
    assert lowered.as_text("stablehlo") == str(tracer.make_graph(g)(X))
    assert lowered.compile().as_text() == lowered.as_text()
    with pytest.raises(ValueError, match="unknown dialect 'mhlo'.*'hlo'"):
        lowered.as_text("mhlo")


def test_trace_and_eval_shape_need_no_data():
    spec = ShapeDtypeStruct((5, 3), np.float32)
    w = ShapeDtypeStruct((3, 2), "float64")
    out = tracer.eval_shape(lambda x, w: (x @ w, tnp.sum(x)), spec, w=w)
    assert out == (ShapeDtypeStruct((5, 2), np.float64), ShapeDtypeStruct((), np.float32))
    traced = tracer.jit(lambda x, w: x @ w).trace(spec, w)
    assert str(traced.jaxpr) == str(tracer.make_graph(lambda x, w: x @ w)(spec, w))
    compiled = traced.lower().compile()
    x, wv = np.ones((5, 3), np.float32), np.ones((3, 2))
    np.testing.assert_array_equal(compiled(x, wv), x @ wv)
    g = tracer.jit(lambda n, x: tnp.ones((n,)) * x, static_argnums=0)
    assert g.eval_shape(4, 1.0) == ShapeDtypeStruct((4,), np.float64)


def test_lower_is_the_cache_entry():
    g = tracer.jit(lambda x: x + 1)
    lowered = g.lower(X)
    assert g.lower(X) is lowered
    g(X)
    assert g.cache_info().misses == 1


def test_cost_analysis_counts_matmul_flops():
    a, b = np.ones((4, 8), np.float32), np.ones((8, 3), np.float32)
    cost = tracer.jit(lambda a, b: a @ b).lower(a, b).cost_analysis()
    assert cost["flops"] == 2 * 4 * 3 * 8
    assert cost["bytes accessed"] == (4 * 8 + 8 * 3 + 4 * 3) * 4


def test_compiler_options_are_checked():
    options = {"xla_embed_ir_in_executable": True, "optimization_level": 1}
    g = tracer.jit(np.negative, compiler_options=options)
    np.testing.assert_array_equal(g(X), -X)
    assert g.compiler_options == options
    assert pickle.loads(pickle.dumps(g)).compiler_options == options
    lowered = tracer.jit(lambda x: x * 2).lower(X)
    assert lowered.compile(compiler_options=options).compiler_options == options
    with pytest.raises(ValueError, match="No such compile option: 'invalid_key'"):
        lowered.compile(compiler_options={"invalid_key": 1})
    with pytest.raises(ValueError, match="No such compile option"):
        tracer.jit(lambda x: x, compiler_options={"invalid_key": 1})
    with pytest.raises(TypeError, match="must be a bool, int, float or str"):
        tracer.jit(lambda x: x, compiler_options={"xla_dump_to": [1]})


def test_block_until_ready_returns_its_argument():
    tree = {"a": X, "b": [np.float32(1)]}
    assert tracer.block_until_ready(tree) is tree


def test_shape_dtype_struct_is_sized_like_an_array():
    s = ShapeDtypeStruct((4, 2), np.float32)
    assert len(s) == 4 and s.ndim == 2 and s.size == 8
    assert repr(s) == "ShapeDtypeStruct(shape=(4, 2), dtype=float32)"
    assert hash(s) == hash(ShapeDtypeStruct([4, 2], "float32"))
    assert s != ShapeDtypeStruct((4,), np.float32)
    with pytest.raises(TypeError, match="len\\(\\) of unsized object"):
        len(ShapeDtypeStruct((), np.float32))


def test_memory_analysis_sizes_the_arguments_and_results():
    stats = tracer.jit(f).lower(*ARGS).compile().memory_analysis()
    assert stats == {"argument_size_in_bytes": (6 + 6 + 12) * 4,
                     "output_size_in_bytes": (1 + 8) * 4}
