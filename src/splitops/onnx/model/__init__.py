"""Reading a model once: its scopes, values, types and constants (``_view``, over the walk of
``_walk``), its element types (``_types``), a Split node read by its version (``_node``), the
edits a rewrite plans (``_edits``), safe loading and saving (``_io``), and text for people
(``_describe``). Every other sub-package stands on this one reading, as onnx-ir's passes
stand on one ``Value`` that knows its producer, its uses and its ``const_value``: no tool
keeps a name-keyed table of its own that could disagree with ONNX's scoping.
"""
