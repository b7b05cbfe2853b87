"""Compile time stays linear in program size: no LLVM function grows with the program
(LLVM's LoopVectorize and code generation are superlinear in a function's length), and a
module calling math functions many times calls one precompiled, vectorized copy of each
instead of inlining a copy per call."""
import re

import numpy as np

import tracer
import tracer.numpy as tnp
from lowering.llvm import target
from lowering.settings import settings

MAX_UNOPTIMIZED = 1000      # instructions in one function of the generated module
MAX_OPTIMIZED = 4000        # ... after LLVM's optimizer (inlining, vectorization)


def chain(n, salt):
    """n elementwise ops, each step feeding the next (one fused loop, unbounded)."""
    def f(x):
        for i in range(n // 4):
            x = tnp.tanh(x * (1.0 + i / 100 + salt)) + x * 0.5 - 0.25
        return x
    return f


def lengths(text):
    """{function: instruction count} of an LLVM module's text."""
    return {m.group(1): sum(line.startswith("  ") and not line.endswith(":")
                            for line in m.group(0).splitlines()[1:-1])
            for m in re.finditer(r'^define [^\n]*@"?([\w.]+)"?\(.*?^}$', text, re.S | re.M)}


def test_a_2000_op_chain_compiles_to_functions_of_bounded_length():
    x = np.linspace(-2, 2, 1000, dtype=np.float32)
    f = chain(2000, 1e-3)
    program = tracer.jit(f).lower(x)
    text = program.as_text()
    unoptimized, optimized = lengths(text), lengths(str(target._optimize(text)))
    assert max(unoptimized.values()) <= MAX_UNOPTIMIZED, sorted(unoptimized.values())[-3:]
    assert max(optimized.values()) <= MAX_OPTIMIZED, sorted(optimized.values())[-3:]
    want = x.astype(np.float64)
    for i in range(500):
        want = np.tanh(want * np.float32(1.0 + i / 100 + 1e-3)) + want * 0.5 - 0.25
    np.testing.assert_allclose(program.run([x])[0], want, rtol=1e-4, atol=1e-4)


def math_module(calls, salt):
    """(text, optimized text) of a module calling tanh `calls` times; checks its result."""
    f = tracer.jit(lambda x: sum(tnp.tanh(x * (k + salt)) for k in range(calls)))
    x = np.linspace(-3, 3, 1000, dtype=np.float32)
    want = sum(np.tanh(x.astype(np.float64) * np.float32(k + salt)) for k in range(calls))
    np.testing.assert_allclose(f(x), want, rtol=1e-5, atol=1e-5)
    text = f.lower(x).as_text()
    return text, str(target._optimize(text))


def test_many_math_calls_call_one_precompiled_vectorized_copy():
    compiled = target.stats["compiled"]
    text, optimized = math_module(settings.share_at + 1, 0.5)
    assert "define internal float @tracer.tanh.f32(" not in text      # no copy of its body
    assert re.search(r"^declare <\d+ x float> @tracer\.tanh\.f32\.v\d+\(", text, re.M)
    # the loop is vectorized, calling a vector variant
    assert re.search(r"call [^\n]*<\d+ x float> @tracer\.tanh\.f32\.v\d+\(", optimized)
    more = math_module(settings.share_at + 9, 0.75)[1]
    grown = sum(lengths(more).values()) - sum(lengths(optimized).values())
    assert grown < 8 * 20, grown        # a few instructions per call, not a tanh's ~50
    # the library was compiled at most once (this process may have linked it before)
    assert target.stats["compiled"] - compiled <= 3


def test_few_math_calls_stay_inlined():
    text, optimized = math_module(2, 0.25)
    assert "alwaysinline" in text and "@tracer.tanh.f32.v" not in text
    assert not re.search(r"call [^\n]*@tracer\.tanh", optimized)


WARM = """
import numpy as np, tracer, tracer.numpy as tnp
from lowering.llvm import mathlib, target
from lowering.settings import settings
made = []
mathlib.define = lambda *a, _define=mathlib.define: made.append(a) or _define(*a)
x = np.linspace(-3, 3, 1000, dtype=np.float32)
y = tracer.jit(lambda x: sum(tnp.tanh(x * (k + 0.125)) for k in range(settings.share_at + 1)))(x)
want = sum(np.tanh(x.astype(np.float64) * np.float32(k + 0.125)) for k in range(settings.share_at + 1))
assert np.allclose(y, want, rtol=1e-5, atol=1e-5)
print(target.stats["compiled"], bool(made))
"""


def test_a_warm_process_loads_the_math_library_without_generating_it(tmp_path):
    from fresh import run_script
    # the module, the math library and the segments' runner (lowering.llvm.entries)
    assert run_script(WARM, cache=tmp_path).split() == ["3", "True"]
    assert run_script(WARM, cache=tmp_path).split() == ["0", "False"]
