"""Batching rules: kernel name -> how `tracer.vmap` batches one node of that kernel.

`rule(inputs, batch_dims, attrs)` gets one batch dim per input (an int, or None for an
unbatched input) and returns `(outputs, out_batch_dims)`: an array and an int for a
one-output kernel, tuples of them for several. Rules are written with `tracer.numpy` /
`run_kernel`, so they trace. Like every table, re-registering replaces (that is how a
built-in is overridden) and bumps the kernel's version, so a jit entry whose graph used
the old rule is rebuilt on its next call. A kernel without a rule is still batched:
elementwise kernels (see registry.families) by one shared rule, anything else by a loop.
"""
from ir.errors import ArgumentError, KernelNotFoundError
from registry.versioned import VersionedTable, check_kernel_name, did_you_mean


def _check_rule(name, rule):
    check_kernel_name(name, "register_batching_rule")
    if not callable(rule):
        raise ArgumentError(f"register_batching_rule({name!r}): rule must be callable, got "
                            f"{type(rule).__name__}")


def _missing_rule(name):
    return KernelNotFoundError(
        f"no batching rule registered for kernel {name!r}.{did_you_mean(name, _rules)} "
        f"Register one with registry.register_batching_rule({name!r}, lambda inputs, "
        f"batch_dims, attrs: (outputs, out_batch_dims)).")


BATCHING_RULES = VersionedTable(_missing_rule, _check_rule)
_rules = BATCHING_RULES.entries
register_batching_rule, unregister_batching_rule = (BATCHING_RULES.register,
                                                    BATCHING_RULES.unregister)
get_batching_rule, has_batching_rule = BATCHING_RULES.get, BATCHING_RULES.has
batching_rules = BATCHING_RULES.keys
