"""The graph data model: a flat, single-assignment, topologically ordered node list.

Every node names a kernel (a string looked up in the registry) and carries hashable
attrs. Values are `Var`s (defined once) or 0-d `Literal`s (inlined constants); array
constants are graph `constvars` bound to `consts`. This is the jaxpr shape of things.

Regions: an attr whose value is a Graph, or a tuple of Graphs (a switch's branches), is
a sub-graph of the node (`node.regions`). A region is closed: it reads only its own
inputs and constants; outer values it needs are explicit node inputs. Passes transform
regions through `node.with_regions(fn)`, so none rediscovers the convention.
"""
import numpy as np

from ir.errors import IRError, TracerError
from ir.types import ShapedArray


class Var:
    """A value defined exactly once in a graph; identity is the name."""
    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"Var({self.aval})"


class Literal:
    """A 0-d constant inlined into a node's inputs (printed as `2.0:f32[]`)."""
    __slots__ = ("value", "aval", "key")

    def __init__(self, value, dtype=None):
        arr = np.asarray(value, dtype=dtype)
        if arr.ndim != 0:
            raise IRError(f"Literal must be 0-d, got shape {arr.shape}")
        self.value = arr[()]
        self.aval = ShapedArray((), arr.dtype)
        self.key = (arr.dtype.str, arr.tobytes())

    def __eq__(self, other):
        return isinstance(other, Literal) and self.key == other.key

    def __hash__(self):
        return hash(self.key)

    def __repr__(self):
        return f"Literal({self.value!r})"


def freeze_attrs(attrs):
    """Attrs as a read-only sorted tuple of items, checked hashable (CSE keys on it)."""
    if not attrs:
        return ()
    items = tuple(sorted(attrs.items()))
    try:
        hash(items)
    except TypeError as e:
        bad = [k for k, v in items if not _hashable(v)]
        raise IRError(f"node attrs must be hashable (use tuples, not lists/arrays); "
                      f"unhashable: {bad}") from e
    return items


def _hashable(v):
    try:
        hash(v)
        return True
    except TypeError:
        return False


class Node:
    """One kernel application: `outputs = kernel[attrs](*inputs)`.

    `source` is "file:line (function)" of the user code that emitted it, for errors.
    """
    __slots__ = ("kernel", "inputs", "outputs", "attr_items", "source", "_regions")

    def __init__(self, kernel, inputs, outputs, attrs=None, source=None):
        self.kernel = kernel
        self.inputs = tuple(inputs)
        self.outputs = tuple(outputs)
        self.attr_items = freeze_attrs(attrs)
        self.source = source
        self._regions = None    # found on first use: every pass asks each node, often

    @property
    def attrs(self):
        return dict(self.attr_items)

    @property
    def regions(self):
        """The node's sub-graphs, in attr order (a tuple attr's graphs in its order)."""
        return list(self._found_regions())

    def _found_regions(self):
        if self._regions is None:       # attrs never change: found once
            self._regions = tuple([g for _, v in self.attr_items if is_region(v)
                                   for g in (v if type(v) is tuple else (v,))])
        return self._regions

    def with_regions(self, fn):
        """This node with every region `g` replaced by `fn(g)` (self if none changes)."""
        if not self._found_regions():       # (every pass asks every node: no list made)
            return self
        attrs, changed = {}, False
        for k, v in self.attr_items:
            if is_region(v):
                new = tuple(map(fn, v)) if type(v) is tuple else (fn(v),)
                changed |= any(map(lambda a, b: a is not b, new,
                                   v if type(v) is tuple else (v,)))
                v = new if type(v) is tuple else new[0]
            attrs[k] = v
        if not changed:
            return self
        return Node(self.kernel, self.inputs, self.outputs, attrs, self.source)

    def __repr__(self):
        return f"Node({self.kernel}, {len(self.inputs)} in, {len(self.outputs)} out)"


def is_region(value):
    return isinstance(value, Graph) or (type(value) is tuple and value != () and all(
        isinstance(g, Graph) for g in value))


def _describe(node):
    """`add(f32[3], f32[3]) at file:line (fn)`: a node without the graph's value names."""
    ins = ", ".join(str(getattr(x, "aval", "?")) for x in node.inputs)
    return f"{node.kernel}({ins})" + (f" at {node.source}" if node.source else "")


# Set by `registry` on import: (kernel, in_avals, attrs) -> tuple of out avals.
default_infer = None


class Graph:
    """A closed function: `lambda constvars ; invars . let nodes in outvars`."""

    def __init__(self, invars, outvars, nodes, constvars=(), consts=()):
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.nodes = list(nodes)
        self.constvars = list(constvars)
        self.consts = list(consts)

    @property
    def in_avals(self):
        return [v.aval for v in self.invars]

    @property
    def out_avals(self):
        return [v.aval for v in self.outvars]

    def kernels(self):
        """The set of kernel names this graph uses (including nested sub-graphs)."""
        names = {n.kernel for n in self.nodes}
        for n in self.nodes:
            if n.attr_items:        # (regions are attrs)
                for g in n._found_regions():
                    names |= g.kernels()
        return names

    def verify(self, infer=None):
        """Check SSA form, definition before use, consts, and (if a shape-rule inference
        function is available) that every node's output types match its shape rule (a
        region node's rule checks the region signatures). Regions are verified too, as
        closed graphs. Raises IRError naming the node, its kernel and where it was
        created."""
        infer = infer or default_infer
        defined = set()

        def define(v, what):
            if not isinstance(v, Var):
                raise IRError(f"{what} must be a Var, got {v!r}")
            if id(v) in defined:
                raise IRError(f"{what} {v} is defined twice (graphs are single-assignment)")
            defined.add(id(v))

        if len(self.constvars) != len(self.consts):
            raise IRError(f"{len(self.constvars)} constvars but {len(self.consts)} consts")
        for j, (v, c) in enumerate(zip(self.constvars, self.consts)):
            define(v, f"constvar {j}")
            c = np.asarray(c)
            if c.shape != v.aval.shape or c.dtype != v.aval.dtype:
                raise IRError(f"constvar {j} has type {v.aval} but is bound to a const "
                              f"{ShapedArray(c.shape, c.dtype)}")
        for v in self.invars:
            define(v, "input")
        for i, n in enumerate(self.nodes):
            here = f"node {i} ({_describe(n)})"
            for x in n.inputs:
                if not isinstance(x, (Var, Literal)):
                    raise IRError(f"{here} has a non-value input {x!r}")
                if isinstance(x, Var) and id(x) not in defined:
                    raise IRError(f"{here} uses a value of type {x.aval} before it is defined")
            for o in n.outputs:
                define(o, f"output of {here}")
            for k, g in enumerate(n.regions):
                try:
                    g.verify(infer)
                except IRError as e:
                    raise IRError(f"{here}, region {k}: {e}") from None
            if infer is not None:
                try:
                    want = tuple(a.strip_weak() for a in
                                 infer(n.kernel, [x.aval for x in n.inputs], n.attrs))
                except TracerError as e:
                    raise IRError(f"{here}: its shape rule rejects the inputs: {e}") from None
                got = tuple(o.aval.strip_weak() for o in n.outputs)
                if want != got:
                    raise IRError(f"{here} outputs {list(got)} but its shape rule gives "
                                  f"{list(want)}")
        for v in self.outvars:
            if not isinstance(v, (Var, Literal)):
                raise IRError(f"graph output {v!r} is not a value")
            if isinstance(v, Var) and id(v) not in defined:
                raise IRError(f"graph output {v} is never defined")
        return self

    def __repr__(self):
        return f"<ir.Graph {len(self.invars)} inputs, {len(self.nodes)} nodes>"

    # str(graph), to_networkx(), to_dot() and render(path, fusion_groups=None) are
    # written in the modules that read graphs (ir.printer, ir.networkx_dot, ir.render);
    # the ir package binds them here, so this module imports none of them
