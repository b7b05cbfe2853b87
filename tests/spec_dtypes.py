"""The spec table's sample of the small, unsigned and half-float dtypes (see spec.py):
which row runs on which, the bfloat16 reference and the tolerances by dtype."""
from dataclasses import replace

import numpy as np

from ir import BFLOAT16, dtype_kind

F32, F64, I32, I64 = map(np.dtype, ("float32", "float64", "int32", "int64"))
F16, BF16 = np.dtype(np.float16), BFLOAT16
I8, I16, U8, U16, U32, U64 = map(np.dtype, ("int8", "int16", "uint8", "uint16", "uint32",
                                            "uint64"))
NEW_FLOATS, NEW_INTS = (F16, BF16), (U8, I16, U32, I8, U64, U16)


def tolerance(dtype, default=(0.0, 0.0)):
    """(rtol, atol) against the reference: half floats round at each op, where the
    reference may round at other points (float32 math, another composition)."""
    return {F16: (2e-3, 2e-3), BF16: (2e-2, 2e-2)}.get(np.dtype(dtype), default)


def computed_in(dtype):
    """The float a float function computes `dtype` in: ints and bools in the smallest float
    holding them, as NumPy (int8 -> float16, int16 -> float32, int32 -> float64)."""
    return dtype if dtype_kind(dtype) == "f" else np.result_type(dtype, np.float16)


def check_row(got, want, dt, atol=0.0, f32_rtol=2e-6):
    """A spec row's result against its reference: same dtype and shape, values as close as
    the less precise of the float input `dt` computes in and a float result allow."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    dts = [computed_in(dt)] + ([want.dtype] if dtype_kind(want.dtype) == "f" else [])
    rtol, half_atol = np.max([tolerance(d, (f32_rtol if d == F32 else 1e-12, 0.0))
                              for d in dts], axis=0)
    if half_atol:        # assert_allclose has no half-float arithmetic
        got, want = got.astype(np.float64), want.astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol + half_atol)


def bf16_ref(ref):
    """NumPy has no bfloat16 math (ml_dtypes' matmul gives float32, mixed promotion fails):
    the reference of bfloat16 inputs is the float32 one with float32 results rounded."""
    if getattr(ref, "rounds_bf16", False):
        return ref

    def rounded(n, *xs):
        if not any(getattr(x, "dtype", None) == BF16 for x in xs):
            return ref(n, *xs)
        out = ref(n, *[x.astype(F32) if x.dtype == BF16 else x for x in xs])
        return np.asarray(out).astype(BF16) if np.asarray(out).dtype == F32 else out
    rounded.rounds_bf16 = True
    return rounded


# rows whose bfloat16 result is not the float32 reference's rounded: NumPy's own operators
# on an eager bfloat16 array and a Python float give float32 (ml_dtypes), an explicit
# astype(float32), an int64 operand (bfloat16 wins, as in JAX; float32 gives float64)
NOT_BF16 = {"scalar_ops", "operator_reflected", "operator_float_reflected", "operator_matmul",
            "methods_shape", "astype", "astype_float32", "tri_indices", "average_weights",
            "ix_"}
SIGNED_ONLY = {"operator_int_reflected"}    # negative Python ints: NumPy refuses for uints


def with_new_dtypes(specs):
    """Each row plus one new dtype: rows taking floats and ints alternate between a half
    float and a small/unsigned int, each family's dtypes taken in turn."""
    out, turn = [], {NEW_FLOATS: 0, NEW_INTS: 0}
    for i, s in enumerate(specs):
        fams = [fam for fam, olds in ((NEW_FLOATS, (F32, F64)), (NEW_INTS, (I32, I64)))
                if set(olds) & set(s.dtypes)]
        if not fams:
            out.append(s)
            continue
        fam = fams[i % len(fams)]
        new = fam[turn[fam] % len(fam)]
        turn[fam] += 1
        if s.name in NOT_BF16 and new == BF16:
            new = F16
        if s.name in SIGNED_ONLY and dtype_kind(new) == "u":
            new = I8
        out.append(replace(s, dtypes=s.dtypes + (new,)))
    return out
