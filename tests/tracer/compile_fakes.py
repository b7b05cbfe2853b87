"""A graph big enough to compile in the background and a 'native' program whose results
are recognisable, shared by the tests of the background-compile machinery."""
import numpy as np

import tracer.numpy as tnp


def chain(x, lib=tnp):
    for i in range(8):
        x = lib.tanh(x * (1.0 + i / 10)) + x * 0.5
    return x


class Sevens:
    """A compiled program that answers 7 everywhere."""

    def __init__(self, graph):
        self.graph = graph

    def run(self, leaves):
        return [np.full(v.aval.shape, 7.0, v.aval.dtype) for v in self.graph.outvars]
