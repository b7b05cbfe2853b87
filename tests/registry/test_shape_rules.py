"""Shape rules of the built-in kernels (strict: no implicit broadcasting or promotion) and
how any rule is applied; errors name the kernel and the offending shapes or dtypes."""
import numpy as np
import pytest

import registry
from ir import DTypeError, KernelError, ShapedArray, ShapeError
from registry.shape_rules import apply_shape_rule

F32, F64, I32, I64, B = (np.dtype(d) for d in ("float32", "float64", "int32", "int64", "bool"))


def A(*shape, dtype=F32):
    return ShapedArray(shape, dtype)


def infer(kernel, *avals, **attrs):
    out = registry.infer_avals(kernel, list(avals), attrs)
    return out[0] if len(out) == 1 else out


GOOD = [
    ("exp", [A(2, 3)], {}, A(2, 3)),
    ("neg", [A(3, dtype=I32)], {}, A(3, dtype=I32)),
    ("add", [A(2, 3), A(2, 3)], {}, A(2, 3)),
    ("gt", [A(3, dtype=I32), A(3, dtype=I32)], {}, A(3, dtype=B)),
    ("select", [A(3, dtype=B), A(3), A(3)], {}, A(3)),
    ("convert", [A(3)], {"dtype": I64}, A(3, dtype=I64)),
    ("reduce_sum", [A(2, 3, 4)], {"axes": (0, 2)}, A(3)),
    ("reduce_max", [A(2, 3)], {"axes": ()}, A(2, 3)),
    ("argmax", [A(2, 3)], {"axis": 1}, A(2, dtype=I64)),
    ("broadcast_to", [A(3)], {"shape": (2, 3)}, A(2, 3)),
    ("broadcast_to", [A(1, 3)], {"shape": (4, 0, 3)}, A(4, 0, 3)),
    ("reshape", [A(2, 3)], {"shape": (3, 2, 1)}, A(3, 2, 1)),
    ("transpose", [A(2, 3, 4)], {"perm": (2, 0, 1)}, A(4, 2, 3)),
    ("slice", [A(5, 4)], {"start": (1, 0), "limit": (5, 4), "step": (2, 3)}, A(2, 2)),
    ("rev", [A(5, 4)], {"axes": (1,)}, A(5, 4)),
    ("pad", [A(3)], {"lo": (1,), "hi": (2,), "interior": (1,)}, A(8)),
    ("concatenate", [A(2, 3), A(2, 1)], {"axis": 1}, A(2, 4)),
    ("take", [A(5, 4), A(2, 3, dtype=I64)], {"axis": 0}, A(2, 3, 4)),
    ("scatter_add", [A(2, 3, 4), A(2, 3, dtype=I64)], {"axis": 0, "size": 5}, A(5, 4)),
    ("matmul", [A(7, 2, 3), A(7, 3, 4)], {}, A(7, 2, 4)),
]


@pytest.mark.parametrize("kernel,avals,attrs,want", GOOD, ids=[g[0] for g in GOOD])
def test_builtin_rules(kernel, avals, attrs, want):
    assert infer(kernel, *avals, **attrs) == want


BAD = [
    ("add", [A(2, 3), A(3)], {}, ShapeError, r"add: operand shapes \[\(2, 3\), \(3,\)\] differ"),
    ("add", [A(3), A(3, dtype=F64)], {}, DTypeError, r"add: operand dtypes.*float32.*float64"),
    ("exp", [A(3, dtype=I32)], {}, DTypeError, "exp: needs a float operand, got int32"),
    ("select", [A(3), A(3), A(3)], {}, DTypeError, "select: condition must be bool"),
    ("convert", [A(3)], {"dtype": np.complex64}, DTypeError, "convert: dtype complex64"),
    ("reduce_sum", [A(2, 3)], {"axes": (2,)}, ShapeError, r"reduce_sum: axes \(2,\) invalid"),
    ("reduce_sum", [A(2, 3)], {"axes": (0, 0)}, ShapeError, "invalid for rank 2"),
    ("reduce_max", [A(0, 3)], {"axes": (0,)}, ShapeError, r"empty axis of shape \(0, 3\)"),
    ("argmin", [A(3, 0)], {"axis": 1}, ShapeError, "argmin of an empty sequence"),
    ("broadcast_to", [A(2, 3)], {"shape": (3, 3)}, ShapeError,
     r"cannot broadcast shape \(2, 3\) to \(3, 3\)"),
    ("broadcast_to", [A(1)], {"shape": (-1,)}, ShapeError, "negative dimension"),
    ("reshape", [A(2, 3)], {"shape": (4, 2)}, ShapeError, r"cannot reshape \(2, 3\)"),
    ("reshape", [A(2, 3)], {"shape": (-2, -3)}, ShapeError, "negative dimension"),
    ("transpose", [A(2, 3)], {"perm": (0, 0)}, ShapeError, "not a permutation"),
    ("slice", [A(5)], {"start": (3,), "limit": (2,), "step": (1,)}, ShapeError, "bad bounds"),
    ("slice", [A(5)], {"start": (0,), "limit": (5,), "step": (-1,)}, ShapeError, "bad bounds"),
    ("concatenate", [A(2, 3), A(3, 3)], {"axis": 1}, ShapeError, "differ off axis 1"),
    ("concatenate", [A(2), A(2, dtype=I32)], {"axis": 0}, DTypeError, "dtypes"),
    ("take", [A(3), A(2)], {"axis": 0}, DTypeError, "take: indices must be integers"),
    ("scatter_add", [A(2, 3), A(4, dtype=I64)], {"axis": 0, "size": 5}, ShapeError,
     "do not match indices"),
    ("matmul", [A(2, 3), A(2, 3)], {}, ShapeError, r"matmul: shapes \(2, 3\) and \(2, 3\)"),
    ("matmul", [A(2, 2, 3), A(3, 3, 4)], {}, ShapeError, "equal batch dims"),
    ("matmul", [A(2, 3), A(3, 4, dtype=F64)], {}, DTypeError, "matmul: dtypes"),
]


@pytest.mark.parametrize("kernel,avals,attrs,exc,msg", BAD,
                         ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD)])
def test_builtin_rules_reject_bad_inputs_naming_the_kernel(kernel, avals, attrs, exc, msg):
    with pytest.raises(exc, match=msg):
        infer(kernel, *avals, **attrs)


# Shapes whose sizes overflow int64 arithmetic, or that no array could have: every rule
# computes exactly (Python ints) and the result must fit in what one array can address.
HUGE = 2**62
TOO_BIG = [
    ("reshape", [A(4, dtype=F64)], {"shape": (HUGE + 1, 4)}, r"cannot reshape \(4,\)"),
    ("reshape", [A(2, 3)], {"shape": (2.5, 2)}, r"reshape: invalid target shape \(2.5, 2\)"),
    ("broadcast_to", [A(4, dtype=F64)], {"shape": (HUGE, 4)}, r"broadcast_to: .*\(4611686018427"),
    ("broadcast_to", [A(1, dtype=B)], {"shape": (2**64, 0)}, "too large"),
    ("broadcast_to", [A(1)], {"shape": (np.float64(3),)}, "invalid target shape"),
    ("pad", [A(3)], {"lo": (HUGE,), "hi": (0,), "interior": (0,)}, "pad: .*too large"),
    ("pad", [A(3)], {"lo": (0,), "hi": (0,), "interior": (np.int64(HUGE),)}, "too large"),
    ("pad", [A(3)], {"lo": (0.5,), "hi": (0,), "interior": (0,)}, "pad: lo"),
    ("slice", [A(5)], {"start": (0.0,), "limit": (5,), "step": (1,)}, "slice: start"),
    ("concatenate", [A(2**59, dtype=F64), A(2**59, dtype=F64)], {"axis": 0}, "too large"),
    ("matmul", [A(2**31, 1), A(1, 2**33)], {}, r"matmul: .*\(2147483648, 8589934592\)"),
    ("take", [A(4, 2**30), A(2**20, 2**20, dtype=I64)], {"axis": 0}, "take: .*too large"),
    ("scatter_add", [A(2, dtype=F64), A(2, dtype=I64)], {"axis": 0, "size": 2**61}, "too large"),
    ("scatter_add", [A(2), A(2, dtype=I64)], {"axis": 0, "size": -1}, "scatter_add: size"),
]


@pytest.mark.parametrize("kernel,avals,attrs,msg", TOO_BIG,
                         ids=[f"{b[0]}-{i}" for i, b in enumerate(TOO_BIG)])
def test_sizes_are_exact_and_must_be_addressable(kernel, avals, attrs, msg):
    with pytest.raises(ShapeError, match=msg):
        infer(kernel, *avals, **attrs)


def test_largest_addressable_shapes_are_accepted():
    assert infer("broadcast_to", A(1, dtype=B), shape=(2**62 - 1, 2)) == A(2**62 - 1, 2, dtype=B)
    assert infer("broadcast_to", A(1, dtype=F64), shape=(2**59, 0)) == A(2**59, 0, dtype=F64)
    assert infer("reshape", A(2**20, 2**30), shape=(2**50,)) == A(2**50)


class Duck:
    """Any object with .shape and .dtype will do as a rule's result."""

    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, dtype


@pytest.fixture
def rule():
    holder = {}
    registry.register_shape_rule("test_rule", lambda *a, **k: holder["rule"](*a, **k))
    yield holder
    registry.unregister_shape_rule("test_rule")


def test_apply_shape_rule_accepts_duck_typed_results_and_tuples(rule):
    rule["rule"] = lambda x: Duck([2, 3], "float32")
    assert apply_shape_rule("test_rule", [A(1)], {}) == ((A(2, 3),), False)
    rule["rule"] = lambda x, *, n: tuple(Duck((n,), x.dtype) for _ in range(n))
    assert apply_shape_rule("test_rule", [A(1)], {"n": 2}) == ((A(2), A(2)), True)


def test_apply_shape_rule_wraps_malformed_rules(rule):
    rule["rule"] = lambda x: x.no_such_attribute
    with pytest.raises(KernelError, match=r"shape rule of 'test_rule' failed on inputs "
                                          r"\(f32\[1\]\) with attrs \{\}: AttributeError"):
        apply_shape_rule("test_rule", [A(1)], {})
    with pytest.raises(KernelError, match="unexpected keyword argument 'bogus'"):
        apply_shape_rule("test_rule", [A(1)], {"bogus": 1})
    rule["rule"] = lambda x: "f32[3]"
    with pytest.raises(KernelError, match="must return objects with .shape"):
        apply_shape_rule("test_rule", [A(1)], {})
    rule["rule"] = lambda x: Duck((2,), np.complex64)
    with pytest.raises(DTypeError, match="shape rule of 'test_rule': dtype complex64"):
        apply_shape_rule("test_rule", [A(1)], {})
    rule["rule"] = lambda x: Duck((-1,), np.float32)
    with pytest.raises(KernelError, match="negative dimension"):
        apply_shape_rule("test_rule", [A(1)], {})
    rule["rule"] = lambda x: Duck((2.5,), np.float32)
    with pytest.raises(KernelError, match=r"shape rule of 'test_rule' returned .*2\.5"):
        apply_shape_rule("test_rule", [A(1)], {})
    rule["rule"] = lambda x: Duck((2**61, 4), np.float64)
    with pytest.raises(ShapeError, match=r"test_rule: .*too large"):
        apply_shape_rule("test_rule", [A(1)], {})
