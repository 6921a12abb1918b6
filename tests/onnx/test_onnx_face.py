"""The ONNX layer's face: :mod:`splitops.onnx` exports its public names, each loaded from its
private module when first used, so that importing the package imports no onnx, and only
:class:`~splitops.onnx.LowerSplits` needs onnx-ir, an optional library."""

from __future__ import annotations

import importlib.util
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
    assert {"onnx", "numpy", "sympy", "onnxruntime", "onnx_ir"}.isdisjoint(done.stdout.split())


def test_lowering_a_model_imports_no_onnx_ir() -> None:
    code = (
        f"import sys; sys.path.insert(0, {str(SRC)!r}); import splitops, splitops.onnx; "
        "splitops.lower_model, splitops.onnx.lower_model_with_report; "
        "print('onnx_ir' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False"]


def test_without_onnx_ir_the_pass_is_an_import_error_that_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "onnx_ir", None)  # as if it were not installed
    monkeypatch.delitem(sys.modules, "splitops.onnx.rewrite._ir_pass", raising=False)
    monkeypatch.delitem(vars(splitops.onnx), "LowerSplits", raising=False)
    with pytest.raises(ImportError, match="needs onnx-ir: pip install onnx-ir"):
        _ = splitops.onnx.LowerSplits
    assert "LowerSplits" in splitops.onnx.__all__


@pytest.mark.parametrize("name", splitops.onnx.__all__)
def test_every_exported_name_of_the_onnx_layer_resolves(name: str) -> None:
    if name == "LowerSplits" and importlib.util.find_spec("onnx_ir") is None:
        pytest.skip("onnx-ir is not installed: LowerSplits needs it")
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
