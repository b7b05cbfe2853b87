"""`declare_kernel` and `define_kernel`: a kernel declared in one call, and `describe`:
what is declared for one.

declare_kernel writes a kernel's backend-independent facts (shape rule, family, gradient,
batching rule, differentiability, effects) into their tables; the built-in kernels are
declared with it (tracer.kernels), their backend impls registered by lowering.
define_kernel declares the same facts through it and adds the backend parts (NumPy
kernel, llvm impl, ONNX exporter). Every part lands in its table (registry.tables,
batching, families, exporters), so the `register_*` calls still override one part
afterwards. A part left out is derived from the family where the family allows it:

* batching: an "elementwise", "along_axis" or "linalg" kernel is batched by vmap's
  shared rule for its family; any other kernel with no rule is batched by a loop, and
  declaring it warns.
* llvm: a plain callable is a scalar body (`body(ctx, *xs, **attrs)`), which fuses into
  its neighbours' loop; any other form is an llvm impl object (lowering.llvm.protocol).
* onnx: for an elementwise kernel a string names the ONNX operator applied to the inputs
  (`onnx="Softplus"`, i.e. `registry.exporters.OnnxOperator("Softplus")`, which also
  takes the operator's attributes); otherwise an exporter `fn(g, inputs, attrs)` (see
  lowering.onnx). With none, the kernel does not export.

Redeclaring a kernel declares it afresh: a part the new call leaves out is removed.
"""
import inspect
import warnings

from ir.errors import ArgumentError, KernelNotFoundError
from registry import families, tables
from registry.batching import BATCHING_RULES
from registry.exporters import EXPORTERS, OnnxOperator
from registry.versioned import check_kernel_name, did_you_mean

# the families vmap batches with one shared rule (tracer.vmap.FAMILY_RULES implements them)
SHARED_BATCHING = frozenset({"elementwise", "along_axis", "linalg"})


def _callable_or_none(op, name, what, value):
    if value is not None and not callable(value):
        raise ArgumentError(f"{op}({name!r}): {what} must be callable or None, got "
                            f"{type(value).__name__}")


def _checked_exporter(name, family, onnx):
    """The ONNX exporter for `onnx` (a callable, or an operator name for an elementwise
    kernel), or None."""
    if isinstance(onnx, str):
        if family != "elementwise":
            raise ArgumentError(
                f"define_kernel({name!r}): onnx={onnx!r} names an ONNX operator, which "
                f"only an elementwise kernel can be exported as (family is {family!r}); "
                f"pass an exporter fn(g, inputs, attrs) instead")
        return OnnxOperator(onnx)
    _callable_or_none("define_kernel", name, "onnx", onnx)
    return onnx


def _set(table, key, part):
    if part is None:
        table.discard(*key)
    else:
        table.register(*key, part)


def _declare(op, name, shape, family, gradient, batching, differentiable, effects,
             form=None, pruner=None):
    """Check every fact, then write them all: a bad part leaves the tables untouched."""
    check_kernel_name(name, op)
    if not callable(shape):
        raise ArgumentError(f"{op}({name!r}): shape must be callable, got "
                            f"{type(shape).__name__}")
    for what, value in (("gradient", gradient), ("batching", batching), ("form", form),
                        ("pruner", pruner)):
        _callable_or_none(op, name, what, value)
    if family is not None and family not in families.FAMILIES:
        raise ArgumentError(f"{op}({name!r}): unknown family {family!r}; known "
                            f"families: {', '.join(sorted(families.FAMILIES))}")
    if gradient is not None and not differentiable:
        raise ArgumentError(f"{op}({name!r}): a gradient was given with "
                            f"differentiable=False; pass one or the other")
    tables.SHAPE_RULES.register(name, shape)
    for table, part in ((tables.GRADIENTS, gradient), (BATCHING_RULES, batching),
                        (families.FAMILY, family),
                        (families.NOT_DIFFERENTIABLE, not differentiable or None),
                        (families.EFFECTS, effects or None), (families.FORMS, form),
                        (families.PRUNERS, pruner)):
        _set(table, (name,), part)
    if batching is None and family not in SHARED_BATCHING and _has_operands(shape):
        warnings.warn(f"{op}({name!r}): no batching rule and no family batched by a "
                      f"shared rule ({', '.join(sorted(SHARED_BATCHING))}), so vmap batches "
                      f"it by a loop over the batch; pass family='elementwise' if it is "
                      f"elementwise, or batching=rule", stacklevel=3)


def _has_operands(shape):
    """False for a shape rule taking no positional operand (axis_index): vmap emits such a
    node as it is, so it needs no batching rule."""
    try:
        params = inspect.signature(shape).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.kind is not p.KEYWORD_ONLY and p.kind is not p.VAR_KEYWORD for p in params)


def declare_kernel(name, *, shape, family=None, gradient=None, batching=None,
                   differentiable=True, effects=False, form=None, pruner=None):
    """Declare kernel `name`'s backend-independent facts (see the module doc); `form` is
    its differentiable form (autodiff emits a differentiated node with `form(attrs)`, which
    also outputs what the gradient reads), `pruner` how dce drops its dead outputs
    (registry.register_pruner)."""
    _declare("declare_kernel", name, shape, family, gradient, batching, differentiable,
             effects, form, pruner)


def define_kernel(name, *, shape, numpy, family=None, gradient=None, batching=None,
                  llvm=None, onnx=None, differentiable=True, effects=False):
    """Declare kernel `name` in one call: its facts (declare_kernel's) and its backend
    impls (see the module doc for what is derived)."""
    check_kernel_name(name, "define_kernel")
    if not callable(numpy):
        raise ArgumentError(f"define_kernel({name!r}): numpy must be callable, got "
                            f"{type(numpy).__name__}")
    if llvm is not None and not callable(llvm) and not hasattr(llvm, "emit"):
        raise ArgumentError(f"define_kernel({name!r}): llvm must be a scalar body (callable) "
                            f"or an llvm impl object, got {type(llvm).__name__}")
    exporter = _checked_exporter(name, family, onnx)
    _declare("define_kernel", name, shape, family, gradient, batching, differentiable,
             effects)
    tables.KERNELS.register(name, "numpy", numpy)
    _set(tables.KERNELS, (name, "llvm"), llvm)
    _set(EXPORTERS, (name, "onnx"), exporter)


def forget_kernel(name):
    """Remove everything declared for kernel `name`, in every table and for every backend,
    so a later declaration of the name starts clean (tests, a reloaded user module); True
    if anything was declared."""
    check_kernel_name(name, "forget_kernel")
    removed = [table.discard(name) for table in (
        tables.SHAPE_RULES, tables.GRADIENTS, BATCHING_RULES, families.FAMILY,
        families.NOT_DIFFERENTIABLE, families.EFFECTS, families.FORMS, families.PRUNERS)]
    for table in (tables.KERNELS, EXPORTERS):
        removed += [table.discard(*key) for key in list(table.entries) if key[0] == name]
    return any(removed)


class KernelDescription:
    """Everything declared for one kernel; `str()` lists it, one part a line."""

    def __init__(self, name):
        self.name = name
        self.shape_rule = tables.SHAPE_RULES.entries.get(name)
        self.impls = {b: impl for (k, b), impl in list(tables.KERNELS.entries.items())
                      if k == name}
        self.family = families.family(name)
        self.gradient = tables.GRADIENTS.entries.get(name)
        self.batching_rule = BATCHING_RULES.entries.get(name)
        self.exporters = {f: fn for (k, f), fn in list(EXPORTERS.entries.items()) if k == name}
        self.form = families.FORMS.entries.get(name)
        self.pruner = families.PRUNERS.entries.get(name)
        self.differentiable = families.differentiable(name)
        self.effects = families.has_effects(name)
        self.version = tables.version(name)

    def _batching(self):
        if self.batching_rule is not None:
            return _named(self.batching_rule)
        if self.family in SHARED_BATCHING:
            return f"the shared {self.family} rule"
        if self.shape_rule is not None and not _has_operands(self.shape_rule):
            return "none needed (no operands: vmap emits the node as it is)"
        return "none (vmap batches it by a loop)"

    def _gradient(self):
        if not self.differentiable:
            return "none (not differentiable: its outputs carry no gradient)"
        if self.gradient is None:
            return "none (differentiating through it raises)"
        return _named(self.gradient)

    def __str__(self):
        rows = [("shape rule", _named(self.shape_rule) if self.shape_rule else "none"),
                *((f"impl [{b}]", _named(i)) for b, i in sorted(self.impls.items())),
                ("family", self.family or "none"), ("gradient", self._gradient()),
                ("batching", self._batching()),
                *((part, _named(fn)) for part, fn in (("diff. form", self.form),
                                                      ("pruner", self.pruner)) if fn),
                *((f"exporter [{f}]", _named(e)) for f, e in sorted(self.exporters.items())),
                ("effects", "yes (never folded, reordered or removed)" if self.effects
                 else "no"), ("version", str(self.version))]
        return "\n".join([f"kernel {self.name!r}"] + [f"  {k:<16}{v}" for k, v in rows])

    __repr__ = __str__


def _named(fn):
    """A short readable name of a registered callable or impl object."""
    if not hasattr(fn, "__qualname__"):
        return repr(fn)
    code = getattr(fn, "__code__", None)
    where = f" at {code.co_filename}:{code.co_firstlineno}" if code and \
        fn.__name__ == "<lambda>" else ""
    return f"{getattr(fn, '__module__', '?')}.{fn.__qualname__}{where}"


def describe(name):
    """Everything declared for kernel `name` (printable); an unknown name is an error."""
    d = KernelDescription(name)
    if d.shape_rule is None and not d.impls:
        raise KernelNotFoundError(
            f"describe({name!r}): no kernel of that name is declared (it has no shape rule "
            f"and no impl).{did_you_mean(name, tables.SHAPE_RULES.entries)}")
    return d
