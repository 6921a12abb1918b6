"""The fuzz target runs: each malformed model of the corpus goes through it without a finding
(the target itself is ``tests/fuzz/fuzz_models.py``, run with atheris by hand or in a long job).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.fuzz.fuzz_models import MOST_DEPTH, MOST_FUNCTIONS, one_input, structured_model
from tests.malformed_models import CASES, write_all

#: The cases whose model is one file alone, as the fuzz target writes its inputs.
ALONE = sorted(name for name, make in CASES.items() if make().alone)


@pytest.mark.parametrize("case", ALONE)
def test_the_fuzz_target_takes_every_malformed_model(case: str, tmp_path: Path) -> None:
    path = write_all(tmp_path)[case]
    one_input(path.read_bytes())  # raises on a finding


def test_the_fuzz_target_takes_the_shipped_example() -> None:
    from splitops.examples import EXAMPLE_MODEL

    one_input(Path(EXAMPLE_MODEL).read_bytes())


@pytest.mark.parametrize(
    "recipe",
    [
        b"",
        bytes([8, 0, 1, MOST_FUNCTIONS, *[1] * MOST_FUNCTIONS, MOST_DEPTH, *[1] * MOST_DEPTH]),
        bytes([7, 1, 2, 3, 4, 3, 1, 0, 5, 1, 0, 1, 0, 1]),
        bytes([5, 2, 0, 2, 1, 3, 1, 1, 1]),  # chunks of 0: a broken node in every call
        bytes(range(256)),
    ],
    ids=["empty", "deepest", "sizes", "chunks-of-0", "every-byte"],
)
def test_the_fuzz_target_takes_models_of_calls_and_nested_branches(recipe: bytes) -> None:
    model = structured_model(recipe)
    assert model.graph.node  # a model, whatever the bytes
    one_input(recipe)  # raises on a finding


def test_a_recipe_calls_functions_twice_per_level_and_nests_ifs_in_both_branches() -> None:
    levels = [1] * MOST_FUNCTIONS
    model = structured_model(bytes([8, 0, 1, MOST_FUNCTIONS, *levels, 3, 1, 1, 1]))
    calls = [node.op_type for node in model.functions[-1].node]
    assert len(model.functions) == MOST_FUNCTIONS
    assert calls == [model.functions[-2].name] * 2
    top = model.graph.node[0]
    branches = [a.g for a in top.attribute if a.name in ("then_branch", "else_branch")]
    assert top.op_type == "If"
    assert branches[0] == branches[1]
