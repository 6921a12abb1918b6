"""Collection settings for the whole repository (the doctests in src/ and the tests in tests/).

The doctests of the torch modules import torch: where torch is not installed they are left
out, and the run's header says so (the torch tests themselves skip with a reason).
"""

from __future__ import annotations

import importlib.util

import pytest

TORCH_MODULES = ["src/splitops/arrays/_torch.py", "src/splitops/arrays/_torch_compile.py"]
HAS_TORCH = importlib.util.find_spec("torch") is not None

collect_ignore = [] if HAS_TORCH else TORCH_MODULES


def pytest_report_header(config: pytest.Config) -> str | None:
    if HAS_TORCH:
        return None
    return f"torch is not installed: the doctests of {', '.join(TORCH_MODULES)} are left out"
