"""vmap's checks of its axes, in JAX's words (JAX's own api_test matches them): in_axes
and out_axes are ints, None or pytree prefixes of the arguments and results, each
mapped axis exists, and all mapped axes have one size. Each message then names the
vmapped function and what to change.
"""
import collections
import inspect

from ir.errors import ArgumentError, ArgumentValueError, ShapeError
from tracer.pytree import flatten, leaf_paths

_POSITIONAL = ("vmap in_axes must be an int, None, or a tuple of entries corresponding to "
               "the positional arguments passed to the function, but got ")
_KEYWORD = (" (keyword arguments are mapped over axis 0: pass {} positionally to choose "
            "its axis)")


def check_spec(in_axes, out_axes, where):
    """in_axes (a list stands for its tuple, as in JAX), checked when vmap is called, as
    JAX checks it: a TypeError unless it is an int, None or a tuple, and unless every
    leaf of in_axes and out_axes is an int or None."""
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    if not (in_axes is None or type(in_axes) in (int, tuple)):
        raise ArgumentError(f"{_POSITIONAL}{in_axes}. In {where}, in_axes has one entry per "
                            f"positional argument: for the axes inside one argument, "
                            f"write in_axes=({in_axes!r},)")
    for what, spec in (("in_axes", in_axes), ("out_axes", out_axes)):
        bad = [a for a in flatten(spec)[0] if type(a) is not int]
        if bad:
            raise ArgumentError(f"vmap {what} must be an int, None, or (nested) container "
                                f"with those types as leaves, but got {spec}. In {where}, "
                                f"{bad[0]!r} is no axis: give an int, or None to leave a "
                                f"value unmapped")
    return in_axes


def check_positional(in_axes, args, where):
    """A tuple in_axes has one entry per positional argument (ValueError, as JAX's)."""
    if isinstance(in_axes, tuple) and len(in_axes) != len(args):
        raise ArgumentValueError(f"{_POSITIONAL}len(in_axes)={len(in_axes)}, "
                                 f"len(args)={len(args)}. In {where}, in_axes {in_axes!r} "
                                 f"needs one entry per positional argument (keyword "
                                 f"arguments are mapped over axis 0)")


def _mismatch(prefix, tree):
    """Why the pytree prefix `prefix` does not fit `tree`, or None if it does."""
    kind = type(prefix).__name__
    if isinstance(prefix, (tuple, list)) and isinstance(tree, (tuple, list)):
        if len(prefix) != len(tree):
            return f"a {kind} of {len(prefix)} entries for a value of {len(tree)}"
    elif isinstance(prefix, dict) and isinstance(tree, dict):
        if sorted(prefix) != sorted(tree):
            return f"keys {sorted(prefix)} for a dict with keys {sorted(tree)}"
    else:
        got = type(tree).__name__ if isinstance(tree, (tuple, list, dict)) else "leaf"
        return f"a {kind} and a {got} are different types"
    return None


def axes_per_leaf(prefix, tree, what, where):
    """One axis (int or None) per leaf of `tree`, from the pytree prefix `prefix`, else
    JAX's ValueError saying where the structures part."""
    if prefix is None or type(prefix) is int:
        return [prefix] * len(flatten(tree)[0])
    why = _mismatch(prefix, tree)
    if why is not None:
        raise ArgumentValueError(
            f"vmap {what} specification must be a tree prefix of the corresponding value; "
            f"in {where}, {what} entry {prefix!r} does not fit its value. Mismatch details: "
            f"{why}. Give an int or None for a whole value, or a prefix of its structure")
    pairs = ([(prefix[k], tree[k]) for k in sorted(tree)] if isinstance(tree, dict) else
             zip(prefix, tree))
    return [a for p, t in pairs for a in axes_per_leaf(p, t, what, where)]


class LeafNames:
    """JAX's name of each argument leaf, in flatten([*args, kwargs]) order: "argument x",
    "argument b[0]", "args[2]" past fun's parameters, "kwargs['y']". Worked out when an
    error first asks (inspect.signature alone costs more than a small op)."""

    def __init__(self, fun, args, kwargs):
        self._call, self._names = (fun, args, kwargs), None

    def __getitem__(self, i):
        if self._names is None:
            fun, args, kwargs = self._call
            try:
                sig = inspect.signature(fun)
                params = list(sig.bind(*args, **kwargs).signature.parameters)
            except (TypeError, ValueError):
                params = []
            self._names = [f"argument {params[i]}{p}" if i < len(params) else f"args[{i}]{p}"
                           for i, a in enumerate(args) for p in leaf_paths(flatten(a)[1])]
            self._names += [f"kwargs[{k!r}]{p}" for k in sorted(kwargs)
                            for p in leaf_paths(flatten(kwargs[k])[1])]
        return self._names[i]


def normalize(axis, ndim, what, where, shape=None):
    """axis in [0, ndim), or None; out of range, an error in JAX's words (of an
    argument's `shape`, or of an output) naming `what()` (a function: see LeafNames)."""
    if axis is not None and not -ndim <= axis < ndim:
        what = what()
        valid = f"valid: {-ndim} to {ndim - 1}" if ndim else "a 0-d value has no axis to map"
        least = axis + 1 if axis >= 0 else -axis
        jax_words = (f"vmap was requested to map its argument along axis {axis}, which "
                     f"implies that its rank should be at least {least}, but is only "
                     f"{ndim} (its shape is {shape})" if shape is not None else
                     f"axis {axis} is out of bounds for an output of dimension {ndim}")
        hint = _KEYWORD.format("it") if what.startswith("in_axes for kwargs") else ""
        raise ShapeError(f"{where}: {what}: {jax_words} ({valid}; use None to leave it "
                         f"unmapped){hint}")
    return None if axis is None else axis % ndim


def _type(aval):
    return f"{aval.dtype.name}[{','.join(map(str, aval.shape))}]"


def mapped_size(mapped, axis_size, where, names):
    """The one size of the mapped axes (`mapped`: (leaf number, aval, axis as given, size)
    per mapped leaf) and `axis_size`, else JAX's ValueError listing the sizes by count
    (`names`: the leaves' LeafNames)."""
    sizes = {m[3] for m in mapped} | ({axis_size} if axis_size is not None else set())
    if len(sizes) == 1:
        return sizes.pop()
    if not sizes:
        raise ArgumentValueError(f"vmap must have at least one non-None value in in_axes or "
                                 f"axis_size must be specified: no argument of {where} is "
                                 f"mapped; map one, or pass axis_size")
    lines = [f"  * the `axis_size` argument was {axis_size};"] if axis_size is not None else []
    counts = collections.Counter(m[3] for m in mapped).most_common()
    for k, (size, count) in enumerate(counts):
        i, aval, axis, _ = next(m for m in mapped if m[3] == size)
        of = f"axis {axis} of {names[i]} of type {_type(aval)}"
        lines.append(f"  * one axis had size {size}: {of};" if count == 1 else
                     f"  * {'most' if k == 0 else 'some'} axes ({count} of them) had size "
                     f"{size}, e.g. {of};")
    hint = _KEYWORD.format("one") if any(names[m[0]].startswith("kwargs") for m in mapped) \
        else ""
    raise ShapeError("vmap got inconsistent sizes for array axes to be mapped:\n" +
                     "\n".join(lines)[:-1] + f"\nAll mapped axes of {where} must have one "
                     f"size: change the arguments' shapes or in_axes (None leaves an "
                     f"argument unmapped){hint}")
