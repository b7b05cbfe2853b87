"""Static types: ShapedArray, the supported dtypes, and avals of concrete values."""
import numpy as np
import pytest

from ml_dtypes import bfloat16

from ir import DTypeError, SUPPORTED_DTYPES, ShapedArray, aval_of, check_dtype, dtype_kind


def test_shaped_array_prints_compares_and_hashes():
    a = ShapedArray([3, np.int64(4)], "float32")
    assert str(a) == "f32[3,4]" and a.shape == (3, 4) and a.ndim == 2 and a.size == 12
    assert str(ShapedArray((), np.bool_)) == "bool[]" and ShapedArray((), bool).size == 1
    assert str(ShapedArray((0, 2), np.int32)) == "i32[0,2]"
    assert a == ShapedArray((3, 4), np.float32) and hash(a) == hash(ShapedArray((3, 4), "f4"))
    weak = ShapedArray((), np.float64, weak_type=True)
    assert weak != ShapedArray((), np.float64) and weak.strip_weak() == ShapedArray((), "f8")
    assert a.strip_weak() is a
    assert a != "f32[3,4]"


def test_the_supported_dtypes_and_their_short_names():
    assert [str(d) for d in SUPPORTED_DTYPES] == [
        "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "float16", "bfloat16", "float32", "float64"]
    assert [repr(ShapedArray((2,), d)) for d in SUPPORTED_DTYPES] == [
        "bool[2]", "i8[2]", "i16[2]", "i32[2]", "i64[2]", "u8[2]", "u16[2]", "u32[2]",
        "u64[2]", "f16[2]", "bf16[2]", "f32[2]", "f64[2]"]
    for d in SUPPORTED_DTYPES:
        assert check_dtype(d.type) == d
    assert check_dtype("bfloat16") == np.dtype(bfloat16)
    for bad in (np.complex64, np.float128 if hasattr(np, "float128") else np.complex128,
                "U3", object, "V2"):
        with pytest.raises(DTypeError, match=r"myop: dtype .* is not supported; supported "
                                             r"dtypes are bool, int8, .*, float64\. Cast"):
            check_dtype(bad, "myop")
    with pytest.raises(DTypeError, match="'nonsense' is not a dtype"):
        check_dtype("nonsense")


def test_dtype_kind_says_bfloat16_is_a_float():
    assert np.dtype(bfloat16).kind == "V"       # why dtype_kind exists
    assert [dtype_kind(d) for d in SUPPORTED_DTYPES] == list("biiiiuuuuffff")


def test_aval_of_python_scalars_is_weak():
    assert aval_of(2.0) == ShapedArray((), np.float64, weak_type=True)
    assert aval_of(2) == ShapedArray((), np.int64, weak_type=True)
    assert aval_of(True) == ShapedArray((), np.bool_, weak_type=True)
    assert aval_of(np.float32(2)) == ShapedArray((), np.float32)
    assert aval_of(np.zeros((2, 0), np.int32)) == ShapedArray((2, 0), np.int32)


def test_python_scalars_stand_for_bool_int64_or_float64_whatever_their_size():
    from ir import scalar_array, weak_dtype
    assert [weak_dtype(v) for v in (True, 2 ** 70, 1.5)] == [np.dtype(bool), np.dtype(np.int64),
                                                             np.dtype(np.float64)]
    assert aval_of(2 ** 70) == ShapedArray((), np.int64, weak_type=True)
    assert scalar_array(-(2 ** 63)).dtype == np.int64
    with pytest.raises(DTypeError, match=r"where: Python int 9223372036854775808 does not fit"):
        scalar_array(2 ** 63, "where")
