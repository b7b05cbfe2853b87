"""What JAX 0.10.2's own tests/api_test.py expects of the transforms (issue 26): the
errors JAX raises (of its exception types), and the phrases its tests match in our
messages."""
import re

import numpy as np
import pytest

import tracer


# ---- raised where JAX raises ------------------------------------------------------------

def test_vmap_checks_in_axes_and_out_axes_as_jax():
    """api_test's test_vmap_in_axes_non_tuple_error, _wrong_length_tuple_error,
    _leaf_types, test_vmap_out_axes_leaf_types and test_vmap_in_axes_tree_prefix_error."""
    positional = re.escape("vmap in_axes must be an int, None, or a tuple of entries "
                           "corresponding to the positional arguments passed to the "
                           "function, but got ")
    with pytest.raises(TypeError, match=positional + re.escape("{'a': 0}.")):
        tracer.vmap(lambda x: x["a"], in_axes={"a": 0})          # at vmap(), not the call
    lengths = re.escape("len(in_axes)=2, len(args)=1")
    with pytest.raises(ValueError, match=positional + lengths):
        tracer.vmap(lambda x: x["a"], in_axes=(0, {"a": 0}))({"a": np.zeros((3, 3))})
    for what in ("in_axes", "out_axes"):
        with pytest.raises(TypeError, match=f"vmap {what} must be an int, None, or "
                                            f"\\(nested\\) container with those types as "
                                            f"leaves"):
            tracer.vmap(lambda x: x, **{what: (np.array([1.0, 2.0]),)})
    with pytest.raises(ValueError, match=r"(?s)vmap in_axes specification must be a tree "
                                         r"prefix of the corresponding value;.*Mismatch "
                                         r"details.*different types"):
        tracer.vmap(lambda x: x, in_axes=([0],))(np.ones(3))
    with pytest.raises(ValueError, match="vmap out_axes specification must be a tree prefix"):
        tracer.vmap(lambda x: x, out_axes=(2, 3))(np.ones(2))


def test_vmap_unmapped_output_errors_use_jaxs_words():
    with pytest.raises(ValueError, match="vmap must have at least one non-None value in "
                                         "in_axes"):
        tracer.vmap(lambda x: x, in_axes=None)(np.ones(2))
    with pytest.raises(ValueError, match=r"vmap has mapped output.*axis_name=foo.*but "
                                         r"out_axes is None"):
        tracer.vmap(lambda x: x, out_axes=None, axis_name="foo")(np.ones(2))
    with pytest.raises(ValueError, match=r"at vmap out_axes for output 1, got axis spec None "
                                         r"but output was batched on axis 0"):
        tracer.vmap(lambda x: (1.0, x), out_axes=None)(np.ones(2))


# ---- JAX's phrases in our messages ------------------------------------------------------

def test_vmap_inconsistent_sizes_list_the_axes_as_jax():
    """api_test's test_vmap_mismatched_keyword, test_vmap_explicit_axis_size_mismatch and
    test_vmap_mismatched_axis_sizes_error_message_issue_705; then the function and the fix."""
    def f(x, y):
        return x + y
    head = "vmap got inconsistent sizes for array axes to be mapped:\n"
    with pytest.raises(ValueError, match=re.escape(
            head + "  * one axis had size 1: axis 0 of argument x of type int32[1];\n"
                   "  * one axis had size 2: axis 0 of kwargs['y'] of type int32[2]\n"
                   "All mapped axes of vmap(f) must have one size") + ".*keyword arguments"):
        tracer.vmap(f)(np.array([1], np.int32), y=np.array([1, 2], np.int32))
    with pytest.raises(ValueError, match=re.escape(
            head + "  * the `axis_size` argument was 2;\n"
                   "  * one axis had size 8: axis 0 of argument x of type int32[8]")):
        tracer.vmap(lambda x: x, axis_size=2)(np.arange(8, dtype=np.int32))
    X, U = np.ones((10, 4), np.float32), np.ones((10, 2), np.float32)
    with pytest.raises(ValueError, match=re.escape(
            head + "  * most axes (2 of them) had size 2, e.g. axis 1 of argument b[0] of "
                   "type float32[10,2];\n  * one axis had size 10: axis 0 of argument a of "
                   "type float32[10,4]")):
        tracer.vmap(lambda a, b: a, in_axes=(0, 1))(X, [U, U])
