"""The fuzz target runs: each malformed model of the corpus goes through it without a finding
(the target itself is ``tests/fuzz/fuzz_models.py``, run with atheris by hand or in a long job).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.fuzz.fuzz_models import one_input
from tests.malformed_models import CASES, write_all

#: The cases whose model is one file alone, as the fuzz target writes its inputs.
ALONE = sorted(name for name, make in CASES.items() if not make().beside)


@pytest.mark.parametrize("case", ALONE)
def test_the_fuzz_target_takes_every_malformed_model(case: str, tmp_path: Path) -> None:
    path = write_all(tmp_path)[case]
    one_input(path.read_bytes())  # raises on a finding


def test_the_fuzz_target_takes_the_shipped_example() -> None:
    from splitops.examples import EXAMPLE_MODEL

    one_input(Path(EXAMPLE_MODEL).read_bytes())
