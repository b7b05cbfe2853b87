"""Integer `div` is NumPy's floor division (`//`) on every backend, eagerly and under jit:
exact in 64 bits, x // 0 == 0 and INT_MIN // -1 == INT_MIN (wrapping) without raising,
as NumPy computes them (NumPy only warns). Native code must not trap: x86 `idiv` faults on
both of those, so the llvm runs happen in a subprocess."""

import numpy as np
import pytest
from fresh import run_script


SCRIPT = r'''
import warnings
import numpy as np
import tracer
from lowering.llvm import run_eager

warnings.simplefilter("error")         # NumPy warns on these; the kernels must not
for dt in (np.int32, np.int64):
    info = np.iinfo(dt)
    a = np.array([7, -7, 7, -7, 0, info.min, info.min, info.max, 1, -5, 6, info.min], dt)
    b = np.array([2, 2, -2, -2, 0, -1, 1, -1, 0, 0, 3, 0], dt)
    if dt == np.int64:
        a[-2], b[-2] = 2**62 + 1, 1            # exact: float64 would round it to 2**62
    with np.errstate(all="ignore"):
        want = np.floor_divide(a, b)
    assert list(want[[4, 5, 8, 9, 11]]) == [0, info.min, 0, 0, 0]
    div = lambda a, b: tracer.run_kernel("div", [a, b])
    got = {"numpy eager": div(a, b), "llvm eager": run_eager("div", [a, b], {}),
           "numpy jit": tracer.jit(div, backend="numpy")(a, b),
           "llvm jit": tracer.jit(div, backend="llvm")(a, b),
           "llvm jit, divisor constant 0": tracer.jit(lambda a: div(a, np.zeros_like(b)))(a),
           "llvm jit, divisor constant -1": tracer.jit(lambda a: div(a, np.full_like(b, -1)))(a)}
    for name, g in got.items():
        w = (np.zeros_like(a) if "constant 0" in name else
             np.negative(a) if "constant -1" in name else want)   # -INT_MIN wraps to INT_MIN
        assert g.dtype == dt and np.array_equal(g, w), (name, dt, g, w)
print("ok")
'''


def test_integer_div_is_numpys_floor_division_on_every_backend():
    assert run_script(SCRIPT, timeout=300).strip() == "ok"


@pytest.mark.filterwarnings("ignore::RuntimeWarning")      # as NumPy's own 1 / 0
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_float_div_stays_true_division(dt):
    import tracer
    a, b = np.array([7, -7, 1, 0], dt), np.array([2, 2, 0, 0], dt)
    with np.errstate(all="ignore"):
        want = a / b
    for backend in ("numpy", "llvm"):
        got = tracer.jit(lambda a, b: tracer.run_kernel("div", [a, b]), backend=backend)(a, b)
        np.testing.assert_array_equal(got, want)
