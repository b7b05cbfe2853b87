"""Each built-in kernel's backend-independent facts (shape rule, family, gradient,
batching rule, differentiability, differentiable form, pruner) are declared in one place:
a module of tracer.kernels (which imports without a circle and reads no other module's
private names), or, for the kernels of tracer.lax, tracer.numpy.linalg and
tracer.custom, the module of their ops; their backend parts (NumPy kernels, llvm impls,
ONNX rules) live in lowering."""
import pytest

import registry
import tracer.kernels
from module_imports import assert_no_circle, imports, private_names
from registry import families
from registry.batching import BATCHING_RULES
from registry.exporters import OnnxOperator
from tracer.kernels import BUILTIN_KERNELS


def _home(fn):
    return fn.__module__


@pytest.mark.parametrize("kernel", BUILTIN_KERNELS)
def test_every_fact_of_a_builtin_kernel_is_declared_in_one_module(kernel):
    homes = {_home(registry.get_shape_rule(kernel))}
    if registry.has_gradient(kernel):
        homes.add(_home(registry.get_gradient(kernel)))
    if kernel in BATCHING_RULES.entries:
        homes.add(_home(BATCHING_RULES.entries[kernel]))
    assert len(homes) == 1 and homes.pop().startswith("tracer.kernels."), kernel
    assert registry.family(kernel) is not None
    # a kernel passes gradients exactly when it declares how
    assert families.differentiable(kernel) == registry.has_gradient(kernel)


def test_the_builtins_are_the_kernels_the_backends_implement():
    assert len(set(BUILTIN_KERNELS)) == len(BUILTIN_KERNELS) >= 59
    for backend in ("numpy", "llvm"):
        assert [k for k in BUILTIN_KERNELS if not registry.has_kernel(k, backend)] == []


def test_no_import_circle_and_no_private_names():
    found = imports(tracer.kernels)
    assert_no_circle(found)
    assert not private_names(found)


# kernels declared beside their ops in tracer.lax, tracer.numpy.linalg_kernels and
# tracer.custom
LAX_KERNELS = ("cond", "remat", "scan", "while", "stop_gradient", "dynamic_index",
               "dynamic_update_index", "bitcast", "checkpoint_name", "solve", "slogdet",
               "cholesky", "qr", "eigh", "svd", "conv", "reduce_window", "tile_scatter",
               "scatter", "custom_call")
COLLECTIVES = ("psum", "pmax", "pmin", "all_gather", "psum_scatter", "ppermute",
               "all_to_all", "axis_index")


def _facts(kernel):
    """Every backend-independent part declared for `kernel`."""
    parts = [registry.get_shape_rule(kernel)]
    for table in (registry.tables.GRADIENTS, BATCHING_RULES, families.FORMS,
                  families.PRUNERS):
        parts.append(table.entries.get(kernel))
    return [p for p in parts if p is not None]


@pytest.mark.parametrize("kernel", LAX_KERNELS + COLLECTIVES)
def test_a_kernel_declared_beside_its_op_has_its_facts_in_that_one_module(kernel):
    homes = {_home(p) for p in _facts(kernel)}
    assert len(homes) == 1 and homes.pop().startswith(
        ("tracer.lax.", "tracer.numpy.", "tracer.custom")), \
        (kernel, {_home(p) for p in _facts(kernel)})
    if kernel in LAX_KERNELS:
        assert families.differentiable(kernel) == registry.has_gradient(kernel)


def _impl_home(impl):
    """Where a backend part is defined: a function's module, an impl object's class's (the
    generic OnnxOperator of registry.exporters counts as its rule table's, lowering)."""
    if isinstance(impl, OnnxOperator):
        return "lowering.onnx"
    return impl.__module__ if callable(impl) and hasattr(impl, "__code__") else \
        type(impl).__module__


@pytest.mark.parametrize("kernel", LAX_KERNELS + COLLECTIVES)
def test_every_backend_part_lives_in_lowering(kernel):
    d = registry.describe(kernel)
    parts = list(d.impls.values()) + list(d.exporters.values())
    assert parts and all(_impl_home(p).startswith("lowering.") for p in parts), \
        (kernel, [_impl_home(p) for p in parts])
