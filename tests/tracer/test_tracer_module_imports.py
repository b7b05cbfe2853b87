"""The modules of tracer and of each of its packages import one another without a
circle (function-level imports included): tracer.numpy's indexing reads the flat
positions that its x.at[...] updates (index_updates) write through, never the other way
round."""
import pytest

import tracer
import tracer.lax
import tracer.numpy
import tracer.random
from module_imports import assert_no_circle, imports


@pytest.mark.parametrize("package", [tracer, tracer.numpy, tracer.lax, tracer.random],
                         ids=lambda p: p.__name__)
def test_no_import_circle_inside_the_package(package):
    assert_no_circle(imports(package))
