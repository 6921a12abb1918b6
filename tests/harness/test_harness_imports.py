"""The harness keeps torch optional: its matrices, reports and shapes import neither torch nor
transformers (only the exports do, where they export), and splitops never imports the
harness, so that a user's ``import splitops`` loads none of it."""

from __future__ import annotations

import subprocess
import sys

MODULES = ("harness.documents", "harness.exports", "harness.portability", "harness.shapes")


def _loaded_after(statement: str) -> set[str]:
    code = f"import sys\n{statement}\nprint(' '.join(sorted(sys.modules)))"
    found = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    return set(found.split())


def test_the_harness_imports_neither_torch_nor_transformers() -> None:
    loaded = _loaded_after("\n".join(f"import {module}" for module in MODULES))
    assert set(MODULES) <= loaded
    assert "splitops" in loaded
    assert not {"torch", "transformers"} & loaded


def test_splitops_imports_no_part_of_the_harness() -> None:
    loaded = _loaded_after("import splitops, splitops.onnx")
    assert "splitops.onnx" in loaded
    assert not {module for module in loaded if module.split(".")[0] == "harness"}
