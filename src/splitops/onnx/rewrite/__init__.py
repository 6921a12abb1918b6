"""Convert and lower: ``convert_model`` moves Split nodes to another opset (``_convert``),
``lower_model`` rewrites them into forms every runtime computes alike (``_lower``, with
``_graph_sizes`` for sizes computed in the graph, and ``_ir_pass`` for the same as an onnx-ir
pass), and both keep one contract (``_contract``).
Each plans its edits on the one reading of the model (:mod:`splitops.onnx.model`) and checks
its result before anyone sees it, as onnx-ir's passes state ``requires`` and ``ensures``; the
rule for a node comes from one place, as onnxscript's optimizer keeps one evaluator per op.
"""
