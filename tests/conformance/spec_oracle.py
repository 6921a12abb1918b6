"""The spec's rules for the sizes of the parts, written again with plain numpy, independently of
splitops: the oracle the conformance cases are checked against, and the base of the fake
runtimes that each break one rule (:func:`run_split_node` with ``rules``).

Nothing here calls splitops: a defect of the planner cannot hide in its own oracle.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from onnx import ModelProto, helper


@dataclass(frozen=True)
class Rules:
    """How a runtime computes the parts; the defaults are the spec's."""

    #: Split-18 num_outputs: "ceil" (the spec's) or "balanced" (numpy's array_split).
    num_outputs: str = "ceil"
    #: SplitToSequence: drop the axis of each part of length 1 when keepdims=0, even though
    #: split is given.
    squeeze_despite_split: bool = False
    #: SplitToSequence: a scalar split of 1 is a given split, which keeps the axis whatever
    #: keepdims says (onnx.reference's reading); the spec's, as splitops reads it, is the
    #: default split written out ("a default scalar value of 1 is used"), and keepdims=0
    #: drops the axis there.
    scalar_one_keeps_axis: bool = False
    #: Refuse a Split-18 node that lists fewer outputs than num_outputs.
    refuse_fewer_outputs: bool = False


SPEC = Rules()


class RefusedError(Exception):
    """What a fake runtime raises where it refuses a node."""


def split_sizes(node: Any, inputs: Sequence[np.ndarray], rules: Rules = SPEC) -> list[int]:
    """The sizes of the listed parts of a Split node, by the spec's text."""
    attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    x = inputs[0]
    dim = x.shape[attributes.get("axis", 0) % x.ndim]
    listed = len(node.output)
    if "split" in attributes:
        sizes = list(attributes["split"])
    elif len(inputs) > 1:
        sizes = [int(v) for v in inputs[1]]
    elif "num_outputs" in attributes:
        count = attributes["num_outputs"]
        if rules.refuse_fewer_outputs and listed != count:
            raise RefusedError(f"{listed} outputs listed, num_outputs is {count}")
        if rules.num_outputs == "balanced":
            sizes = [len(part) for part in np.array_split(np.arange(dim), count)]
        else:
            chunk = -(-dim // count)  # ceil(dim / count)
            sizes = [chunk] * (count - 1) + [dim - chunk * (count - 1)]
    else:
        sizes = [dim // listed] * listed
    return sizes[:listed]


def sequence_sizes(x: np.ndarray, axis: int, split: np.ndarray | None) -> list[int]:
    """The sizes of SplitToSequence's parts: chunks of 1 by default, chunks of a scalar split
    with a smaller last one, or the 1-d split's sizes."""
    dim = x.shape[axis]
    if split is None:
        return [1] * dim
    if split.ndim == 0:
        chunk = int(split)
        return [chunk] * (dim // chunk) + ([dim % chunk] if dim % chunk else [])
    return [int(v) for v in split]


def cut(x: np.ndarray, axis: int, sizes: Sequence[int]) -> list[np.ndarray]:
    """``x`` sliced along ``axis`` into consecutive parts of ``sizes``."""
    parts, start = [], 0
    for size in sizes:
        index = [slice(None)] * x.ndim
        index[axis] = slice(start, start + size)
        parts.append(x[tuple(index)].copy())
        start += size
    return parts


def run_split_node(node: Any, inputs: Sequence[np.ndarray], rules: Rules = SPEC) -> list[Any]:
    """What a runtime with ``rules`` gives for one Split or SplitToSequence node."""
    attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    x = inputs[0]
    axis = attributes.get("axis", 0) % x.ndim
    if node.op_type == "Split":
        return cut(x, axis, split_sizes(node, inputs, rules))
    split = inputs[1] if len(inputs) > 1 else None
    parts = cut(x, axis, sequence_sizes(x, axis, split))
    default = split is None or (
        split.ndim == 0 and int(split) == 1 and not rules.scalar_one_keeps_axis
    )
    squeeze = attributes.get("keepdims", 1) == 0 and (default or rules.squeeze_despite_split)
    if squeeze:  # a part longer than 1 cannot drop the axis: a wrong runtime keeps it there
        parts = [np.squeeze(part, axis) if part.shape[axis] == 1 else part for part in parts]
    return [parts]


def run_model(model: ModelProto, feeds: dict[str, np.ndarray], rules: Rules = SPEC) -> list[Any]:
    """A one-node model run by a fake runtime with ``rules``."""
    (node,) = model.graph.node
    return run_split_node(node, [feeds[name] for name in node.input], rules)
