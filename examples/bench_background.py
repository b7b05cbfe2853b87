"""The background-compile policy (tracer.background_compile) on variants of the real workloads of
examples/real_workloads.py: the transformer step with each optimizer term added in turn
(SGD, momentum, Adam without and with bias correction), in float32 and bfloat16
parameters, the deep MLP at several depths, the HMC sampler. Per variant: nodes, the
interpreted cost the policy estimates, the compile's estimate (after the caller's part of
the compile, which this runs), and the decision on a host with a core idle: "background"
(the first calls interpret beside the compile) or "compile first"; a busy host (as
lowering.host.idle_cores says) compiles everything first. With --steps N each variant also
runs N steps in a fresh process (disk cache off), with the policy on and with
TRACER_BACKGROUND_COMPILE=0, and prints the whole run's time of each.

Run:  python examples/bench_background.py [--steps N] [--only transformer,mlp,hmc]
"""
import argparse
import math
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import real_workloads as rw  # noqa: E402


def optimizer(lib, loss, terms, lr=3e-3, b1=0.9, b2=0.999, eps=1e-8):
    """A jitted step with the optimizer `terms`: "sgd", "momentum", "adam" (no bias
    correction) or "adam+bias" (real_workloads.adam_step's). New parameters keep their
    dtype (the float32 step count would promote bfloat16 ones, and retrace the step)."""
    vg, xp, tm = lib.value_and_grad(loss), lib.np, lib.tree_map

    def step(params, m, v, t, *batch):
        value, grads = vg(params, *batch)
        t = t + 1
        if terms == "sgd":
            return value, tm(lambda p, g: p - lr * g, params, grads), m, v, t
        m = tm(lambda m_, g: b1 * m_ + (1 - b1) * g, m, grads)
        if terms == "momentum":
            return value, tm(lambda p, m_: p - lr * m_, params, m), m, v, t
        v = tm(lambda v_, g: b2 * v_ + (1 - b2) * g * g, v, grads)
        mc, vc = ((1 - xp.power(b1, t), 1 - xp.power(b2, t)) if terms == "adam+bias"
                  else (1.0, 1.0))
        return value, tm(lambda p, m_, v_: (p - lr * (m_ / mc) / (xp.sqrt(v_ / vc) + eps))
                         .astype(p.dtype), params, m, v), m, v, t
    return lib.jit(step)


def transformer(terms, dtype):
    lib, rng = rw.tracer_lib(), np.random.default_rng(0)
    params = lib.tree_map(lambda a: a.astype(dtype), rw.init_transformer(rng))
    step = optimizer(lib, rw.lm_loss(lib), terms)
    data = rw.text_batches(rw.encode(rw.stdlib_text()), 16, 64, rng)
    zeros = lib.tree_map(np.zeros_like, params)
    state = [params, zeros, zeros, np.zeros((), np.float32)]

    def run():
        value, *state[:] = step(*state, *next(data))
        return value
    return step, run


def mlp(layers):
    lib = rw.tracer_lib()
    run, params = rw.deep_mlp_setup(lib, np.random.default_rng(0), layers=layers)
    state = [params]

    def go():
        state[0], value = run(state[0])
        return value
    return None, go


def hmc():
    lib = rw.tracer_lib()
    run, st = rw.hmc_setup(lib, np.random.default_rng(0))
    state = [st]

    def go():
        state[0], value = run(state[0])
        return value
    return None, go


VARIANTS = {f"transformer {t} {d}": ("transformer", lambda t=t, d=d: transformer(t, d))
            for d in ("float32", "bfloat16") for t in ("sgd", "momentum", "adam", "adam+bias")}
VARIANTS.update({f"mlp {n} layers": ("mlp", lambda n=n: mlp(n)) for n in (4, 12, 24)})
VARIANTS["hmc"] = ("hmc", hmc)


def decide(name):
    """Print the policy's decision on variant `name`'s first call, without compiling it."""
    import threading
    from lowering import host
    from tracer import background_compile as programs
    stages, compiling, row = programs.stages, programs.Compiling.__init__, []

    def report(decision):
        nodes, cost, estimate = row
        print(f"| {name} | {nodes} | {cost * 1e3:.0f} ms | {estimate:.1f} s | {decision} |",
              flush=True)
        os._exit(0)

    def recording_stages(compile_graph, graph):
        finish, estimate = stages(compile_graph, graph)
        row[:] = programs.size(graph), programs.interpreted_cost(graph), estimate

        def finish_here():
            if threading.current_thread() is threading.main_thread():
                report("compile first")
            return finish()
        finish_here.cores = getattr(finish, "cores", 1)
        return finish_here, estimate

    def recording_compiling(self, *args):
        compiling(self, *args)
        report("background")
    programs.stages, programs.Compiling.__init__ = recording_stages, recording_compiling
    idle = max(0, math.ceil(host.cores() - 1.5))      # host.idle_cores() at no load
    programs.idle_cores = lambda: idle      # the decision on an idle host (main says ours)
    VARIANTS[name][1]()[1]()
    print(f"| {name} | < {programs.background_threshold()} | | | compile first |", flush=True)


def timed(name, steps, env):
    """Seconds of `steps` steps of variant `name` in a fresh process with `env`."""
    code = (f"import sys, time; sys.path.insert(0, {HERE!r}); import bench_background as b; "
            f"_, run = b.VARIANTS[{name!r}][1](); t = time.perf_counter()\n"
            f"for _ in range({steps}): float(run())\nprint(time.perf_counter() - t)")
    done = subprocess.run([sys.executable, "-c", code], env={**os.environ, **env,
                          "TRACER_DISK_CACHE": "0"}, capture_output=True, text=True)
    return float(done.stdout.split()[-1]) if done.returncode == 0 else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=0)
    ap.add_argument("--only", default="")
    ap.add_argument("--variant", help=argparse.SUPPRESS)
    opts = ap.parse_args()
    if opts.variant:
        return decide(opts.variant)
    kinds = set(filter(None, opts.only.split(",")))
    from tracer import background_compile as programs
    idle = programs.idle_cores() >= 1
    print(f"load average {os.getloadavg()[0]:.1f}: a core is {'' if idle else 'not '}idle, "
          f"so this host {'follows' if idle else 'compiles first instead of'} the decisions "
          "below (made as on an idle host)")
    print("| variant | nodes | interpreted cost | compile estimate | decision |\n"
          "| --- | --- | --- | --- | --- |", flush=True)
    for name, (kind, _) in VARIANTS.items():
        if kinds and kind not in kinds:
            continue
        subprocess.run([sys.executable, __file__, "--variant", name],
                       env={**os.environ, "TRACER_DISK_CACHE": "0"})
        if opts.steps:
            on, off = (timed(name, opts.steps, {}),
                       timed(name, opts.steps, {"TRACER_BACKGROUND_COMPILE": "0"}))
            print(f"|  | {opts.steps} steps: {on:.2f} s policy, {off:.2f} s compile first "
                  f"({on / off:.2f}x) | | | |", flush=True)


if __name__ == "__main__":
    main()
