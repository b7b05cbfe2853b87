"""The llvm backend on int8, int16, uint8..uint64, float16 and bfloat16 (issue 11), kernel
by kernel as one-node graphs against NumPy (and ml_dtypes): conversions between every
pair of dtypes including NaN, inf and out-of-range values, unsigned semantics, small-int
wrap-around, float16/bfloat16 rounding (ties to even, op by op as NumPy rounds),
reductions, scans, sorting, indexing, matmul, and a uint32 threefry chain that must
vectorize for AVX2 and AVX-512 (code generated for both on any x86 host)."""
import platform
import re
import warnings

import ml_dtypes
import numpy as np
import pytest

from ir import Graph, Literal, Node, ShapedArray, Var
from lowering.llvm import compile_graph
from lowering.llvm.scalars import BINARY, UNARY
from lowering.numpy_kernels import IMPLS, SCANS

BF16 = np.dtype(ml_dtypes.bfloat16)
NEW = [np.dtype(t) for t in (np.int8, np.int16, np.uint8, np.uint16, np.uint32, np.uint64,
                             np.float16)] + [BF16]
ALL = [np.dtype(t) for t in (np.bool_, np.int32, np.int64, np.float32, np.float64)] + NEW
FLOATS = [1e20, -1e20, 3e9, -3e9, 5e9, 9.3e18, 2e19, 300.7, -300.7, -1.0, -0.5, -0.0, 0.5,
          2.5, 3.5, 65504.0, 65519.0, 65520.0, 70000.0, 2147483647.5, -2147483648.9, 1e-5,
          1e-8, 1e-40, 1 + 2**-11, 1 + 3 * 2**-11, 1 + 2**-8, 1 + 3 * 2**-8,
          1 + 2**-11 + 2**-40, 2**24 + 2**16 + 1, 4294967295.0, 4294967296.0, 2.0**64,
          -40000.0, 40000.0, 128.0, -129.0, 255.9, 256.0, np.nan, np.inf, -np.inf]
INTS = [0, 1, -1, 2**63 - 1, -2**63, 2**31 - 1, -2**31, 2**32 - 1, 2**24 + 2**16 + 1, 65519,
        65520, 2049, 2051, 127, 128, 255, 256, -129, 40000, -40000, 2**53 + 1, 2**63 + 2**40 + 1]
R = np.random.default_rng(0)


def run(nodes, ins, outs, args):
    return compile_graph(Graph(ins, outs, nodes)).run(list(args))


def one(kernel, args, out_dtype, **attrs):
    """Kernel on `args` as a one-node graph whose output has `out_dtype` and NumPy's shape."""
    with np.errstate(all="ignore"):
        want = np.asarray((IMPLS | SCANS)[kernel](*args, **attrs))
    ins = [Var(ShapedArray(a.shape, a.dtype)) for a in args]
    out = Var(ShapedArray(want.shape, out_dtype))
    return run([Node(kernel, ins, [out], attrs)], ins, [out], args)[0], want


def values(dt):
    if dt.kind == "b":
        return np.array([True, False, True])
    if dt.kind in "iu":
        bits = 8 * dt.itemsize
        wrapped = np.array([v % (1 << bits) for v in INTS], np.uint64)
        return wrapped.astype(f"u{dt.itemsize}").view(dt)
    with np.errstate(over="ignore"):
        return np.array(FLOATS).astype(dt)


def assert_same(got, want, what=""):
    """Equal values and dtypes; floats bit for bit but any NaN matches any NaN."""
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind in "fV":
        g, w = got.astype(np.float64), want.astype(np.float64)
        ok = (g == w) & (np.signbit(g) == np.signbit(w)) | np.isnan(g) & np.isnan(w)
    else:
        ok = got == want
    assert ok.all(), (what, got[~ok][:5], want[~ok][:5])


@pytest.mark.parametrize("src", ALL, ids=str)
def test_conversions_to_every_dtype_are_the_numpy_kernels(src):
    """astype as the numpy kernel does it: NumPy's (ml_dtypes' for bfloat16), except float
    -> int, which saturates as JAX's does (tests/lowering/test_one_answer.py); float64 ->
    float16 rounds once."""
    x = values(src)
    ins = [Var(ShapedArray(x.shape, src))]
    outs = [Var(ShapedArray(x.shape, d)) for d in ALL if d != src]
    got = run([Node("convert", ins, [o], {"dtype": o.aval.dtype}) for o in outs], ins, outs, [x])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for o, g in zip(outs, got):
            assert_same(g, IMPLS["convert"](x, dtype=o.aval.dtype))


def _data(dt, n=64):
    if dt.kind in "iu":
        info = np.iinfo(dt)
        v = R.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        v[:8] = np.array([0, 1, 2, 3, info.max, info.min, info.max - 1, 7], dt)
        return v
    v = (R.normal(size=n) * 4).astype(dt)
    v[:6] = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0]).astype(dt)
    return v


CMP = ("gt", "ge", "lt", "le", "eq", "ne", "signbit")


def _elementwise_cases(dt):
    k = "f" if dt == BF16 else dt.kind
    x, y = _data(dt), _data(dt)
    small = y % np.array(8 * dt.itemsize + 3, dt) if k != "f" else y   # shift amounts
    for table, arity in ((UNARY, 1), (BINARY, 2)):
        for name, (ops, _) in table.items():
            if k not in ops:
                continue
            if arity == 1:
                yield name, [x]
            elif name == "pow" and k != "f":
                yield name, [x, small % 5]
            else:
                yield name, [x, small if name in ("shl", "shr") else y]


@pytest.mark.parametrize("dtype", NEW, ids=str)
def test_elementwise_kernels_match_numpy(dtype):
    """Unsigned compare/div/max/min/shr/sign/pow, small-int wrap-around, and float16/
    bfloat16 results rounded after every op: equal to NumPy's (ml_dtypes') bit for bit,
    transcendentals included (the float32 mathlib, then one rounding)."""
    for name, args in _elementwise_cases(dtype):
        out = np.dtype(np.bool_) if name in CMP else dtype
        assert_same(*one(name, args, out), name)


@pytest.mark.parametrize("dtype, ulp", [(np.dtype(np.float16), 2**-10), (BF16, 2**-7)], ids=str)
def test_fused_chain_rounds_each_op_ties_to_even(dtype, ulp):
    """(x + y) * z - x fused in one loop: every intermediate is rounded as NumPy does, so a
    tie (1 + ulp/2, 1 + 3ulp/2) rounds to even, not up as the float32 value would."""
    x = np.array([1.0, 1.0 + ulp, 3.0, -2.5, 1e-3]).astype(dtype)
    y = np.array([ulp / 2, ulp / 2, 1e-2, 7.1, 3.3e-4]).astype(dtype)
    z = np.array([3.0, 0.1, 7.0, 1.1, 9.9]).astype(dtype)
    ins = [Var(ShapedArray(x.shape, dtype)) for _ in range(3)]
    s, p, d = (Var(ShapedArray(x.shape, dtype)) for _ in range(3))
    nodes = [Node("add", ins[:2], [s]), Node("mul", [s, ins[2]], [p]),
             Node("sub", [p, ins[0]], [d])]
    got = run(nodes, ins, [d], [x, y, z])[0]
    assert_same(got, (x + y) * z - x)
    assert_same(one("add", [x[:2], y[:2]], dtype)[0], np.array([1.0, 1 + 2 * ulp], dtype))


@pytest.mark.parametrize("dtype", NEW, ids=str)
def test_reductions_scans_and_sort(dtype):
    """Integer results exact (wrapping in the dtype, as the numpy kernels); float16/
    bfloat16 max/min/arg*/scans exact, sums and products accumulated in float and rounded
    once (within two ulps of the exact sum: the blocked float64 sum rounds twice)."""
    is_int = dtype.kind in "iu"
    x = (R.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, (6, 7, 40), dtype=dtype,
                    endpoint=True) if is_int else R.uniform(0.5, 2, (6, 7, 40)).astype(dtype))
    x.flat[5] = np.array(np.nan if not is_int else 0).astype(dtype)    # NaN in one row
    for kernel, attrs in [("reduce_max", dict(axes=(2,))), ("reduce_min", dict(axes=(0, 1))),
                          ("argmax", dict(axis=2)), ("argmin", dict(axis=0)),
                          ("cumsum", dict(axis=2)), ("cumprod", dict(axis=1))]:
        assert_same(*_numpy_typed(kernel, x, attrs), kernel)
    got = _numpy_typed("argsort", x, dict(axis=2))[0]     # NaN last (ml_dtypes misplaces it)
    assert_same(got, np.argsort(x.astype(np.float32) if dtype == BF16 else x, axis=2,
                                kind="stable"))
    y = np.nan_to_num(x.astype(np.float64), nan=1.0).astype(dtype)
    for axes in ((2,), (0,), (0, 2)):
        got, want = _numpy_typed("reduce_sum", y, dict(axes=axes))
        if is_int:
            assert_same(got, want)
        else:
            exact = y.astype(np.float64).sum(axis=axes)
            assert got.dtype == dtype
            assert np.all(np.abs(got.astype(np.float64) - exact) <= 2 * ulp_of(exact, dtype))
    got, want = _numpy_typed("reduce_prod", y[:, :, :5], dict(axes=(2,)))
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                               rtol=0 if is_int else 4 * ulp_of(1.0, dtype))


def ulp_of(v, dtype):
    """One float16 or bfloat16 ulp at |v| (float32's scaled by the precision lost)."""
    return np.abs(np.spacing(np.asarray(v, np.float64).astype(np.float32))) * (
        2.0 ** (24 - (11 if dtype == np.float16 else 8)))


def _numpy_typed(kernel, x, attrs):
    """(llvm result, numpy kernel result) of a kernel keeping x's dtype (the index
    kernels: int64)."""
    arg = kernel in ("argmax", "argmin", "argsort")
    return one(kernel, [x], np.dtype(np.int64) if arg else x.dtype, **attrs)


@pytest.mark.parametrize("dtype", [d for d in NEW if d.kind in "iu"], ids=str)
def test_take_and_scatter_add_with_unsigned_and_small_indices(dtype):
    """Indices of any integer dtype are read zero- or sign-extended as their dtype says
    (uint8 200 is 200, not -56)."""
    x = np.arange(3 * 300, dtype=np.float32).reshape(3, 300)
    idx = np.array([[0, 100 if dtype.kind == "i" else 200], [120, 7]], dtype)
    assert_same(*one("take", [x, idx], np.float32, axis=1))
    upd = np.ones((3, 2, 2), np.float32)
    assert_same(*one("scatter_add", [upd, idx], np.float32, axis=1, size=300))


@pytest.mark.parametrize("dtype", NEW, ids=str)
def test_matmul(dtype):
    """Integers exact (wrapping); float16/bfloat16 widened to float, accumulated in float,
    rounded once per K block (k > 1024 here gives two blocks)."""
    for shape_a, shape_b in (((5, 7), (7, 3)), ((2, 20, 1100), (2, 1100, 37))):
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            a, b = (R.integers(info.min, info.max, s, dtype=dtype, endpoint=True)
                    for s in (shape_a, shape_b))
            assert_same(*one("matmul", [a, b], dtype))
            continue
        a, b = (R.normal(size=s).astype(dtype) for s in (shape_a, shape_b))
        got = one("matmul", [a, b], dtype)[0]
        exact = a.astype(np.float64) @ b.astype(np.float64)
        scale = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
        assert got.dtype == dtype
        assert np.all(np.abs(got.astype(np.float64) - exact) <= 2 * ulp_of(scale, dtype))


# ---- uint32 throughput: a threefry-2x32 chain (add, xor, rotate) ---------------------------
U32 = np.dtype(np.uint32)
ROT = (13, 15, 26, 6, 17, 29, 16, 24)


def threefry(x0, x1, k0, k1, op, const):
    """Threefry-2x32, 20 rounds, over any `op(kernel, x, y)`/`const(v)` (graph or NumPy)."""
    ks = [k0, k1, k0 ^ k1 ^ 0x1BD11BDA]
    x0, x1 = op("add", x0, const(ks[0])), op("add", x1, const(ks[1]))
    for i in range(5):
        for r in ROT[4 * (i % 2):4 * (i % 2) + 4]:
            x0 = op("add", x0, x1)
            x1 = op("or", op("shl", x1, const(r)), op("shr", x1, const(32 - r)))
            x1 = op("xor", x1, x0)
        x0 = op("add", x0, const(ks[(i + 1) % 3]))
        x1 = op("add", x1, const((ks[(i + 2) % 3] + i + 1) & 0xFFFFFFFF))
    return x0, x1


def _threefry_graph(n):
    nodes, aval = [], ShapedArray((n,), U32)

    def op(kernel, *xs, **attrs):
        out = Var(aval)
        nodes.append(Node(kernel, list(xs), [out], attrs))
        return out

    ins = [Var(aval), Var(aval)]
    outs = threefry(*ins, 0x12345678, 0x9ABCDEF0, op,
                    lambda v: op("broadcast_to", Literal(v, U32), shape=(n,)))
    return compile_graph(Graph(ins, list(outs), nodes))


def test_threefry_chain_matches_numpy():
    n = 1000
    x0, x1 = np.arange(n, dtype=U32), np.full(n, 7, U32)
    names = {"add": np.add, "or": np.bitwise_or, "xor": np.bitwise_xor,
             "shl": np.left_shift, "shr": np.right_shift}
    want = threefry(x0, x1, 0x12345678, 0x9ABCDEF0, lambda k, x, y: names[k](x, y), U32.type)
    for g, w in zip(_threefry_graph(n).run([x0, x1]), want):
        assert_same(g, w)


def optimized_for(text, machine):
    """Module text optimized as the backend does (O3, loop and SLP vectorizers) for the
    target `machine`: code for a CPU the host may lack, inspected, never run."""
    import llvmlite.binding as llvm
    mod = llvm.parse_assembly(text)
    mod.triple, mod.data_layout = llvm.get_process_triple(), str(machine.target_data)
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pto.loop_vectorization = pto.slp_vectorization = True
    pto.loop_interleaving = pto.loop_unrolling = True
    pb = llvm.create_pass_builder(machine, pto)
    pb.getModulePassManager().run(mod, pb)
    return mod


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="x86 code")
@pytest.mark.parametrize("cpu_name, register", [("haswell", "ymm"), ("znver4", "zmm")])
def test_threefry_chain_vectorizes_fully(cpu_name, register):
    """The main loop does every op of the chain (adds, xors, rotates as funnel shifts) on
    i32 vectors filling the ISA's registers (ymm for AVX2, zmm for AVX-512): the scalar
    remainder loop's ops, one for one. Generated for both CPUs whatever the host is."""
    from lowering.llvm import cpu
    machine = cpu.Cpu(cpu_name).machine
    module = optimized_for(_threefry_graph(1 << 20).as_text(), machine)
    body = str(module)[str(module).index("define"):]
    lanes = max(int(w) for w in re.findall(r"<(\d+) x i32>", body))

    def ops(ty, suffix):
        return sorted(re.findall(rf"= (\w+) {re.escape(ty)} ", body) + re.findall(
            rf"call {re.escape(ty)} @llvm\.(fsh[lr])\.{suffix}\(", body))
    vector = ops(f"<{lanes} x i32>", f"v{lanes}i32")
    assert vector == ops("i32", "i32") and vector.count("fshl") + vector.count("fshr") == 20
    asm = machine.emit_assembly(module)
    assert lanes * 32 >= {"ymm": 256, "zmm": 512}[register] and register in asm
    assert "zmm" not in asm or register == "zmm"
