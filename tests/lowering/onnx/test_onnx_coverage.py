"""Every kernel registered for a backend has an ONNX exporter, or is in
lowering.onnx.NOT_EXPORTABLE with the reason, which the export error shows."""
import numpy as np
import pytest

import registry
import tracer
import tracer.numpy as tnp
from lowering.onnx import NOT_EXPORTABLE
from registry.exporters import has_exporter

pytest.importorskip("onnx")


def test_every_registered_kernel_has_an_exporter_or_a_reason():
    kernels = {k for k, _ in registry.kernels()}
    missing = sorted(k for k in kernels if not has_exporter(k, "onnx"))
    assert missing == sorted(NOT_EXPORTABLE), (
        "kernels without an ONNX exporter must be listed, with the reason, in "
        "lowering.onnx.NOT_EXPORTABLE (and nothing listed may have one)")
    assert all(isinstance(why, str) and why for why in NOT_EXPORTABLE.values())


def test_a_kernel_that_cannot_be_exported_says_why():
    a = np.eye(3) * 2
    with pytest.raises(tracer.KernelNotFoundError,
                       match=r"'solve'\. It cannot be exported: ONNX has no matrix .*"
                             r"register_exporter\('solve', 'onnx', fn\)"):
        tracer.export.to_onnx(lambda a: tnp.linalg.solve(a, a), a)
