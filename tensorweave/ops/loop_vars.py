"""Stateful values that cross cond/while boundaries as their flow tensor (TensorArray).

An object with `_as_flow()` (the scalar tensor that orders its ops) and `_with_flow(flow)` (the
same object continued from another flow) travels through Switch/Merge/Enter/Exit as that flow.
"""
from __future__ import annotations

from tensorweave.framework import nest


def _is_flow_carrier(x) -> bool:
    return hasattr(x, "_as_flow") and hasattr(x, "_with_flow")


def to_flows(structure):
    """`structure` with every flow carrier replaced by its flow tensor."""
    if not nest.is_nested(structure):
        return structure._as_flow() if _is_flow_carrier(structure) else structure
    flat = [x._as_flow() if _is_flow_carrier(x) else x for x in nest.flatten(structure)]
    return nest.pack_sequence_as(structure, flat)


def from_flows(template, structure):
    """`structure` (tensors) with the carriers of `template` rebuilt around their new flows."""
    if not nest.is_nested(template):
        return template._with_flow(structure) if _is_flow_carrier(template) else structure
    flat = [t._with_flow(v) if _is_flow_carrier(t) else v
            for t, v in zip(nest.flatten(template), nest.flatten(structure))]
    return nest.pack_sequence_as(template, flat)
