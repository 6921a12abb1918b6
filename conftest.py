"""Collection settings for the whole repository (the doctests in src/ and the tests in tests/).

The doctests of the torch, jax and cupy kernels import their library, and those of the onnx-ir
pass onnx-ir: where the library is not installed they are left out, and the run's header says
so (the tests themselves skip with a reason).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

#: The modules that import an optional library, by the library.
OPTIONAL_MODULES = {
    "torch": ["src/splitops/arrays/_torch.py", "src/splitops/arrays/_torch_compile.py"],
    "jax": ["src/splitops/arrays/_jax.py"],
    "cupy": ["src/splitops/arrays/_cupy.py"],
    "onnx_ir": ["src/splitops/onnx/rewrite/_ir_pass.py"],
}
MISSING = [name for name in OPTIONAL_MODULES if importlib.util.find_spec(name) is None]

collect_ignore = [module for name in MISSING for module in OPTIONAL_MODULES[name]]


#: Tests whose work runs in processes of their own run first, while this process is still
#: lean: their peaks add to its own, which grows as the suite imports torch, jax and
#: onnxruntime, and CI holds the sum to 2 GB. Those measure memory or run the benchmarks
#: (``tests/perf``), run hostile files under a 4 GiB limit each, or run models on every
#: runtime in its worker (``check --portability`` included).
RUN_FIRST = (
    "tests/perf/",
    "tests/cli/test_hostile_models.py::",
    "tests/onnx/run/test_portability.py::",
    "tests/onnx/rewrite/test_lower_targets.py::",
    "tests/cli/test_lower_command.py::",
    "tests/cli/test_real_use.py::",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(
        key=lambda item: next(
            (k for k, prefix in enumerate(RUN_FIRST) if item.nodeid.startswith(prefix)),
            len(RUN_FIRST),
        )
    )


def pytest_report_header(config: pytest.Config) -> list[str]:
    lines = []
    for name in MISSING:
        modules = ", ".join(OPTIONAL_MODULES[name])
        lines.append(f"{name} is not installed: the doctests of {modules} are left out")
    return lines


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
