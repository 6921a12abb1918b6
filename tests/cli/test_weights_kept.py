"""``splitops lower`` and ``splitops convert`` on models whose weights lie in files: the
weights stay there (beside the output, at the same locations), the result computes what the
original computes on onnxruntime (run live), and a model of many gigabytes of weights is
rewritten under the default limits within an address space far smaller than its weights."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto
from tests.model_building import save_with_external_data, sparse_weights_model, weighted_model
from tests.processes import GUARD_SECONDS

from .conftest import SRC, Cli, one_error_line

ort = pytest.importorskip("onnxruntime")

COMMANDS = {
    "lower": ["lower", "in/model.onnx", "-o", "out/model.onnx"],
    "convert": ["convert", "in/model.onnx", "--opset", "13", "-o", "out/model.onnx"],
}


def _outputs(model: str | bytes) -> list[np.ndarray]:
    x = np.random.default_rng(1).standard_normal((2, 64)).astype(np.float32)
    return list(ort.InferenceSession(model).run(None, {"x": x}))


def _external_locations(path: Path) -> dict[str, str]:
    model = onnx.load(path, load_external_data=False)
    return {
        tensor.name: {e.key: e.value for e in tensor.external_data}["location"]
        for tensor in model.graph.initializer
        if tensor.data_location == TensorProto.EXTERNAL
    }


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_the_weights_stay_in_their_file_beside_the_output(
    cli: Cli, tmp_path: Path, command: str
) -> None:
    save_with_external_data(weighted_model(), tmp_path / "in")
    done = cli(*COMMANDS[command])
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["model.onnx", "weights.bin"]
    assert _external_locations(tmp_path / "out" / "model.onnx") == {"w": "weights.bin"}
    assert (tmp_path / "out" / "weights.bin").read_bytes() == (
        tmp_path / "in" / "weights.bin"
    ).read_bytes()
    want = _outputs(weighted_model().SerializeToString())
    for got, expected in zip(_outputs(str(tmp_path / "out" / "model.onnx")), want, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-6)


#: Runs the command of argv[2:] in a process whose address space is limited to argv[1] bytes.
_LIMITED = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[1]), int(sys.argv[1])))
from splitops.cli import main
sys.exit(main(sys.argv[2:]))
"""


def _limited(tmp_path: Path, address_space: int, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    env.setdefault("OMP_NUM_THREADS", "1")
    return subprocess.run(
        [sys.executable, "-c", _LIMITED, str(address_space), *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=GUARD_SECONDS,
        check=False,
    )


def test_six_gib_of_weights_lower_and_convert_in_one_gib_of_address_space(
    tmp_path: Path,
) -> None:
    """Over the default max_external_bytes of 4 GiB, and six times the address space the
    process may map: reading the weights would be refused, or fail for memory."""
    pytest.importorskip("resource", reason="memory limits need the resource module")
    sparse_weights_model(tmp_path, 6)
    lowered = _limited(tmp_path, 2**30, "lower", "huge.onnx", "-o", "lowered.onnx")
    assert lowered.returncode == 0, lowered.stderr
    assert "lowered 1 Split/SplitToSequence node(s)" in lowered.stderr
    converted = _limited(tmp_path, 2**30, "convert", "huge.onnx", "--opset", "13", "-o", "c.onnx")
    assert converted.returncode == 0, converted.stderr
    for output in ("lowered.onnx", "c.onnx"):
        assert _external_locations(tmp_path / output) == {"w": "huge.bin"}
    checked = _limited(tmp_path, 2**30, "check", "lowered.onnx")
    assert checked.returncode == 0, checked.stderr


def test_a_missing_data_file_is_one_error_line_and_nothing_is_written(
    cli: Cli, tmp_path: Path
) -> None:
    save_with_external_data(weighted_model(), tmp_path / "in")
    (tmp_path / "in" / "weights.bin").unlink()
    for command in COMMANDS.values():
        done = cli(*command)
        assert done.returncode == 2
        assert "which does not exist beside the model" in one_error_line(done)
    assert not (tmp_path / "out").exists()
