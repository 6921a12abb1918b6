"""The valid cases as onnx's own node tests: ``export_*`` functions calling ``expect``, in the
files and the style of ``onnx/backend/test/case/node/split.py`` and ``splittosequence.py``,
so that proposing them to onnx is a copy.

The files live in the repository under ``docs/upstream/``, generated from :data:`CASES` by
``python -m splitops.conformance docs/upstream`` (a test asserts they equal what this module
writes now). They are kept out of the package on purpose: onnx's ``Base`` runs every
``export_*`` function of a subclass when the class is defined, adding its tests to onnx's
own list of node tests, so importing them (as pytest's doctest collection imports every
module of ``src``) would change the node suite of whatever process imported splitops.
Cases the spec rejects have no upstream form: ``expect`` needs outputs; nor have cases its
text reads two ways, which onnx must decide first.

Two files beside them are written by hand, and proposed with them, for onnx's CI passes the
tests only with both: ``reference_op_split.py``, a Split-1 for onnx.reference (which has none,
so the three Split-1 tests fail there), and ``backend_test_runner.py``, the runner's
comparison of sequences fixed for 1-d string tensors (which it compares row by row, as if a
row were an output). ``tests/conformance/test_upstream_files.py`` runs the tests through
onnx's own writer and runner on onnx.reference with and without each.

The text is formatted by ruff with the repository's settings, as the rest of the code is.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from onnx import helper

from ..onnx.model import Node
from ..onnx.model.protobuf import attribute_values
from ._cases import CASES, ConformanceCase

__all__ = ["UPSTREAM_FILES", "upstream_sources", "write_upstream"]

#: onnx's file of each operator's node tests, and the class in it.
UPSTREAM_FILES = {
    "Split": ("split.py", "Split"),
    "SplitToSequence": ("splittosequence.py", "SplitToSequence"),
}

#: What each case's name starts with, left out of its function's name (onnx's own functions
#: are ``export_1d_opset13`` in ``class Split``).
_PREFIXES = {"Split": "test_split_", "SplitToSequence": "test_split_to_sequence_"}

_HEAD = '''\
# Copyright (c) ONNX Project Contributors
#
# SPDX-License-Identifier: Apache-2.0
"""{op} node tests written by splitops (``python -m splitops.conformance``) from its
conformance cases; each function's comment says the wrong rule it catches. To propose them,
copy the functions into the class of onnx's ``onnx/backend/test/case/node/{file}``.
"""

from __future__ import annotations

{imports}
import onnx
from onnx.backend.test.case.base import Base
from onnx.backend.test.case.node import expect


class {cls}(Base):
'''


def upstream_sources(cases: Sequence[ConformanceCase] = CASES) -> dict[str, str]:
    """The text of each upstream file, by file name, formatted by ruff."""
    sources = {}
    for op, (file, cls) in UPSTREAM_FILES.items():
        chosen = [case for case in cases if case.op == op and case.valid]
        functions = "\n".join(_function(case) for case in chosen)
        bfloat16 = any(_dtype(case.inputs[0]) == "ml_dtypes.bfloat16" for case in chosen)
        imports = "import ml_dtypes\nimport numpy as np\n" if bfloat16 else "import numpy as np\n"
        text = _HEAD.format(op=op, file=file, imports=imports, cls=cls) + functions
        sources[file] = _formatted(text, file)
    return sources


def write_upstream(folder: Path, cases: Sequence[ConformanceCase] = CASES) -> list[Path]:
    """Write the upstream files into ``folder``; return their paths."""
    from .._files import replacing

    written = []
    for file, text in upstream_sources(cases).items():
        with replacing(Path(folder) / file) as stream:
            stream.write(text.encode())
        written.append(Path(folder) / file)
    return written


def _function(case: ConformanceCase) -> str:
    assert case.outputs is not None
    node = Node.alone(case.node)
    names = ["node_input", "split"][: len(case.inputs)]
    lines = [
        "@staticmethod",
        f"def export_{case.name.removeprefix(_PREFIXES[case.op])}() -> None:",
        *(f"    # {line}" for line in textwrap.wrap(case.why + ".", 84)),
    ]
    lines += [
        f"    {name} = {_array(value)}" for name, value in zip(names, case.inputs, strict=True)
    ]
    attributes = "".join(
        f", {name}={value!r}" for name, value in attribute_values(case.node).items()
    )
    lines += [
        "",
        f"    node = onnx.helper.make_node({node.op_type!r}, inputs={list(node.input_names)!r}, "
        f"outputs={list(node.output_names)!r}{attributes})",
        "",
        f"    expected_outputs = [{', '.join(map(_output, case.outputs))}]",
        "    expect(",
        "        node,",
        f"        inputs=[{', '.join(names)}],",
        "        outputs=expected_outputs,",
        f"        name={case.name!r},",
        f"        opset_imports=[onnx.helper.make_opsetid('', {case.opset})],",
        *(f"        {key}={value!r}," for key, value in case.model_arguments().items()),
        *_empty_sequence_type(case),
        "    )",
    ]
    return textwrap.indent("\n".join(lines), "    ") + "\n"


def _empty_sequence_type(case: ConformanceCase) -> list[str]:
    """``expect`` types a sequence by its first element; an empty one needs its type given."""
    assert case.outputs is not None
    if not any(isinstance(output, tuple) and not output for output in case.outputs):
        return []
    element = helper.tensor_dtype_to_string(helper.np_dtype_to_tensor_dtype(case.inputs[0].dtype))
    return [
        "        output_type_protos=[onnx.helper.make_sequence_type_proto("
        f"onnx.helper.make_tensor_type_proto(onnx.{element}, None))],"
    ]


def _output(value: Any) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(map(_array, value)) + "]"
    return _array(value)


def _dtype(value: np.ndarray[Any, Any]) -> str:
    if value.dtype == object:
        return "object"
    if value.dtype.name == "bfloat16":
        return "ml_dtypes.bfloat16"
    return "bool" if value.dtype == np.bool_ else f"np.{value.dtype.name}"


def _array(value: np.ndarray[Any, Any]) -> str:
    """``np.array(<nested list>, dtype=...)``, reshaped where the list cannot say the shape
    (an empty array of rank 2 or more)."""
    dtype = _dtype(value)
    plain = value.astype(np.float64) if dtype == "ml_dtypes.bfloat16" else value
    nested = plain.tolist()
    text = f"np.array({nested!r}, dtype={dtype})"
    if np.array(nested).shape != value.shape:
        text += f".reshape({value.shape!r})"
    return text


def _formatted(text: str, file: str) -> str:
    """``text`` as ruff formats it with the repository's settings (the test extra has ruff)."""
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--stdin-filename", f"docs/upstream/{file}", "-"],
        input=text,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        raise RuntimeError(f"ruff could not format the upstream {file}: {done.stderr.strip()}")
    return done.stdout
