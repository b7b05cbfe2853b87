"""Checkpoint policies, as `jax.checkpoint_policies` (`tracer.checkpoint_name` in
tracer/lax/remat.py names values for them).

A policy decides, node by node of a checkpointed function, whether the forward pass
saves the node's outputs for the backward (True) or the backward recomputes them
(False). It is called as JAX calls one: `policy(prim, *in_avals, **attrs)`, where
`prim.name` is the node's kernel (`"matmul"`, `"checkpoint_name"` with attr `name`, ...)
and each aval has `.shape` and `.dtype`; a callable of that form is a policy too.

Absent from JAX's list: the offloading policies (`offload_dot_with_no_batch_dims`,
`save_and_offload_only_these_names`) move residuals to a second memory space, and a
CPU-only program has one; `save_anything_except_these_names` is absent because JAX's own
ignores its names (it is `everything_saveable`).
"""
from dataclasses import dataclass

import registry

__all__ = ["everything_saveable", "nothing_saveable", "dots_saveable", "checkpoint_dots",
           "dots_with_no_batch_dims_saveable", "checkpoint_dots_with_no_batch_dims",
           "save_any_names_but_these", "save_only_these_names", "save_from_both_policies"]


def everything_saveable(*_, **__):
    """Save every intermediate: the backward recomputes nothing (as without checkpoint)."""
    return True


def nothing_saveable(*_, **__):
    """Save nothing: the backward recomputes every intermediate (checkpoint's default)."""
    return False


@dataclass(frozen=True)
class DotsSaveable:
    """Save the outputs of contractions (matmul and conv, as JAX saves dot_general's and
    conv_general_dilated's); with `only_if_no_batch_dims`, only those of 2-D by 2-D
    matmuls (JAX's dot_general without batch dimensions)."""
    only_if_no_batch_dims: bool

    def __call__(self, prim, *avals, **attrs):
        if registry.family(prim.name) != "contraction":
            return False
        return not self.only_if_no_batch_dims or all(len(a.shape) <= 2 for a in avals)


checkpoint_dots = dots_saveable = DotsSaveable(False)
checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable = DotsSaveable(True)


@dataclass(frozen=True)
class SaveOnlyTheseNames:
    names: frozenset

    def __call__(self, prim, *avals, **attrs):
        return prim.name == "checkpoint_name" and attrs["name"] in self.names


@dataclass(frozen=True)
class SaveAnyNamesButThese:
    names: frozenset

    def __call__(self, prim, *avals, **attrs):
        return prim.name == "checkpoint_name" and attrs["name"] not in self.names


def save_only_these_names(*names):
    """Save only values named by `checkpoint_name` with one of `names`."""
    return SaveOnlyTheseNames(frozenset(names))


def save_any_names_but_these(*names):
    """Save only values named by `checkpoint_name`, except those named one of `names`."""
    return SaveAnyNamesButThese(frozenset(names))


@dataclass(frozen=True)
class SaveFromBoth:
    first: object
    second: object

    def __call__(self, prim, *avals, **attrs):
        return bool(self.first(prim, *avals, **attrs)) or bool(
            self.second(prim, *avals, **attrs))


def save_from_both_policies(policy_1, policy_2):
    """Save what either policy saves."""
    return SaveFromBoth(policy_1, policy_2)
