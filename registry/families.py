"""Kernel families, declared once: what kind of kernel each name is.

Layers that treat whole families alike ask `family(kernel)` instead of keeping their own
name lists: vmap batches the elementwise and along-axis families with one shared rule
each, autodiff's zero masks flow through elementwise kernels, the llvm backend fuses
reductions with their producers, checkpoint policies find contractions, and define_kernel
derives an elementwise kernel's ONNX exporter from an operator name. So a user's kernel
declared "elementwise" is treated like a built-in. Declaring bumps the kernel's version,
as any table change does, so a jit entry built under the old family is rebuilt.

Families: "elementwise" (operands of one shape; output element i depends only on the
operands' elements i), "reduction", "arg_reduction", "index_map" (moves, copies or drops
elements: reshape, transpose, slice...), "along_axis" (one `axis` attr, each lane along it
computed alone: cumsum, argsort), "gather", "scatter", "contraction", "control_flow" (holds
regions), "linalg" (a LAPACK call on the last two axes, batched over the leading ones; the
llvm backend runs its numpy kernel on purpose).

Orthogonal to the family, a kernel may be declared not differentiable (sign,
stop_gradient, comparisons, argmax): its outputs carry no gradient, so autodiff treats
them as constants and never asks the gradient registry. (Bool and integer outputs are never
differentiated anyway; declaring such kernels says they need no gradient entry.)

Two more facts are what ir's graph passes ask of a kernel (ir.passes reads them through
the hooks registry sets on import, since ir sits below registry): whether its nodes have
a side effect, and how dce shrinks a node of it whose outputs are partly dead (a pruner).
And autodiff asks one: the differentiable form its nodes are emitted in when
differentiated (FORMS).
"""
from ir.errors import ArgumentError, KernelNotFoundError
from registry.versioned import VersionedTable, check_kernel_name

FAMILIES = frozenset({"elementwise", "reduction", "arg_reduction", "index_map", "along_axis",
                      "gather", "scatter", "contraction", "control_flow", "linalg"})


def _check_family(kernel, family_name):
    check_kernel_name(kernel, "declare_family")
    if family_name not in FAMILIES:
        raise ArgumentError(f"declare_family({kernel!r}, {family_name!r}): unknown family; "
                            f"known families: {', '.join(sorted(FAMILIES))}")


def _missing(what):
    return lambda kernel: KernelNotFoundError(f"kernel {kernel!r} is not declared {what}")


FAMILY = VersionedTable(_missing("in a family"), _check_family)
# kernels whose outputs carry no gradient, and kernels with a side effect (sets)
NOT_DIFFERENTIABLE = VersionedTable(_missing("not differentiable"))
EFFECTS = VersionedTable(_missing("to have effects"))


def _set_flag(table, kernel, on):
    if on:
        table.register(kernel, True)
    else:
        table.discard(kernel)


def declare_family(kernel, family_name, differentiable=True):
    """Declare (or redeclare) the family of `kernel`, and whether its outputs carry a
    gradient; family None removes the declaration."""
    if family_name is None:
        check_kernel_name(kernel, "declare_family")
        FAMILY.discard(kernel)
    else:
        FAMILY.register(kernel, family_name)
    _set_flag(NOT_DIFFERENTIABLE, kernel, not differentiable and family_name is not None)


def family(kernel):
    """The family declared for `kernel`, or None."""
    return FAMILY.entries.get(kernel)


def differentiable(kernel):
    """False if `kernel` is declared to pass no gradient (its outputs act as constants)."""
    return kernel not in NOT_DIFFERENTIABLE.entries


def declare_effects(kernel, effects=True):
    """Declare whether `kernel` has a side effect: its nodes are then never folded,
    reordered, deduplicated or removed as dead."""
    check_kernel_name(kernel, "declare_effects")
    _set_flag(EFFECTS, kernel, effects)


def has_effects(kernel):
    """True if `kernel` is declared to have a side effect."""
    return kernel in EFFECTS.entries


def _check_pruner(kernel, prune):
    check_kernel_name(kernel, "register_pruner")
    if not callable(prune):
        raise ArgumentError(f"register_pruner({kernel!r}): prune must be callable, got "
                            f"{type(prune).__name__}")


PRUNERS = VersionedTable(_missing("to have a pruner"), _check_pruner)


def register_pruner(kernel, prune):
    """Let dce shrink `kernel`'s nodes: `prune(node, used)` (one bool per output) returns
    an equivalent node with only the used outputs (the same Vars, in order) and without
    the inputs its regions then no longer read (a loop's dead ys and the work behind
    them go)."""
    PRUNERS.register(kernel, prune)


def _check_form(kernel, form):
    if not isinstance(kernel, str) or not callable(form):
        raise ArgumentError(f"register_differentiable_form({kernel!r}, {form!r}): takes a "
                            f"kernel name and a callable form(attrs) -> attrs")


# kernel -> form(attrs): the attrs of a node that computes the same outputs first, then
# residuals its gradient reads (a custom_call's fwd; a scan that also stacks its
# carries); autodiff emits a differentiated node in that form
FORMS = VersionedTable(lambda kernel: KernelNotFoundError(
    f"kernel {kernel!r} has no differentiable form"), _check_form)


def kernels_of(family_name):
    """Every kernel declared in `family_name`, sorted."""
    return sorted(k for k, f in list(FAMILY.entries.items()) if f == family_name)

