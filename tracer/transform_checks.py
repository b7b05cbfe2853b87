"""The checks of the values given to the autodiff transforms (tracer.transforms,
tracer.jacobians): cotangents and tangents against what they stand for, with JAX's
messages, each saying what to pass instead."""
import numpy as np

from ir.errors import DTypeError, GradientError, GradientTypeError
from ir.types import dtype_kind
from tracer.float0s import float0, is_float0
from tracer.pytree import flatten
from tracer.signature import leaf_aval, reject_foreign_tracer


def matching_leaves(where, what, values, tree, shapes):
    """The leaves of `values` (cotangents, tangents), checked to have the structure `tree`
    and the leaf `shapes` of what they stand for, else a GradientError saying which."""
    leaves, got = flatten(values)
    if got != tree:
        raise GradientTypeError(f"{where}: {what} structure {got} does not match {tree}")
    for x, shape in zip(leaves, shapes):
        if tuple(np.shape(x)) != tuple(shape):
            raise GradientError(f"{where}: {what} shape {np.shape(x)} does not match "
                                f"{tuple(shape)}")
    return leaves


def check_cotangents(name, cotangent, tree, avals):
    """The leaves of vjp_fn's `cotangent`, checked as JAX's: the structure and the leaf
    shapes of the function's output. Unlike JAX a float cotangent of another float dtype
    is accepted and cast to the output's dtype (as NumPy casts)."""
    leaves, got = flatten(cotangent)
    if got != tree:
        raise GradientTypeError(f"unexpected tree structure. The argument to a VJP function "
                                f"returned by `jax.vjp` must match the pytree structure of "
                                f"the differentiated function {name}: vjp_fn: cotangent "
                                f"structure {got} does not match {tree}")
    for x, aval in zip(leaves, avals):
        if tuple(np.shape(x)) != tuple(aval.shape):
            got = (str(leaf_aval(x, "vjp_fn").strip_weak()) if not is_float0(x) else
                   f"float0[{','.join(map(str, np.shape(x)))}]")
            raise GradientError(
                f"unexpected JAX type (e.g. shape/dtype) for argument to VJP function: got "
                f"{got}, but expected {aval.strip_weak()} because the corresponding output "
                f"of the differentiated function had JAX type {aval.strip_weak()}. vjp_fn: "
                f"cotangent shape {np.shape(x)} does not match {tuple(aval.shape)}")
    return leaves


def check_tangent_dtypes(where, primal_dtypes, tangents):
    """TypeError (as jax.jvp) unless each tangent has its primal's dtype, or float0 for an
    integer or bool primal: a tangent is never cast, since narrowing it loses precision
    and a float tangent of an integer has no meaning."""
    for k, (p, t) in enumerate(zip(primal_dtypes, tangents)):
        reject_foreign_tracer(t, where)
        got = t.dtype if hasattr(t, "dtype") else np.asarray(t).dtype
        got = got if got.isnative else got.newbyteorder("=")
        want = p if dtype_kind(p) == "f" else float0
        if got != want:
            fix = (f"cast it, e.g. t.astype({str(want)!r})" if want is p else
                   "pass np.zeros(shape, tracer.float0)")
            raise DTypeError(
                f"primal and tangent arguments to jax.jvp do not match; dtypes must be "
                f"equal, or in case of int/bool primal dtype the tangent dtype must be "
                f"float0. {where}: tangent {k} has dtype {'float0' if got == float0 else got} for "
                f"a primal of dtype {p}: {fix}")


def check_reduce_axes(reduce_axes, where):
    """JAX accepts only an empty reduce_axes (NotImplementedError otherwise)."""
    if reduce_axes:
        raise NotImplementedError(f"{where}: reduce_axes={reduce_axes!r} is not supported "
                                  f"(JAX deprecated it and accepts only ()); sum the result "
                                  f"over the axis with lax.psum instead")
