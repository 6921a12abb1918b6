"""The portability and export harness: the evidence the lowering's forms cite.

What each runtime computes for every kind of Split and SplitToSequence, and for real model
exports, as exported and lowered for each target (``docs/portability.md``), and the exported
models that tests and benchmarks read. Run from the root of a clone; ``benchmarks/`` holds
the commands that write the documents, and the timing::

    python -m benchmarks.portability   # the kinds of node, with the cost of lowering
    python -m benchmarks.exports       # real exports, their section of portability.md
    python -m benchmarks.corpus --out /tmp/corpus

Its modules, each typed (``mypy --strict``) and placed by import-linter's contracts:

- :mod:`harness.portability`: the kinds of node and the matrix of every runtime on them;
- :mod:`harness.exports`: real exports (tiny ``transformers`` models, scripted modules with
  their Split-free controls) on every runtime, the failures cut down, the report;
- :mod:`harness.documents`: the sections of a document that each command rewrites;
- :mod:`harness.shapes`: the shapes onnxruntime executes for split outputs, against a dim
  that inference gives;
- :mod:`harness.corpus`: exported models with Split and SplitToSequence nodes (opset 18);
- :mod:`harness.export_models` and :mod:`harness.scripted_models`: the exports, made in
  whatever venv runs them (torch, and an earlier torch's venv too): they import no
  splitops, and torch only where they export.

Importing this package imports nothing, so that a venv with torch alone runs
``python -m harness.export_models``; splitops never imports the harness.
"""
