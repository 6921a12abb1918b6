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
#: runtime in its worker (``check --portability`` included). Each group is named, with what
#: it does, as it begins: the progress figure moves slowly while they run (minutes, on two
#: cores), and the run must not look hung.
RUN_FIRST = {
    "tests/perf/": "the benchmarks and memory measurements, in processes of their own",
    "tests/cli/test_hostile_models.py::": "hostile files through every command, each in a "
    "process limited to 4 GiB",
    "tests/onnx/run/test_portability.py::": "nodes probed on every installed runtime, each in "
    "its worker process",
    "tests/onnx/rewrite/test_lower_targets.py::": "lowered models run on every installed "
    "runtime, each in its worker process",
    "tests/cli/test_lower_command.py::": "splitops lower and run as commands, in processes of "
    "their own",
    "tests/cli/test_real_use.py::": "the commands as a user runs them, in processes of their own",
}


def _group(nodeid: str) -> int:
    """The place of the first-run group ``nodeid`` belongs to, or ``len(RUN_FIRST)``."""
    return next(
        (k for k, prefix in enumerate(RUN_FIRST) if nodeid.startswith(prefix)), len(RUN_FIRST)
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: _group(item.nodeid))
    counts = [0] * (len(RUN_FIRST) + 1)
    for item in items:
        counts[_group(item.nodeid)] += 1
    config.stash[_COUNTS] = counts
    config.stash[_SHOWN] = -1


_COUNTS = pytest.StashKey[list[int]]()
_SHOWN = pytest.StashKey[int]()


def pytest_collection_finish(session: pytest.Session) -> None:
    counts = session.config.stash.get(_COUNTS, [])
    first = sum(counts[:-1])
    if first and counts[-1]:
        _say(
            session.config,
            f"{first} tests that run in processes of their own come first (each group is named "
            f"as it begins): the progress figure moves slowly while they run; the other "
            f"{counts[-1]} follow",
        )


@pytest.hookimpl(tryfirst=True)  # before the reporter names the test's file
def pytest_runtest_logstart(nodeid: str, location: tuple[str, int | None, str]) -> None:
    """Name each first-run group as its first test begins, and the rest after them."""
    config = _CONFIG[0] if _CONFIG else None
    if config is None or _COUNTS not in config.stash:
        return
    group = _group(nodeid)
    if group == config.stash[_SHOWN]:
        return
    config.stash[_SHOWN] = group
    count = config.stash[_COUNTS][group]
    if group < len(RUN_FIRST):
        prefix, what = list(RUN_FIRST.items())[group]
        _say(config, f"{prefix.rstrip(':')}: {count} tests, {what}")
    elif sum(config.stash[_COUNTS][:-1]):
        _say(config, f"the other {count} tests")


_CONFIG: list[pytest.Config] = []


def pytest_configure(config: pytest.Config) -> None:
    _CONFIG[:] = [config]


def _say(config: pytest.Config, line: str) -> None:
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return
    # After a line of progress dots (-q), on a line of its own.
    writer = getattr(reporter, "_tw", None)
    if getattr(writer, "width_of_current_line", 0):
        reporter.write("\n")
    reporter.write_line(f"[{line}]")


def pytest_report_header(config: pytest.Config) -> list[str]:
    lines = []
    for name in MISSING:
        modules = ", ".join(OPTIONAL_MODULES[name])
        lines.append(f"{name} is not installed: the doctests of {modules} are left out")
    return lines


@pytest.fixture(scope="session")
def exported_corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The exported-model corpus (:mod:`harness.corpus`), by file name: exported once per
    run (about 40 s), or reused from ``$SPLITOPS_CORPUS_DIR`` when that folder is up to date.
    Tests that use it skip where torch or transformers is not installed."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from harness import corpus

    folder = os.environ.get("SPLITOPS_CORPUS_DIR") or tmp_path_factory.mktemp("corpus")
    return {path.name: path for path in corpus.export_all(folder)}
