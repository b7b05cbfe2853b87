"""Spec rows (see spec.py) for the reductions, scans, shapes, assembly, sorting and
creation names. Rows returning several arrays join them into one (the table's generic
tests compare one output); data-dependent shapes are in
tracer/test_numpy_reductions_and_shapes.py."""
import numpy as np

from spec import (ALL, B, F64, FLOATS, I32, NUMERIC, REDUCE_SHAPES, SOME,
                  UNARY_SHAPES, OpSpec, _call, _same)

NAN_SHAPES = [((3,),), ((2, 3),), ((2, 3, 4),), ((1,),)]
MATS = [((3, 3),), ((2, 4),), ((2, 3, 4),), ((1, 1),)]
VECS = [((1,),), ((3,),), ((5,),)]


def _nan(m, x):
    """x with NaN where x > 1 (a few per case; all-NaN slices stay rare)."""
    return m.where(x > 1, np.nan, x)


def _nan_row(name, args="", grad=True, shapes=NAN_SHAPES):
    f = eval(f"lambda m, x: m.{name}(_nan(m, x){', ' + args if args else ''})",  # noqa: S307
             {"_nan": _nan, "np": np})
    return OpSpec(f"{name}({args})", f, f, shapes, FLOATS, grad=grad)


def _like_input(name, args, dtypes):
    """A quantile row with an array q: a float input keeps its dtype, as in JAX (NumPy 2
    promotes it with q's float64)."""
    f = eval(f"lambda m, x: m.{name}(x, {args})", {"np": np})  # noqa: S307

    def ref(m, x):
        out = f(m, x)
        return out.astype(x.dtype) if x.dtype.kind == "f" else out
    return OpSpec(f"{name}({args})", f, ref, REDUCE_SHAPES, dtypes)


ROWS = [
    # ---- reductions and scans --------------------------------------------------------
    _call("average", shapes=REDUCE_SHAPES, dtypes=NUMERIC),
    _call("average", "axis=-1, keepdims=True", shapes=REDUCE_SHAPES, dtypes=NUMERIC),
    _same("average_weights", lambda m, x: m.average(x, axis=-1, weights=m.arange(
        1, x.shape[-1] + 1)), REDUCE_SHAPES, NUMERIC),
    _call("var", shapes=REDUCE_SHAPES, dtypes=NUMERIC),
    _call("var", "axis=0, ddof=1, keepdims=True", shapes=REDUCE_SHAPES[1:3], dtypes=NUMERIC),
    _call("var", "0, None, None, 1, True", row="var_positional", shapes=REDUCE_SHAPES[1:3],
          dtypes=FLOATS),
    _call("std", "axis=-1", shapes=REDUCE_SHAPES, dtypes=NUMERIC),
    _call("std", "axis=(0, -1), ddof=1", shapes=REDUCE_SHAPES[1:3], dtypes=FLOATS),
    _call("ptp", shapes=REDUCE_SHAPES, dtypes=NUMERIC, domain="nonzero"),
    _call("ptp", "axis=0, keepdims=True", shapes=REDUCE_SHAPES, dtypes=NUMERIC),
    *[_call(r, a, shapes=REDUCE_SHAPES + [((0,),), ((2, 0),)], dtypes=ALL, grad=False)
      for r in ("all", "any", "count_nonzero") for a in ("", "axis=-1", "axis=0, keepdims=True")],
    *[_call(r, a, shapes=s, dtypes=ALL)
      for r in ("cumsum", "cumprod") for a, s in [
          ("", UNARY_SHAPES), ("axis=-1", [((1,),), ((3,),), ((2, 3),), ((2, 0),)]),
          ("axis=0", [((4,),), ((2, 3),), ((0, 3),), ((3, 2, 2),)])]],
    _call("cumsum", "axis=1, dtype=np.float64", shapes=[((2, 3),)], dtypes=(I32, B)),
    _same("cumprod_zeros", lambda m, x: m.cumprod(m.where(m.abs(x) < 0.5, 0.0, x), axis=-1),
          [((5,),), ((2, 6),)], FLOATS),
    _nan_row("nansum"), _nan_row("nansum", "axis=-1, keepdims=True"),
    _nan_row("nanprod", "axis=0"), _nan_row("nanmean"), _nan_row("nanmean", "axis=-1"),
    _nan_row("nanvar", "axis=0"), _nan_row("nanstd", "axis=-1, ddof=1", grad=False),
    _nan_row("nanmax", "axis=-1"), _nan_row("nanmin", "axis=0, keepdims=True"),
    _nan_row("nanargmax", "axis=-1", grad=False, shapes=[((3,),), ((2, 3),)]),
    _nan_row("nanargmin", grad=False, shapes=[((3,),), ((2, 3),)]),
    *[_call(r, "axis=-1", shapes=[((3,),), ((2, 4),)], dtypes=(I32,), grad=False, row=f"{r}_int")
      for r in ("nansum", "nanmean", "nanmax", "nanvar")],
    _call("median", shapes=REDUCE_SHAPES, dtypes=NUMERIC),
    _call("median", "axis=-1, keepdims=True", shapes=REDUCE_SHAPES, dtypes=NUMERIC),
    _call("median", "axis=(0, -1)", shapes=REDUCE_SHAPES[1:3], dtypes=FLOATS),
    _call("quantile", "0.3", shapes=REDUCE_SHAPES, dtypes=NUMERIC),
    _like_input("quantile", "np.array([0.0, 0.5, 0.9, 1.0]), axis=0, keepdims=True", FLOATS),
    _like_input("percentile", "[25, 75], axis=-1", NUMERIC),
    _call("percentile", "50.0", shapes=REDUCE_SHAPES, dtypes=FLOATS),
    _nan_row("median", "axis=-1", grad=False),
    _nan_row("nanmedian"), _nan_row("nanmedian", "axis=-1", grad=False),
    _call("trace", shapes=MATS, dtypes=NUMERIC),
    _call("trace", "offset=1, axis1=-1, axis2=0", shapes=MATS, dtypes=(F64, I32)),
    _call("diff", shapes=[((3,),), ((2, 4),), ((1,),)], dtypes=ALL),
    _call("diff", "n=2, axis=0", shapes=[((4,),), ((3, 2),)], dtypes=NUMERIC),
    _call("diff", "prepend=0, append=np.ones((2, 1))", shapes=[((2, 3),)], dtypes=NUMERIC),
    _call("ediff1d", shapes=[((3,),), ((2, 3),)], dtypes=NUMERIC),
    _call("ediff1d", "to_end=np.array([1, 2]), to_begin=-1", shapes=[((3,),)], dtypes=NUMERIC),
    _call("gradient", shapes=[((3,),), ((5,),)], dtypes=NUMERIC),
    _same("gradient_axes", lambda m, x: m.stack(m.gradient(x, 2.0, 0.5, edge_order=2)),
          [((3, 4),), ((5, 3),)], FLOATS),
    _call("gradient", "0.5, axis=-1", shapes=[((2, 3),), ((3, 2, 4),)], dtypes=FLOATS),
    # ---- shapes --------------------------------------------------------------------------
    _call("swapaxes", "axis1=0, axis2=-1", shapes=[((2, 3),), ((2, 3, 4),)], dtypes=SOME),
    _call("moveaxis", "0, -1", shapes=[((3,),), ((2, 3, 4),)], dtypes=SOME),
    _call("moveaxis", "(0, 1), (-1, 0)", shapes=[((2, 3, 4),), ((1, 0, 2),)], dtypes=SOME),
    _call("rollaxis", "2", shapes=[((2, 3, 4),)], dtypes=SOME),
    _call("rollaxis", "-1, 1", shapes=[((2, 3, 4),), ((2, 0, 1, 3),)], dtypes=SOME),
    _same("broadcast_arrays", lambda m, x, y: m.stack(m.broadcast_arrays(x, y)),
          [((), ()), ((2, 3), (3,)), ((2, 1), (1, 3)), ((0, 3), (1, 3))], SOME),
    _same("broadcast_shapes", lambda m, x, y: m.zeros(m.broadcast_shapes(x.shape, y.shape,
                                                                         (1,))) + x,
          [((3,), (2, 3)), ((2, 1), (1, 3))], (F64,), grad=False),
    *[_same(f"atleast_{k}d", (lambda k: lambda m, x: getattr(m, f"atleast_{k}d")(x) * 1)(k),
            UNARY_SHAPES + [((2, 3, 4),)], SOME) for k in (1, 2, 3)],
    _same("atleast_2d_many", lambda m, x: m.concatenate(m.atleast_2d(x, x), axis=-1),
          UNARY_SHAPES[:4], SOME),
    # ---- assembly and splitting ------------------------------------------------------------
    *[_same(n, (lambda n: lambda m, x, y: getattr(m, n)([x, y, x]))(n), s, SOME)
      for n, s in [("vstack", [((3,), (3,)), ((2, 3), (1, 3)), ((), ())]),
                   ("hstack", [((3,), (2,)), ((2, 3), (2, 1)), ((), ())]),
                   ("dstack", [((3,), (3,)), ((2, 3), (2, 3)), ((2, 3, 1), (2, 3, 2))]),
                   ("column_stack", [((3,), (3,)), ((3, 2), (3,))])]],
    _same("vstack_dtype", lambda m, x, y: m.vstack([x, y], dtype=np.float32),
          [((3,), (3,))], (I32, F64)),
    _same("block", lambda m, x, y: m.block([[x, y], [y, x]]),
          [((2, 2), (2, 2)), ((3,), (2,)), ((1, 2), (1, 2))], SOME),
    _same("block_nested", lambda m, x, y: m.block([[[x]], [[y]]]), [((2,), (2,))], SOME),
    *[_same(f"{n}{a}", eval(f"lambda m, x: m.concatenate(m.{n}(x, {a}), axis={ax})"),  # noqa
            s, SOME) for n, a, ax, s in [
          ("split", "2", -1, [((4,),), ((2, 4),)]), ("split", "[1, 3]", 0, [((4,),), ((5, 3),)]),
          ("array_split", "3", 0, [((4,),), ((7, 2),)]),
          ("array_split", "2, axis=-1", -1, [((3, 5),)])]],
    *[_same(n, eval(f"lambda m, x: m.stack(m.{n}(x, 2))"), s, SOME)  # noqa: S307
      for n, s in [("hsplit", [((4,),), ((2, 4),)]), ("vsplit", [((4, 3),)]),
                   ("dsplit", [((1, 2, 4),)])]],
    _call("tile", "(2, 1, 3)", shapes=[((),), ((3,),), ((2, 3),), ((0, 2),)], dtypes=SOME),
    _call("tile", "2", shapes=[((3,),), ((2, 3),)], dtypes=SOME),
    _call("repeat", "2", shapes=[((),), ((3,),), ((2, 3),)], dtypes=SOME),
    _call("repeat", "3, axis=-1", shapes=[((2, 3),), ((0, 2),)], dtypes=SOME),
    _call("repeat", "[1, 0, 2], axis=0", shapes=[((3,),), ((3, 2),)], dtypes=SOME),
    _call("flip", shapes=UNARY_SHAPES, dtypes=SOME),
    _call("flip", "axis=(0, -1)", shapes=[((2, 3),), ((2, 3, 4),)], dtypes=SOME),
    _call("fliplr", shapes=[((2, 3),), ((2, 3, 4),)], dtypes=SOME),
    _call("flipud", shapes=[((3,),), ((2, 3),)], dtypes=SOME),
    *[_call("rot90", f"k={k}", shapes=[((2, 3),), ((2, 3, 4),)], dtypes=SOME)
      for k in (1, 2, 3, -1, 4)],
    _call("rot90", "1, (2, 0)", shapes=[((2, 3, 4),)], dtypes=SOME),
    _call("roll", "1", shapes=UNARY_SHAPES[1:], dtypes=SOME),
    _call("roll", "-4, axis=-1", shapes=[((3,),), ((2, 3),), ((2, 0),)], dtypes=SOME),
    _call("roll", "(1, 2), axis=(0, 1)", shapes=[((2, 3),), ((3, 4, 2),)], dtypes=SOME),
    _call("pad", "1", shapes=[((3,),), ((2, 3),), ((0, 2),)], dtypes=SOME),
    _call("pad", "((1, 2), (0, 3)), constant_values=((7, 8), (9, 10))",
          shapes=[((2, 3),), ((1, 1),)], dtypes=NUMERIC),
    *[_call("pad", f"((2, 1),), mode={mode!r}", shapes=[((3,),), ((4, 3),)], dtypes=SOME)
      for mode in ("edge", "reflect", "symmetric", "wrap")],
    _call("take_along_axis", "np.array([[0, 2], [1, -1]]), axis=1", shapes=[((2, 3),)],
          dtypes=SOME),
    _call("take_along_axis", "np.array([[1], [0]]), axis=0", shapes=[((2, 3),), ((2, 1),)],
          dtypes=SOME),
    _call("take_along_axis", "np.array([2, 0, 1, 1]), axis=None", shapes=[((3,),)],
          dtypes=SOME),
    _call("diagonal", shapes=MATS, dtypes=SOME),
    _call("diagonal", "1, -1, 0", shapes=MATS, dtypes=SOME),
    *[_call("diag", f"{k}", shapes=[((3,),), ((1,),), ((3, 4),), ((0,),)], dtypes=SOME)
      for k in (0, 2, -1)],
    _call("diagflat", "-1", shapes=[((2, 2),), ((3,),)], dtypes=SOME),
    *[_call(n, a, shapes=MATS + [((0, 2),)], dtypes=SOME) for n in ("tril", "triu")
      for a in ("", "k=1", "-2")],
    _same("tri_indices", lambda m, x: m.tri(3, 4, 1, dtype=x.dtype) * x + m.concatenate(
        m.tril_indices(3, 1, 4) + m.triu_indices(3, -1, 4)).sum()
        + m.stack(m.diag_indices(3, 2)).sum() + m.indices((2, 3)).sum(), [((3, 4),)],
        (F64, I32), grad=False),
    _same("indices_from", lambda m, x: x[m.tril_indices_from(x, 1)].sum() * x[
        m.triu_indices_from(x, -1)] + x[:, :3][m.diag_indices_from(x[:, :3])].sum(),
        [((3, 4),), ((3, 3),)], (F64, I32)),
    _same("meshgrid", lambda m, x, y: m.stack(m.meshgrid(x, y)) * m.stack(
        m.meshgrid(x, y, indexing="ij")).sum(), [((3,), (2,)), ((1,), (2,))], SOME),
    _same("meshgrid3", lambda m, x, y: m.meshgrid(x, y, x, sparse=True)[1] * 2,
          [((3,), (2,))], SOME),
    _same("ix_", lambda m, x: m.stack(m.broadcast_arrays(*m.ix_([0, 1], [2, 0, 1]))) + x[:2],
          [((2, 3),), ((3, 3),)], (F64, I32)),
    _same("r_c_", lambda m, x: m.r_[x, 1:3, 0.5] + m.c_[x, x].sum(), [((3,),)], (F64, I32)),
    _same("append", lambda m, x, y: m.append(x, y), [((3,), (2,)), ((2, 3), ())], SOME),
    _same("append_axis", lambda m, x, y: m.append(x, y, axis=0), [((2, 3), (1, 3))], SOME),
    _call("insert", "1, 5", shapes=[((3,),), ((2, 3),)], dtypes=SOME),
    _call("insert", "[0, 2], [[7], [8]], axis=1", shapes=[((2, 3),)], dtypes=SOME),
    _same("insert_values", lambda m, x, y: m.insert(x, 2, y), [((3,), (2,))], (F64, I32)),
    _call("delete", "1", shapes=[((3,),), ((2, 3),)], dtypes=SOME),
    _call("delete", "[0, 2], axis=1", shapes=[((2, 3),), ((1, 4),)], dtypes=SOME),
    # ---- sorting and searching -------------------------------------------------------------
    _call("sort", shapes=UNARY_SHAPES[1:] + [((2, 3, 4),)], dtypes=ALL),
    _call("sort", "axis=0", shapes=[((4,),), ((3, 2),), ((0, 2),)], dtypes=SOME),
    _call("sort", "axis=None", shapes=[((),), ((2, 3),)], dtypes=SOME),
    _call("argsort", "stable=True", shapes=UNARY_SHAPES[1:] + [((2, 3, 4),)], dtypes=ALL,
          grad=False),
    _call("argsort", "axis=0, kind='stable'", shapes=[((4,),), ((3, 2),)], dtypes=SOME,
          grad=False),
    _same("lexsort", lambda m, x, y: m.lexsort((x, y)), [((5,), (5,)), ((2, 3), (2, 3))],
          (I32, B), grad=False),
    _same("partition", lambda m, x: m.partition(x, 1)[..., 1:2] + m.sort(x)[..., :1],
          [((3,),), ((2, 4),)], SOME),
    _same("argpartition", lambda m, x: m.take_along_axis(x, m.argpartition(x, 0, axis=-1),
                                                         -1)[..., :1],
          [((3,),), ((2, 4),)], SOME),
    _same("searchsorted", lambda m, x, y: m.searchsorted(m.sort(x), y) * 10 + m.searchsorted(
        m.sort(x), y, side="right"), [((5,), (3,)), ((4,), ()), ((3,), (2, 2)), ((0,), (2,))],
        (F64, I32), grad=False),
    _same("searchsorted_sorter", lambda m, x, y: m.searchsorted(x, y, sorter=m.argsort(x)),
          [((5,), (3,))], (F64, I32), grad=False),
    # ---- creation ----------------------------------------------------------------------
    _call("copy", shapes=UNARY_SHAPES, dtypes=ALL),
    OpSpec("empty", lambda t, x: t.empty(x.shape, x.dtype), lambda n, x: n.zeros(x.shape,
                                                                                  x.dtype),
           UNARY_SHAPES, ALL, grad=False),
    OpSpec("empty_like", lambda t, x: t.empty_like(x) + t.empty_like(x, shape=(2,)).sum(),
           lambda n, x: n.zeros_like(x) + n.zeros(2, x.dtype).sum(), UNARY_SHAPES, SOME,
           grad=False),
    _same("linspace", lambda m, x: m.linspace(0, 1, 5) + m.linspace(2, 3, 4, endpoint=False,
                                                                    dtype=np.float32)[1],
          [((),)], (F64,), grad=False),
    _same("linspace_traced", lambda m, x: m.linspace(x, x + 2, 4) * m.linspace(x, 1.0, 3)[-1],
          [((),), ((2,),), ((2, 3),)], FLOATS),
    _same("linspace_axis", lambda m, x: m.linspace(x, 2 * x, 3, axis=-1, endpoint=False),
          [((2,),)], FLOATS),
    _same("logspace", lambda m, x: m.logspace(x, 1.0, 4) + m.logspace(0, 2, 3, base=2.0,
                                                                     dtype=x.dtype)[1],
          [((),), ((2,),)], FLOATS, "positive"),
    _same("geomspace", lambda m, x: m.geomspace(x, 4.0, 3) + m.geomspace(1, 1000, 4,
                                                                      dtype=x.dtype)[2],
          [((),), ((2,),)], FLOATS, "positive"),
    _same("eye", lambda m, x: m.eye(3, dtype=x.dtype) + m.eye(3, 4, k=1)[:, :3] * m.identity(
        3, x.dtype), [((),)], NUMERIC, grad=False),
    _same("ndim_shape_size", lambda m, x: x + m.ndim(x) + m.shape(x)[-1] + m.size(x) * (
        m.size(x, -1) + (m.newaxis is None)), [((2, 3),), ((4,),)], NUMERIC),
]
