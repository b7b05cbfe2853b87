"""tracer.numpy's functions built from transforms, control flow and index updates:
vectorize and apply_along_axis (nested vmaps, as JAX's), gcd and lcm (a while_loop of
Euclid's steps when traced), put_along_axis and fill_diagonal (x.at[...].set, which
scatters). tracer.vmap and tracer.lax build on tracer.numpy, so these live above both
and are attached to tracer.numpy here (gcd and lcm with NumPy's ufunc keywords), as
tracer/methods.py attaches traced values' methods; tracer/__init__.py imports this."""
import functools
import re

import numpy as np

from ir.errors import ArgumentError, ArgumentValueError, ShapeError
from tracer import numpy as tnp
from tracer.core import Tracer
from tracer.lax import while_loop
from tracer.numpy._base import convert, dtype_of, normalize_axis, shape, value
from tracer.numpy.creation import asarray
from tracer.numpy.index_tricks import _int_index
from tracer.numpy.index_updates import Update
from tracer.numpy.indexing import take
from tracer.numpy.elementwise import abs, equal, multiply, not_equal, where
from tracer.numpy.number_funcs import _euclid_step, _integers
from tracer.numpy.reductions import any as any_
from tracer.numpy.rounding import floor_divide
from tracer.numpy.shape_ops import ravel, reshape
from tracer.numpy.ufunc_keywords import wrap_ufuncs
from tracer.vmap import vmap

_DIM = r"\w+"
_CORE = rf"\((?:{_DIM}(?:,{_DIM})*)?\)"
_SIGNATURE = re.compile(rf"^{_CORE}(?:,{_CORE})*->{_CORE}(?:,{_CORE})*$")


def _parse(signature):
    """'(m,n),(n)->(m)' -> ([('m', 'n'), ('n',)], [('m',)])."""
    signature = signature.replace(" ", "")
    if not _SIGNATURE.match(signature):
        raise ArgumentValueError(f"vectorize: not a valid gufunc signature: {signature!r}")
    ins, outs = signature.split("->")
    core = lambda part: [tuple(re.findall(_DIM, c)) for c in re.findall(_CORE, part)]
    return core(ins), core(outs)


def _sizes(args, core_dims):
    """(the broadcast shape of the arguments' loop dims, {core dim name: size})."""
    sizes, loops = {}, []
    for k, (x, dims) in enumerate(zip(args, core_dims)):
        if x.ndim < len(dims):
            raise ShapeError(f"vectorize: argument {k} has shape {x.shape}, fewer dims than "
                             f"its core dimensions {dims} in the signature")
        for name, size in zip(dims, x.shape[x.ndim - len(dims):]):
            if sizes.setdefault(name, size) != size:
                raise ShapeError(f"vectorize: inconsistent size for core dimension {name!r}: "
                                 f"{size} vs {sizes[name]}")
        loops.append(x.shape[:x.ndim - len(dims)])
    return np.broadcast_shapes(*loops), sizes


def _checked(fun, sizes, out_dims):
    """fun, with its results' core dimensions checked against the signature's."""
    if out_dims is None:
        return fun

    def checked(*args):
        out = fun(*args)
        outs = out if isinstance(out, tuple) else (out,)
        if len(outs) != len(out_dims):
            raise ShapeError(f"vectorize: the function returned {len(outs)} outputs, the "
                             f"signature has {len(out_dims)}")
        for k, (o, dims) in enumerate(zip(outs, out_dims)):
            shape = tnp.shape(o)
            if len(shape) != len(dims) or any(sizes.setdefault(d, s) != s
                                              for d, s in zip(dims, shape)):
                raise ShapeError(f"vectorize: output {k} has shape {shape}, not the core "
                                 f"dimensions {dims} of the signature")
        return out
    return checked


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """`pyfunc` mapped over the leading (loop) dimensions of its arguments, broadcast
    together; `excluded` positions or keyword names are passed through as they are."""
    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        fixed_kw = {k: v for k, v in kwargs.items() if k in excluded}
        mapped_kw = [k for k in kwargs if k not in excluded]
        fixed = {i: a for i, a in enumerate(args) if i in excluded or a is None}
        mapped = [tnp.asarray(a) for i, a in enumerate(args) if i not in fixed]
        mapped += [tnp.asarray(kwargs[k]) for k in mapped_kw]
        n = len(mapped) - len(mapped_kw)

        def call(*xs):
            full, it = [], iter(xs[:n])
            for i in range(len(args)):
                full.append(fixed[i] if i in fixed else next(it))
            return pyfunc(*full, **fixed_kw, **dict(zip(mapped_kw, xs[n:])))
        if signature is None:
            in_dims, out_dims = [()] * len(mapped), None
        else:
            in_dims, out_dims = _parse(signature)
            if len(in_dims) != len(mapped):
                raise ShapeError(f"vectorize: the signature {signature!r} has {len(in_dims)} "
                                 f"inputs, the call {len(mapped)} mapped arguments")
        loop, sizes = _sizes(mapped, in_dims)
        fun = _checked(call, sizes, out_dims)
        squeezed, shapes = [], []
        for x, dims in zip(mapped, in_dims):
            outer = x.shape[:x.ndim - len(dims)]
            squeezed.append(tnp.squeeze(x, tuple(i for i, s in enumerate(outer) if s == 1)))
            shapes.append(((1,) * (len(loop) - len(outer)) + outer)[::-1])
        expand = []
        for back, column in enumerate(zip(*shapes)):   # innermost loop dim first
            axes = tuple(None if s == 1 else 0 for s in column)
            if all(a is None for a in axes):
                expand.append(len(loop) - 1 - back)
            else:
                fun = vmap(fun, in_axes=axes)
        out = fun(*squeezed)
        if not expand:
            return out
        grow = lambda r: tnp.expand_dims(r, tuple(sorted(expand)))
        return tuple(map(grow, out)) if isinstance(out, tuple) else grow(out)
    return wrapped


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """func1d applied to the 1-d slices of arr along `axis`, its output's axes taking
    that axis' place, as numpy.apply_along_axis (by nested vmaps, as JAX's: func1d must
    trace)."""
    a = value(arr, "apply_along_axis")
    nd = len(shape(a))
    ax = normalize_axis("apply_along_axis", axis, nd)

    def func(x):
        return func1d(x, *args, **kwargs)
    for i in range(1, nd - ax):
        func = vmap(func, in_axes=i, out_axes=-1)
    for _ in range(ax):
        func = vmap(func, in_axes=0, out_axes=0)
    return asarray(func(a))


def gcd(x1, x2, /):
    """The greatest common divisor of |x1| and |x2| (gcd(0, 0) is 0), as numpy.gcd."""
    a, b = _integers("gcd", x1, x2)
    a, b = abs(a), abs(b)
    if isinstance(a, Tracer) or isinstance(b, Tracer):
        return while_loop(lambda ab: any_(not_equal(ab[1], 0)),
                          lambda ab: _euclid_step(*ab), (a, b))[0]
    while np.any(b != 0):
        a, b = _euclid_step(a, b)
    return a


def lcm(x1, x2, /):
    """The least common multiple of |x1| and |x2| (0 when either is 0), as numpy.lcm."""
    a, b = _integers("lcm", x1, x2)
    g = gcd(a, b)
    zero = equal(g, 0)
    a, b = abs(a), abs(b)       # |a| / g * |b|, wrapping on overflow as NumPy's
    return multiply(floor_divide(a, where(zero, np.ones((), dtype_of(g)), g)), b)


def _inplace(op, inplace):
    if inplace:
        raise ArgumentError(f"{op}: arrays here are immutable, so {op} cannot write in "
                            f"place; pass inplace=False and use the returned array (as "
                            f"jax.numpy.{op})")


def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    """arr with `values` written at `indices` along `axis` (other axes broadcast), as
    numpy.put_along_axis but returning the new array (inplace=False is required)."""
    _inplace("put_along_axis", inplace)
    a = value(arr, "put_along_axis")
    if axis is None:
        a, axis, out_shape = ravel(a), 0, shape(a)
    else:
        out_shape = None
    idx = _int_index("put_along_axis", indices)
    nd = len(shape(a))
    if len(shape(idx)) != nd:
        raise ShapeError(f"put_along_axis: indices (shape {shape(idx)}) and arr (shape "
                         f"{shape(a)}) must have the same number of dimensions")
    ax = normalize_axis("put_along_axis", axis, nd)
    key = tuple(idx if i == ax else np.arange(d).reshape((-1,) + (1,) * (nd - i - 1))
                for i, d in enumerate(shape(a)))
    out = Update(a, key).set(values, mode=mode)
    return out if out_shape is None else reshape(out, out_shape)


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """a with its main diagonal set to `val` (repeated cyclically), as numpy.fill_diagonal
    but returning the new array (inplace=False is required); a tall 2-d matrix wraps
    after N columns when `wrap`."""
    _inplace("fill_diagonal", inplace)
    a = value(a, "fill_diagonal")
    shp = shape(a)
    if len(shp) < 2:
        raise ShapeError(f"fill_diagonal: array must be at least 2-d, got shape {shp}")
    if len(shp) == 2:
        step, end = shp[1] + 1, None if wrap else shp[1] * shp[1]
    else:
        if len(set(shp)) != 1:
            raise ShapeError(f"fill_diagonal: all dimensions of input must be of equal "
                             f"length, got shape {shp}")
        step, end = 1 + int(np.cumprod(shp[:-1]).sum()), None
    pos = np.arange(int(np.prod(shp)))[:end:step]
    v = ravel(convert(value(val, "fill_diagonal"), dtype_of(a), "fill_diagonal"))
    if not shape(v)[0] or not pos.size:
        return asarray(a) if pos.size else a
    v = take(v, np.arange(pos.size) % shape(v)[0])
    return reshape(Update(ravel(a), pos).set(v), shp)


_NAMES = {"vectorize": vectorize, "apply_along_axis": apply_along_axis, "gcd": gcd,
          "lcm": lcm, "put_along_axis": put_along_axis, "fill_diagonal": fill_diagonal}
wrap_ufuncs(_NAMES)             # gcd and lcm are NumPy ufuncs: their keywords and .outer
for _name, _fun in _NAMES.items():
    setattr(tnp, _name, _fun)
