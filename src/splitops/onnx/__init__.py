"""The ONNX layer: Split and SplitToSequence nodes read from protobufs, and the model tools.

It adapts protobufs to :mod:`splitops.core` and runs nodes with :mod:`splitops.arrays`;
nothing below it imports onnx (an import-linter contract checks it). Importing this package
imports nothing: each tool loads when it is first used, so that a command loads only what
it needs. Its modules:

- ``_types``: ``TypeProto`` and element types; ``_node``: a ``NodeProto`` read by its
  version's schema, and ``run_node``; ``_graphs``: one walker over graphs, subgraphs and
  functions, and constant values;
- ``_reference``: op classes for onnx.reference; ``backend``: an ``onnx.backend`` for whole
  models;
- ``_inference`` (with ``_symbolic``, dim_param text as sympy, and ``_values``, the values of
  shape computations followed): ``infer_shapes``;
  ``_check`` (with ``_diagnostics``): ``check_model``; ``_convert``: ``convert_model``;
  ``_lower`` (with ``_graph_sizes``, sizes computed in a graph): ``lower_model``; both over
  ``_editing``, the edits of a model; ``_io``: loading models safely.
"""
