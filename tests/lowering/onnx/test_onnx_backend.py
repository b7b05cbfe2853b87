"""The ONNX backend's place: registry holds the exporter table, lowering.onnx registers the
built-in rules into it (so `import tracer` has them and describe lists them), and a user
overrides one kernel's exporter through the table."""
import os
import subprocess
import sys

import numpy as np
import pytest

import registry
import tracer
import tracer.numpy as tnp
from registry import families, tables
from registry.exporters import EXPORTERS, OnnxOperator
from tracer.export import to_onnx

pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..")


def test_registry_holds_only_the_table_and_lowering_registers_the_rules():
    script = "\n".join([
        "import sys, registry",
        "assert not registry.exporters(), registry.exporters()[:5]",
        "assert not [m for m in sys.modules if m.split('.')[0] == 'lowering']",
        "import tracer",
        "assert registry.has_exporter('expm1', 'onnx') and registry.has_exporter('scan', 'onnx')",
        "assert 'exporter [onnx]' in str(registry.describe('expm1'))"])
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_describe_names_the_builtin_rule():
    assert "exporter [onnx] BoolViaInt32(OnnxOperator('Add'))" in str(registry.describe("add"))
    assert "exporter [onnx] OnnxOperator('Mod', fmod=1)" in str(registry.describe("fmod"))
    assert "lowering.onnx.control._scan" in str(registry.describe("scan"))


def test_a_user_override_of_a_builtin_is_exported_and_restorable():
    x = np.linspace(-2, 2, 5, dtype=np.float32)
    builtin = registry.get_exporter("tanh", "onnx")
    registry.register_exporter("tanh", "onnx", OnnxOperator("Sigmoid"))
    try:
        model = to_onnx(tnp.tanh, x)
        assert [n.op_type for n in model.graph.node] == ["Sigmoid", "Identity"]
        sess = ort.InferenceSession(model.SerializeToString(),
                                    providers=["CPUExecutionProvider"])
        np.testing.assert_allclose(sess.run(None, {"x": x})[0], 1 / (1 + np.exp(-x)),
                                   rtol=1e-6)
    finally:
        registry.register_exporter("tanh", "onnx", builtin)
    assert [n.op_type for n in to_onnx(tnp.tanh, x).graph.node] == ["Tanh", "Identity"]


def test_onnx_operator_passes_its_attributes():
    x = np.array([-2.0, -0.5, 0.0, 1.5], np.float32)
    name = "test_onnx_leaky_relu"
    registry.define_kernel(name, shape=lambda x: x, family="elementwise",
                           numpy=lambda x: np.where(x > 0, x, x * x.dtype.type(0.25)),
                           onnx=OnnxOperator("LeakyRelu", alpha=0.25), differentiable=False)
    try:
        fun = lambda v: tracer.run_kernel(name, [v])  # noqa: E731
        sess = ort.InferenceSession(to_onnx(fun, x).SerializeToString(),
                                    providers=["CPUExecutionProvider"])
        np.testing.assert_array_equal(sess.run(None, {"v": x})[0], fun(x))
        assert "OnnxOperator('LeakyRelu', alpha=0.25)" in str(registry.describe(name))
    finally:
        for table, key in ((tables.SHAPE_RULES, (name,)), (tables.KERNELS, (name, "numpy")),
                           (EXPORTERS, (name, "onnx")), (families.FAMILY, (name,)),
                           (families.NOT_DIFFERENTIABLE, (name,))):
            table.discard(*key)
