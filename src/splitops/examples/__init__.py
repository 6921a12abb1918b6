"""A small model shipped with splitops, so that ``splitops run`` shows something at once.

``split_tour.onnx`` (opset 18) takes ``x`` of shape ``[batch, 7]`` and cuts it three ways:
Split-18 into four parts by ``num_outputs`` (2, 2, 2, 1: the last one smaller), Split by
explicit sizes (3, 4), and SplitToSequence of the second part into chunks of 3 (3, 1).
Rebuild it with ``python -m splitops.examples.build``.

>>> EXAMPLE_MODEL.name
'split_tour.onnx'
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["EXAMPLE_MODEL"]

#: The example model's path inside the installed package.
EXAMPLE_MODEL = Path(__file__).with_name("split_tour.onnx")
