"""The command stands on the ONNX layer's face: ``cli.py`` imports the layer's public names
from :mod:`splitops.onnx`, never one of its private modules, so that the layer may move its
modules without the command noticing."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import splitops.conformance
import splitops.onnx
from splitops import cli

#: The splitops modules the command may import from.
ALLOWED = {
    "splitops",
    "splitops.onnx",
    "splitops.core",
    "splitops.arrays",
    "splitops._files",
    "splitops.examples",
    "splitops.backend",
    "splitops.conformance",
}


def _imports() -> list[tuple[int, str, list[str]]]:
    """Each import of ``cli.py``: its line, the absolute module, and the names it takes."""
    tree = ast.parse(Path(cli.__file__).read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                package = "splitops.cli".rsplit(".", node.level)[0]
                module = f"{package}.{node.module}" if node.module else package
            else:
                module = node.module or ""
            found.append((node.lineno, module, [alias.name for alias in node.names]))
        elif isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name, []) for alias in node.names)
    return found


SPLITOPS_IMPORTS = [
    (line, module, names)
    for line, module, names in _imports()
    if module == "splitops" or module.startswith("splitops.")
]


def test_the_command_imports_splitops_modules() -> None:
    assert {module for _, module, _ in SPLITOPS_IMPORTS} >= {"splitops.onnx", "splitops.core"}


@pytest.mark.parametrize(("line", "module", "names"), SPLITOPS_IMPORTS, ids=str)
def test_the_command_imports_no_private_module_of_the_onnx_layer(
    line: int, module: str, names: list[str]
) -> None:
    assert module in ALLOWED, f"cli.py:{line} imports {module}"
    if module == "splitops":
        # `from . import onnx` would reach past the face into its sub-packages by attribute.
        assert "onnx" not in names, f"cli.py:{line} imports splitops.onnx as a package"
    if module == "splitops.onnx":
        private = sorted(set(names) - set(splitops.onnx.__all__))
        assert not private, f"cli.py:{line} imports {private}, not in splitops.onnx.__all__"
    if module == "splitops.conformance":
        private = sorted(set(names) - set(splitops.conformance.__all__))
        assert not private, f"cli.py:{line} imports {private}, not in its __all__"
