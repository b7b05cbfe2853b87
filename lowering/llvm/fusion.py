"""Partition a graph into groups, each one function of the module (or one Python call).

Values are either *materialized* (a buffer: graph inputs, consts, outputs, what a whole
kernel or a Python fallback needs) or *fused* (recomputed inside each consumer's loop from
its own inputs). A fused value shared by several consumers is materialized once it is
expensive to recompute (transcendentals, long chains), or when a broadcast would repeat
it. Every materialized value computed by scalar kernels and index maps is the root of an
elementwise loop; consecutive roots of one shape share a loop of up to settings.max_loop_nodes
nodes (the next root starts a new loop reading them from buffers). Whole kernels (reductions,
matmul...) and Python fallbacks are groups of their own; reductions fuse their producers.
"""
import warnings

from ir import Graph, Node, Var
from ir.errors import CodegenError, KernelNotFoundError
from lowering.llvm.protocol import as_impl
from lowering.settings import settings
from registry.tables import KERNELS, get_kernel

_impls = KERNELS.entries       # (kernel, backend) -> impl, read on hot paths

_warned = set()


def _moves_last_axis(node):
    perm = node.attrs.get("perm") if node.kernel == "transpose" else None
    return perm is not None and perm[-1] != len(perm) - 1


class Group:
    """One unit of the program: a `loop` over `shape` computing `computed` in order and
    storing those of them in `roots`, a whole `kernel` (`node`), or a `python` fallback
    call (`node`). `leaves` are the materialized values it reads; `nodes` every graph
    node it covers (fused producers included)."""

    def __init__(self, kind, roots, node=None, shape=None):
        self.kind, self.roots, self.node, self.shape = kind, list(roots), node, shape
        self.leaves, self.nodes = [], []
        self.flat, self.tiled = True, False     # loop structure (set by Partition)

    def __repr__(self):
        what = self.node.kernel if self.node else f"loop{list(self.shape)}"
        return f"<Group {what}: {len(self.nodes)} nodes>"


def parallel_extent(shape):
    """Work items of a loop nest over `shape` split on its outermost axis of extent > 1."""
    return next((d for d in shape if d != 1), 1)


def llvm_impl(kernel):
    """The protocol object for kernel's llvm impl, or None when only numpy has it (then
    the node runs through its numpy kernel, with one warning per kernel name)."""
    impl = _impls.get((kernel, "llvm"))
    if impl is not None:
        return as_impl(kernel, impl)
    if (kernel, "numpy") not in _impls:
        get_kernel(kernel, "llvm")      # raises KernelNotFoundError naming both backends
    if kernel not in _warned:
        _warned.add(kernel)
        warnings.warn(f"kernel {kernel!r} has no llvm impl: it runs through its numpy kernel "
                      f"inside the compiled program (register one with registry."
                      f"register_kernel({kernel!r}, 'llvm', impl) to compile it)", stacklevel=4)
    return None


def check_kernels(graph):
    """Fail before anything runs if a kernel has neither an llvm nor a numpy impl."""
    for name in sorted(graph.kernels()):
        if (name, "llvm") not in _impls and (name, "numpy") not in _impls:
            raise KernelNotFoundError(
                f"kernel {name!r} has no impl on any backend usable by the llvm backend "
                f"(neither 'llvm' nor 'numpy'); register one with "
                f"registry.register_kernel({name!r}, 'llvm', impl)")


class Partition:
    """The grouping of one graph (see module doc); `groups` is in execution order."""

    def __init__(self, graph):
        self.graph = graph
        self.producer = {id(o): n for n in graph.nodes for o in n.outputs}
        self.impls = {id(n): llvm_impl(n.kernel) for n in graph.nodes}
        self.kind = {id(n): self._kind(n) for n in graph.nodes}
        self.materialized = self._materialize()
        self.groups = self._group()

    def _kind(self, n):
        impl = self.impls[id(n)]
        if impl is None or hasattr(impl, "native") and not impl.native(n):
            return "python"         # (native: control flow, whose regions may need Python)
        if impl.kind in ("scalar", "map") and len(n.outputs) != 1:
            raise CodegenError(f"kernel {n.kernel!r}: a {type(impl).__name__} must have one "
                               f"output, the node has {len(n.outputs)}")
        if impl.kind == "scalar" and any(x.aval.shape != n.outputs[0].aval.shape
                                         for x in n.inputs):
            raise CodegenError(
                f"kernel {n.kernel!r}: a ScalarKernel needs inputs of the output's shape "
                f"{n.outputs[0].aval.shape}, got {[x.aval.shape for x in n.inputs]} "
                f"(broadcast first, or register an IndexMap/KernelEmitter)")
        return impl.kind

    def fusable(self, x):
        n = self.producer.get(id(x))
        return n is not None and self.kind[id(n)] in ("scalar", "map")

    def _materialize(self):
        g = self.graph
        users = {}
        for n in g.nodes:
            for x in {id(x): x for x in n.inputs if isinstance(x, Var)}.values():
                users.setdefault(id(x), []).append(n)
        mat = {id(v) for v in g.outvars if isinstance(v, Var)}
        for n in g.nodes:
            kind, impl = self.kind[id(n)], self.impls[id(n)]
            if kind in ("python", "kernel"):
                mat.update(id(o) for o in n.outputs)
                if kind == "python" or not impl.fuse_inputs:
                    mat.update(id(x) for x in n.inputs if isinstance(x, Var))
        cost, depth = {}, {}
        for n in g.nodes:
            if self.kind[id(n)] not in ("scalar", "map"):
                continue
            ins = [x for x in n.inputs if isinstance(x, Var) and self.fusable(x)
                   and id(x) not in mat]
            v = n.outputs[0]
            cost[id(v)] = self.impls[id(n)].cost + sum(cost[id(x)] for x in ins) + \
                sum(1 for x in n.inputs if isinstance(x, Var) and x not in ins)
            depth[id(v)] = 1 + max((depth[id(x)] for x in ins), default=0)
            us = users.get(id(v), [])
            expensive = cost[id(v)] > settings.shared_cost
            repeated = any(self.kind[id(u)] == "map" and u.outputs[0].aval.size > v.aval.size
                           for u in us)
            if (expensive and (len(us) > 1 or repeated) or cost[id(v)] > settings.max_cost
                    or depth[id(v)] > settings.max_depth):
                mat.add(id(v))
        return mat

    def _group(self):
        groups = []
        for n in self.graph.nodes:
            kind = self.kind[id(n)]
            if kind in ("python", "kernel"):
                grp = Group(kind, n.outputs, node=n)
                self._collect(grp, n.inputs, fuse=kind == "kernel", expand=False)
                grp.nodes.append(n)
                groups.append(grp)
                continue
            v = n.outputs[0]
            if id(v) not in self.materialized:
                continue
            last = groups[-1] if groups else None
            if (last is not None and last.kind == "loop" and last.shape == v.aval.shape
                    and len(last.nodes) < settings.max_loop_nodes
                    and self._identity_only(v, {id(r) for r in last.roots})):
                grp = last
                grp.roots.append(v)
            else:
                grp = Group("loop", [v], shape=v.aval.shape)
                groups.append(grp)
            self._collect(grp, [v], fuse=True, expand=True)
        # a root read only inside its own loop (from registers) is computed, not stored
        needed = {id(v) for v in self.graph.outvars} | {id(x) for g in groups for x in g.leaves}
        order = {id(n): i for i, n in enumerate(self.graph.nodes)}
        for grp in groups:
            if grp.kind == "loop":
                grp.computed, grp.roots = grp.roots, [r for r in grp.roots if id(r) in needed]
            grp.nodes.sort(key=lambda m: order[id(m)])
            grp.flat = grp.kind == "loop" and all(
                self.impls[id(m)].kind == "scalar" or self.impls[id(m)].flat_ok(
                    [x.aval for x in m.inputs], m.outputs[0].aval, m.attrs)
                for m in grp.nodes)
            s = grp.shape
            grp.tiled = (grp.kind == "loop" and not grp.flat and len(s) >= 2 and
                         min(s[-2:]) >= settings.tiled_min and
                         any(_moves_last_axis(m) for m in grp.nodes))
        return groups

    def _identity_only(self, v, roots):
        """True if v's fused expression reads the loop's roots only at the loop index
        (through scalar kernels), so it can share their loop and registers."""
        stack, seen = [(v, True)], set()
        while stack:
            x, ident = stack.pop()
            if (id(x), ident) in seen:
                continue
            seen.add((id(x), ident))
            if id(x) in roots:
                if not ident:
                    return False
                continue
            if (id(x) in self.materialized and x is not v) or not self.fusable(x):
                continue
            n = self.producer[id(x)]
            keep = ident and self.kind[id(n)] == "scalar"
            stack.extend((y, keep) for y in n.inputs if isinstance(y, Var))
        return True

    def _collect(self, grp, values, fuse, expand):
        """Add to grp the nodes fused into `values` (whose own producers are included if
        `expand`: loop roots) and the materialized leaves they read. A loop's other roots
        are read from registers, not buffers."""
        have_leaf = {id(x) for x in grp.leaves}
        have_node = {id(m) for m in grp.nodes}
        roots = {id(r) for r in grp.roots} if grp.kind == "loop" else set()
        stack = [(x, expand) for x in values]
        while stack:
            x, start = stack.pop()
            if not isinstance(x, Var):
                continue
            if not start:
                if id(x) in roots:
                    continue
                if not fuse or id(x) in self.materialized or not self.fusable(x):
                    if id(x) not in have_leaf:
                        have_leaf.add(id(x))
                        grp.leaves.append(x)
                    continue
            n = self.producer[id(x)]
            if id(n) not in have_node:
                have_node.add(id(n))
                grp.nodes.append(n)
                stack.extend((y, False) for y in n.inputs)


def merge_runs(groups, merged_at):
    """`groups` with runs made one group: merged_at(k) is (n, group) when groups[k:k + n]
    become `group` (row fusion, epilogue fusion), or None."""
    out, k = [], 0
    while k < len(groups):
        hit = merged_at(k)
        n, grp = hit or (1, groups[k])
        out.append(grp)
        k += n
    return out


def display_graph(graph, groups):
    """The graph with each fused group shown as one `fusion` node whose `body` attr is
    its sub-graph (the printer prints it nested); single-node groups stay as they are."""
    return Graph(graph.invars, graph.outvars, [
        grp.nodes[0] if len(grp.nodes) == 1 else fusion_node(
            grp.node.kernel if grp.node is not None else grp.kind, grp.leaves, grp.roots,
            grp.nodes) for grp in groups], graph.constvars, graph.consts)


def fusion_node(label, leaves, roots, nodes):
    """The `fusion` node showing a group of `nodes` (see display_graph)."""
    return Node("fusion", leaves, roots, {"kind": label, "body": Graph(leaves, roots, nodes)})
