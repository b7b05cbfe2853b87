"""jax.lax.gather's and scatter's checks of their dimension numbers against the shapes, in
JAX's order and words (XLA's ShapeInference), so a bad call fails before anything is
traced with the message JAX gives. ShapeMismatchError is a TypeError, as JAX's."""
from ir.errors import ShapeMismatchError


def _fail(op, message):
    raise ShapeMismatchError(f"lax.{op}: {message}")


def _kind(op):
    """'gather' or 'scatter' (of scatter_add, ...), as JAX's messages name the op."""
    return "gather" if op == "gather" else "scatter"


def _sorted(op, name, dims):
    if list(dims) != sorted(dims):
        _fail(op, f"{name} in {_kind(op)} op must be sorted; got {dims}")


def _unique(op, name, dims):
    if len(set(dims)) != len(dims):
        _fail(op, f"{name} in {_kind(op)} op must not repeat; got: {dims}.")


def _in_range(op, name, dims, rank):
    for d in dims:
        if not 0 <= d < rank:
            _fail(op, f"Invalid {name} set in {_kind(op)} op; valid range is [0, {rank}); "
                      f"got: {d}.")


def _disjoint(op, name1, dims1, name2, dims2):
    if set(dims1) & set(dims2):
        _fail(op, f"{name1} and {name2} in {_kind(op)} op must be disjoint; got: {dims1} and "
                  f"{dims2}.")


def _batching(op, index_map, operand, indices, operand_batching, index_batching):
    """The checks gather and scatter share on their batching dimensions."""
    _disjoint(op, "start_index_map" if op == "gather" else "scatter_dims_to_operand_dims",
              index_map, "operand_batching_dims", operand_batching)
    name = f"{'start' if op == 'gather' else 'scatter'}_indices_batching_dims"
    _unique(op, name, index_batching)
    _in_range(op, name, index_batching, len(indices))
    title = _kind(op).capitalize()
    if len(indices) - 1 in index_batching:
        _fail(op, f"{title} op cannot have the index vector dimension as a batching "
                  f"dimension; got {index_batching}.")
    if len(operand_batching) != len(index_batching):
        _fail(op, f"{title} op requires equal numbers of operand_batching_dims and {name}, "
                  f"got {operand_batching} and {index_batching}.")
    shapes = (tuple(operand[d] for d in operand_batching),
              tuple(indices[d] for d in index_batching))
    if shapes[0] != shapes[1]:
        _fail(op, f"{title} op requires operand batching dimensions and indices batching "
                  f"dimensions to have the same shape, got {shapes[0]} and {shapes[1]}.")


def _index_vector(op, indices):
    if not indices:
        kind = _kind(op)
        _fail(op, f"{kind.capitalize()} index leaf dimension must be within [0, rank(indices) "
                  f"+ 1). rank(indices) is 0 and {kind} index leaf dimension is -1: give "
                  f"indices with the index vector as their last dimension.")


def _index_map(op, name, index_map, operand, indices):
    vector = len(indices) - 1
    if len(index_map) != indices[vector]:
        _fail(op, f"{_kind(op).capitalize()} op has {len(index_map)} elements in {name} and "
                  f"the bound of dimension index_vector_dim={vector} of indices is "
                  f"{indices[vector]}. These two numbers must be equal.")
    for i, d in enumerate(index_map):
        if not 0 <= d < len(operand):
            mapping = name + (" mapping" if op != "gather" else "")
            _fail(op, f"Invalid {mapping}; domain is [0, {len(operand)}), got: {i}->{d}.")
    _unique(op, name, index_map)


def check_gather(operand, indices, dn, slice_sizes):
    """Shapes operand and indices (index vector last), GatherDimensionNumbers dn."""
    offset, collapsed = tuple(dn.offset_dims), tuple(dn.collapsed_slice_dims)
    batching = tuple(dn.operand_batching_dims)
    _index_vector("gather", indices)
    _sorted("gather", "offset_dims", offset)
    _unique("gather", "offset_dims", offset)
    out_rank = len(offset) + len(indices) - 1
    for i, d in enumerate(offset):
        if not 0 <= d < out_rank:
            _fail("gather", f"Offset dimension {i} in gather op is out of bounds; got {d}, "
                            f"but should have been in [0, {out_rank})")
    _index_map("gather", "start_index_map", tuple(dn.start_index_map), operand, indices)
    for name, dims in (("collapsed_slice_dims", collapsed), ("operand_batching_dims", batching)):
        _sorted("gather", name, dims)
        _in_range("gather", name, dims, len(operand))
        _unique("gather", name, dims)
    _disjoint("gather", "collapsed_slice_dims", collapsed, "operand_batching_dims", batching)
    _batching("gather", tuple(dn.start_index_map), operand, indices, batching,
              tuple(dn.start_indices_batching_dims))
    if len(slice_sizes) != len(operand):
        _fail("gather", f"Gather op must have one slice size for every input dimension; got: "
                        f"len(slice_sizes)={len(slice_sizes)}, "
                        f"input_shape.rank={len(operand)}")
    if len(slice_sizes) != len(offset) + len(collapsed) + len(batching):
        _fail("gather", f"All components of the offset index in a gather op must either be a "
                        f"offset dimension or explicitly collapsed/batching; got "
                        f"len(slice_sizes)={len(slice_sizes)}, output_slice_sizes={offset}, "
                        f"collapsed_slice_dims={collapsed}, operand_batching_dims={batching}.")
    for i, (k, n) in enumerate(zip(slice_sizes, operand)):
        if 0 not in indices and not 0 <= k <= n:
            _fail("gather", f"Slice size at index {i} in gather op is out of range, must be "
                            f"within [0, {n} + 1), got {k}.")
    for what, dims, allowed in (("collapse slice dims with bound 1", collapsed, (1,)),
                                ("have operand batching dims with bound 0/1", batching, (0, 1))):
        for i, d in enumerate(dims):
            if slice_sizes[d] not in allowed:
                _fail("gather", f"Gather op can only {what}, but bound is {slice_sizes[d]} for "
                                f"index {d} at position {i}.")


def check_scatter(op, operand, indices, updates, dn):
    """Shapes operand, indices (index vector last) and updates, ScatterDimensionNumbers dn."""
    window, inserted = tuple(dn.update_window_dims), tuple(dn.inserted_window_dims)
    batching = tuple(dn.operand_batching_dims)
    index_batching = tuple(dn.scatter_indices_batching_dims)
    _index_vector(op, indices)
    vector = len(indices) - 1
    if len(updates) != vector + len(window):
        _fail(op, f"Updates tensor must be of rank {vector + len(window)}; got {len(updates)}.")
    for name, dims, rank in (("update_window_dims", window, len(updates)),
                             ("inserted_window_dims", inserted, len(operand)),
                             ("operand_batching_dims", batching, len(operand))):
        _sorted(op, name, dims)
        _unique(op, name, dims)
        _in_range(op, name, dims, rank)
    _disjoint(op, "inserted_window_dims", inserted, "operand_batching_dims", batching)
    _batching(op, tuple(dn.scatter_dims_to_operand_dims), operand, indices, batching,
              index_batching)
    scatter_dims = [d for d in range(len(updates)) if d not in window]
    shapes = (tuple(operand[d] for d in batching),
              tuple(updates[scatter_dims[d]] for d in index_batching))
    if shapes[0] != shapes[1]:
        _fail(op, f"Scatter op requires operand batching dimensions and updates batching "
                  f"dimensions to have the same shape, got {shapes[0]} and {shapes[1]}.")
    size = len(window) + len(inserted) + len(batching)
    if size != len(operand):
        _fail(op, f"Scatter op has window of size {size}; doesn't match operand of rank "
                  f"{len(operand)}.")
    _index_map(op, "scatter_dims_to_operand_dims",
               tuple(dn.scatter_dims_to_operand_dims), operand, indices)
    bounds = [n for d, n in enumerate(operand) if d not in inserted and d not in batching]
    for d, most in zip(window, bounds):
        if updates[d] > most:
            _fail(op, f"Bounds of the window dimensions of updates must not exceed the bounds "
                      f"of the corresponding dimensions of operand. For dimension {d}, updates "
                      f"bound is {updates[d]}, operand bound is {most}.")
    for d, n in zip(scatter_dims, indices[:vector]):
        if updates[d] != n:
            _fail(op, f"Bounds of the scatter dimensions of updates must be the same as the "
                      f"bounds of the corresponding dimensions of scatter indices. For scatter "
                      f"dimension {d}, updates bound is {updates[d]}, indices bound is {n}.")
