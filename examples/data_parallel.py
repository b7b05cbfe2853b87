"""Data-parallel training of examples/mlp.py's MLP over MPI processes.

Every process holds the same parameters and takes its own slice of each global batch;
one training step is a jitted shard_map over a mesh with one axis, "data", of one
position per process. The gradients and the loss are averaged by ONE pmean per step:
each is raveled into one flat bucket (as Horovod and PyTorch DDP pack theirs), averaged,
and split back, so a step costs one Allreduce however many layers the model has (inside
the compiled step: the program calls MPI_Allreduce itself). The
parameters stay equal on every process, and equal (to float rounding) to a one-process
run on the same global batches.

Run:  mpiexec -n 2 python examples/data_parallel.py [--steps 40] [--save params.npz]
      python examples/data_parallel.py              (one process, the same global batches)
"""
import argparse

import numpy as np

import tracer
import tracer.numpy as tnp
from tracer import lax
from mlp import init_params, loss, spirals


def pmean_bucket(grads, axis_name):
    """`grads` (a pytree) averaged over `axis_name` in one collective."""
    leaves, tree = tracer.tree_util.tree_flatten(grads)
    bucket = lax.pmean(tnp.concatenate([tnp.ravel(g) for g in leaves]), axis_name)
    out, start = [], 0
    for g in leaves:
        out.append(tnp.reshape(bucket[start:start + g.size], g.shape))
        start += g.size
    return tracer.tree_util.tree_unflatten(tree, out)


def make_step(mesh, lr):
    def step(params, x, onehot):
        value, grads = tracer.value_and_grad(loss)(params, x, onehot)
        value, grads = pmean_bucket((value, grads), "data")    # the loss rides along
        params = tracer.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)
        return params, value
    return tracer.jit(tracer.shard_map(
        step, mesh, in_specs=(tracer.P(), tracer.P("data"), tracer.P("data")),
        out_specs=(tracer.P(), tracer.P())))


def main(steps, batch, lr=0.5, save=None):
    tracer.distributed.initialize()
    rank, count = tracer.distributed.process_index(), tracer.distributed.process_count()
    if batch % count:
        raise SystemExit(f"--batch {batch} must be a multiple of the {count} processes")
    rng = np.random.default_rng(0)
    x, y = spirals(200, rng)
    onehot = np.eye(2, dtype=np.float32)[y]
    params = init_params([2, 32, 32, 2], rng)
    mesh = tracer.make_mesh((count,), ("data",))
    step = make_step(mesh, lr)
    mine = slice(rank * batch // count, (rank + 1) * batch // count)
    for i in range(steps):
        pick = rng.choice(len(x), batch, replace=False)[mine]   # this process's share
        params, value = step(params, x[pick], onehot[pick])
        if rank == 0:
            print(f"step {i:3d}  loss {float(value):.5f}")
    if rank == 0:
        print(f"{count} process(es), global batch {batch}: final loss {float(value):.5f}")
        if save:
            leaves = tracer.tree_util.tree_leaves(params)
            np.savez(save, *[np.asarray(p) for p in leaves])


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--batch", type=int, default=64, help="global batch (all processes)")
    ap.add_argument("--save", help="write the final parameters (.npz) from process 0")
    args = ap.parse_args()
    main(args.steps, args.batch, save=args.save)
