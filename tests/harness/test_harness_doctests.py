"""The examples in the harness's docstrings run (the harness lies outside the folders whose
modules pytest collects for doctests; its exports need torch, the rest does not)."""

from __future__ import annotations

import doctest
import importlib

import pytest

WITHOUT_TORCH = ["harness.documents", "harness.exports", "harness.portability", "harness.shapes"]
WITH_TORCH = ["harness.corpus", "harness.scripted_models"]


@pytest.mark.parametrize("name", [*WITHOUT_TORCH, *WITH_TORCH])
def test_a_harness_modules_examples_print_what_they_show(name: str) -> None:
    if name in WITH_TORCH:
        pytest.importorskip("torch")
    module = importlib.import_module(name)
    found = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert found.attempted > 0
    assert found.failed == 0
