"""The ONNX layer's face: :mod:`splitops.onnx` exports its public names, each loaded from its
private module when first used, so that importing the package imports no onnx."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import splitops.onnx

SRC = Path(__file__).resolve().parents[2] / "src"


def test_importing_the_onnx_layer_imports_neither_onnx_nor_numpy() -> None:
    code = (
        f"import sys; sys.path.insert(0, {str(SRC)!r}); import splitops.onnx; "
        "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert {"onnx", "numpy", "sympy", "onnxruntime"}.isdisjoint(done.stdout.split())


@pytest.mark.parametrize("name", splitops.onnx.__all__)
def test_every_exported_name_of_the_onnx_layer_resolves(name: str) -> None:
    value = getattr(splitops.onnx, name)
    assert getattr(value, "__name__", name) == name
    assert name in dir(splitops.onnx)


def test_an_unknown_name_of_the_onnx_layer_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        _ = splitops.onnx.nothing


def test_splitops_takes_its_onnx_names_from_the_face() -> None:
    import splitops

    for name in ("load_model", "check_model", "infer_shapes", "Diagnostic", "run_node"):
        assert getattr(splitops, name) is getattr(splitops.onnx, name)
