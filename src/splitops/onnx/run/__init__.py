"""Running models: the engines (op classes for onnx.reference in ``_reference``, onnxruntime
in ``_ort``), the ``onnx.backend`` over them (``backend``, public as :mod:`splitops.backend`),
the inputs a model is fed and the ``.npy`` files a run reads and writes (``_feeds``), and the
portability probes that run each node on the installed runtimes (``_portability``). All of
them run nodes through the one reading of a node (:mod:`splitops.onnx.model`), so that
every engine computes what the planner says.
"""
