"""The user's face: tracing, run_kernel, transformations, custom gradients.

    import tracer, tracer.numpy as tnp
    f = tracer.jit(lambda x: tnp.sum(tnp.tanh(x) ** 2))
    tracer.grad(f)(x); print(tracer.make_graph(tracer.grad(f))(x))
"""
import lowering  # noqa: F401  (registers the numpy backend's kernels)
from ir.errors import (ArgumentError, BackendNotFoundError, CodegenError,
                       ConcretizationError, DTypeError, GradientError, GradientNotFoundError,
                       IRError, KernelError, KernelNotFoundError, OutOfBoundsError,
                       ShapeError, ShapeRuleNotFoundError, TracerError)
from ir.errors import (ArgumentValueError, GradientTypeError, IndexingError,
                       ShapeMismatchError, TracerBoolConversionError,
                       TracerIntegerConversionError)
from ir.errors import (NonConcreteBooleanIndexError, TracerArrayConversionError,
                       UnexpectedTracerError)
from tracer.core import Tracer, get_backend, run_kernel, set_backend
from tracer import config  # noqa: F401  (jax.config's flags: small, and tracer.numpy reads it)
from tracer.config import (allow_f16_reductions, check_tracer_leaks, debug_infs, debug_nans,
                           default_matmul_precision, default_prng_impl, enable_x64,
                           explain_cache_misses, legacy_prng_key, log_compiles,
                           no_execution, no_tracing, numpy_rank_promotion)
from tracer import methods  # noqa: F401  (operators on Tracer)
from tracer import kernels  # noqa: F401  (declares the built-in kernels)
from tracer.jit import clear_caches, eval_shape, jit, make_graph
from tracer.aot import ShapeDtypeStruct, block_until_ready
from tracer.float0s import float0
from tracer.transforms import grad, jvp, value_and_grad, vjp
from tracer.custom import custom_grad, custom_grad as custom_gradient, custom_vjp
from tracer.device_transfer import device_get, device_put
from tracer.jit_disabled import disable_jit
from tracer.linear_transpose import linear_transpose
from tracer.custom_jvp import custom_jvp
from tracer.vmap import vmap
from tracer.jacobians import hessian, jacfwd, jacrev, jacrev as jacobian, linearize
from tracer.check import check_grads
from tracer import numpy, nn, lax, tree, tree_util  # noqa: F401
from tracer import numpy_mapped  # noqa: F401  (tracer.numpy's vmap- and loop-built names)
from tracer import errors  # noqa: F401  (JAX's error names: jax.errors)
from tracer import random  # noqa: F401  (JAX's threefry PRNG as tracer.numpy ops)
from tracer import debug  # noqa: F401  (debug.print, debug.callback)
from tracer.leak_check import checking_leaks
from tracer.callbacks import pure_callback
from tracer.lax.remat import checkpoint, checkpoint as remat, checkpoint_name
from tracer import checkpoint_policies  # noqa: F401
from tracer import export  # noqa: F401  (onnx is imported only when used)
from tracer import distributed, sharding  # noqa: F401
from tracer.sharding import P, make_mesh, shard_map

__all__ = ["export", "jit", "make_graph", "grad", "value_and_grad", "vjp", "jvp", "vmap",
           "jacfwd", "jacrev", "hessian", "linearize", "float0",
           "custom_vjp", "custom_jvp", "custom_grad", "custom_gradient", "checkpoint", "remat",
           "jacobian", "linear_transpose", "disable_jit", "device_put", "device_get", "tree",
           "checkpoint_policies", "checkpoint_name", "run_kernel", "set_backend",
           "get_backend", "check_grads", "Tracer", "numpy", "nn", "lax", "random", "tree_util",
           "TracerError", "ShapeError", "OutOfBoundsError", "DTypeError", "ArgumentError",
           "KernelNotFoundError", "BackendNotFoundError", "ShapeRuleNotFoundError",
           "GradientNotFoundError", "GradientError", "ConcretizationError", "KernelError",
           "IRError", "CodegenError", "ShapeMismatchError", "IndexingError",
           "ArgumentValueError", "GradientTypeError", "TracerBoolConversionError",
           "TracerIntegerConversionError"]
__all__ += ["errors", "UnexpectedTracerError", "TracerArrayConversionError",
            "NonConcreteBooleanIndexError"]
__all__ += ["distributed", "sharding", "P", "make_mesh", "shard_map"]
__all__ += ["ShapeDtypeStruct", "block_until_ready", "eval_shape"]
__all__ += ["debug", "pure_callback", "debug_nans", "debug_infs", "checking_leaks",
            "check_tracer_leaks"]
__all__ += ["scipy"]
__all__ += ["allow_f16_reductions", "clear_caches", "config", "default_matmul_precision",
            "default_prng_impl", "enable_x64", "explain_cache_misses", "legacy_prng_key",
            "log_compiles", "no_execution", "no_tracing", "numpy_rank_promotion"]


def __getattr__(name):
    """tracer.scipy (jax.scipy's special, stats and linalg) is imported on first use, as
    jax.scipy is: ~50 ms of import time that programs without it need not pay."""
    if name == "scipy":
        import importlib
        return importlib.import_module("tracer.scipy")
    raise AttributeError(f"module 'tracer' has no attribute {name!r}")
