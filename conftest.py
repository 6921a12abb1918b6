"""Collection settings for the whole repository (the doctests in src/ and the tests in tests/).

The doctests of the torch modules import torch: where torch is not installed they are left
out, and the run's header says so (the torch tests themselves skip with a reason).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

TORCH_MODULES = ["src/splitops/arrays/_torch.py", "src/splitops/arrays/_torch_compile.py"]
HAS_TORCH = importlib.util.find_spec("torch") is not None

collect_ignore = [] if HAS_TORCH else TORCH_MODULES


def pytest_report_header(config: pytest.Config) -> str | None:
    if HAS_TORCH:
        return None
    return f"torch is not installed: the doctests of {', '.join(TORCH_MODULES)} are left out"


@pytest.fixture(scope="session")
def exported_corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The exported-model corpus (:mod:`benchmarks.corpus`), by file name: exported once per
    run (about 40 s), or reused from ``$SPLITOPS_CORPUS_DIR`` when that folder is up to date.
    Tests that use it skip where torch or transformers is not installed."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from benchmarks import corpus

    folder = os.environ.get("SPLITOPS_CORPUS_DIR") or tmp_path_factory.mktemp("corpus")
    return {path.name: path for path in corpus.export_all(folder)}
