"""A coverage-guided fuzz target (atheris) for what reads model files: load, then check,
infer, convert and prepare.

Every input must end in a model that the tools handle, or in an exception splitops raises on
purpose (:class:`splitops.SplitopsError`, or ``ImportError`` for a missing extra): any other
exception is a finding, and atheris stops on it with the input that caused it.

Run it (``pip install -e ".[fuzz]"`` installs atheris), for five minutes, from the repository
root, seeded with the malformed models of ``tests/malformed_models.py``::

    python tests/malformed_models.py /tmp/fuzz-seeds
    mkdir -p /tmp/fuzz-corpus
    python tests/fuzz/fuzz_models.py /tmp/fuzz-corpus /tmp/fuzz-seeds -max_total_time=300

This file is not a test module (pytest does not collect it); ``tests/cli/test_fuzz_target.py``
runs its one-input function on the seeds, so that it cannot rot.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import warnings
from pathlib import Path

import splitops
from splitops import SplitopsError


def one_input(data: bytes) -> None:
    """Write ``data`` as a model file and put it through every tool that reads models."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzzed.onnx"
        path.write_bytes(data)
        try:
            model = splitops.load_model(path)
        except SplitopsError:
            return
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for tool in (
                splitops.check_model,
                splitops.infer_shapes,
                lambda m: splitops.convert_model(m, 13),
                splitops.backend.prepare,
            ):
                with contextlib.suppress(SplitopsError, ImportError):
                    tool(model)


def main() -> None:
    import atheris

    atheris.instrument_all()
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
