"""Whole models' gradients with every group split across two threads, against the
interpreter: the pieces that decide what a parallel call runs (pool phases, scratch,
shared bodies of identical calls) only meet in programs with many such calls. Small
shapes keep it fast; parallel_ns = 0 splits every group that can be split."""
import importlib.util
import os

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from lowering.settings import settings
from tracer import nn

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _example(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "examples",
                                                                     name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def split_everything(monkeypatch):
    monkeypatch.setenv("TRACER_NUM_THREADS", "2")
    monkeypatch.setattr(settings, "parallel_ns", 0)


def cnn_case(rng):
    """examples/cnn.py's network: two convs of different shapes, pooling, dropout."""
    cnn = _example("cnn")
    x, labels = cnn.images(16, 12, rng)
    params = cnn.init_params(12, rng)
    return (lambda p: cnn.loss(p, x, labels, tracer.random.PRNGKey(3))), params


def mlp_case(rng):
    """Layers of two widths: identical layers share bodies, the others must not."""
    widths = [24, 40, 40, 40, 24, 24, 8]
    params = [(rng.standard_normal((a, b)).astype(np.float32) / np.sqrt(a),
               np.zeros(b, np.float32)) for a, b in zip(widths, widths[1:])]
    x = rng.standard_normal((32, widths[0])).astype(np.float32)

    def loss(p):
        h = x
        for w, b in p:
            h = tnp.tanh(h @ w + b)
        return tnp.mean(nn.logsumexp(h, axis=-1))
    return loss, params


def attention_case(rng):
    """Batched matmuls of two shapes, a softmax along rows, a layer norm."""
    q, k = (rng.standard_normal((4, 10, 16)).astype(np.float32) for _ in range(2))
    params = {"wq": rng.standard_normal((16, 16)).astype(np.float32) / 4,
              "wv": rng.standard_normal((16, 8)).astype(np.float32) / 4}

    target = rng.standard_normal((4, 10, 8)).astype(np.float32)

    def loss(p):
        s = (q @ p["wq"]) @ tnp.swapaxes(k, 1, 2) / 4.0
        out = nn.softmax(s, axis=-1) @ (k @ p["wv"])
        mu = tnp.mean(out, axis=-1, keepdims=True)
        normed = (out - mu) / tnp.sqrt(tnp.var(out, axis=-1, keepdims=True) + 1e-5)
        return tnp.sum(normed * target)
    return loss, params


@pytest.mark.parametrize("case", [cnn_case, mlp_case, attention_case],
                         ids=["cnn", "mlp", "attention"])
def test_split_gradients_match_the_interpreter(case, split_everything):
    loss, params = case(np.random.default_rng(0))
    want_v, want_g = tracer.jit(tracer.value_and_grad(loss), backend="numpy")(params)
    got_v, got_g = tracer.jit(tracer.value_and_grad(loss), backend="llvm")(params)
    np.testing.assert_allclose(float(got_v), float(want_v), rtol=1e-5)
    for got, want in zip(tracer.tree_util.tree_leaves(got_g),
                         tracer.tree_util.tree_leaves(want_g)):
        scale = float(np.abs(want).max(initial=1e-3))
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4,
                                   atol=1e-4 * scale)
