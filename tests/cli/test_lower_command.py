"""``splitops lower``, ``splitops check --portability`` and ``splitops run --engine``, as a
user runs them: exit codes, what is printed, what is written (and never half written)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import numpy as np
import onnx
import pytest
from onnx import ModelProto, TensorProto, helper
from tests.processes import GUARD_SECONDS

import splitops
from splitops.cli import build_parser, main
from splitops.onnx.model import _weights as model_weights
from splitops.onnx.rewrite._lower import TARGETS

from .conftest import Cli, make_model

ort = pytest.importorskip("onnxruntime")

F = TensorProto.FLOAT
ErrorLine = Callable[[subprocess.CompletedProcess[str]], str]


def fewer_outputs() -> ModelProto:
    """Split-18 into num_outputs=4 listing two outputs, on a runtime axis: onnxruntime 1.31
    cuts two halves, 1.32 refuses the node; the spec gives two quarters."""
    node = helper.make_node("Split", ["x"], ["a", "b"], axis=0, num_outputs=4, name="fewer")
    return make_model([node], {"x": (F, ["N"])}, ["a", "b"], opset=18)


def with_sequence_output() -> ModelProto:
    node = helper.make_node("SplitToSequence", ["x"], ["seq"], axis=0, name="rows")
    return make_model([node], {"x": (F, ["N", 2])}, ["seq"], opset=11)


def test_lower_writes_a_model_onnxruntime_runs_as_the_spec_says(cli: Cli, tmp_path: Path) -> None:
    onnx.save(fewer_outputs(), tmp_path / "fewer.onnx")
    done = cli("lower", "fewer.onnx", "-o", "fewer.low.onnx", "--target", "onnxruntime")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "main/fewer (Split-18) rewritten: num_outputs=4 -> split computed in the graph"
    ]
    assert "wrote fewer.low.onnx" in done.stderr
    lowered = onnx.load(tmp_path / "fewer.low.onnx")
    onnx.checker.check_model(lowered, full_check=True)
    x = np.arange(8, dtype=np.float32)
    expected = splitops.run_node(fewer_outputs().graph.node[0], [x], opset=18)
    got = ort.InferenceSession(lowered.SerializeToString()).run(None, {"x": x})
    assert [g.tolist() for g in got] == [e.tolist() for e in expected]


def loop_of_sequence_inserts() -> ModelProto:
    """torch's tensor_split of ``x`` by indices: a Loop of two trips inserting a Slice of
    constant bounds (``x[i:i + 1]``) into a sequence, read by ConcatFromSequence, and a Split
    beside it."""
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Gather", ["starts", "i"], ["at"], axis=0),
            helper.make_node("Add", ["at", "one"], ["end"]),
            helper.make_node("Slice", ["x", "at", "end"], ["part"]),
            helper.make_node("SequenceInsert", ["seq_in", "part"], ["seq_out"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            helper.make_tensor_sequence_value_info("seq_in", F, None),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_sequence_value_info("seq_out", F, None),
        ],
    )
    nodes = [
        helper.make_node("SequenceEmpty", [], ["empty"], dtype=F),
        helper.make_node("Loop", ["trips", "go", "empty"], ["parts"], body=body, name="loop"),
        helper.make_node("ConcatFromSequence", ["parts"], ["y"], axis=0),
        helper.make_node("Split", ["x"], ["a", "b"], axis=0, num_outputs=2, name="halves"),
    ]
    constants = {"trips": np.array(2), "go": np.array(True), "starts": [[0], [1]], "one": [1]}
    return make_model(nodes, {"x": (F, [4])}, ["y", "a", "b"], opset=18, initializers=constants)


def test_lower_counts_split_nodes_and_unrolled_loops_apart(cli: Cli, tmp_path: Path) -> None:
    """The summary counts the Split/SplitToSequence nodes, and the Loops of SequenceInsert
    that a target without sequences unrolls, each as what it is."""
    onnx.save(loop_of_sequence_inserts(), tmp_path / "loop.onnx")
    done = cli("lower", "loop.onnx", "-o", "out.onnx", "--target", "no-sequences")
    assert done.returncode == 0, done.stderr
    assert [line.split(" (")[0] for line in done.stdout.splitlines()] == [
        "main/halves",
        "main/loop",
    ]
    assert (
        "lowered 1 Split/SplitToSequence node(s) and 1 Loop(s) of SequenceInsert for target "
        "no-sequences (2 rewritten, 0 removed, 0 kept, 0 unchanged)"
    ) in done.stderr
    # onnxruntime runs the Loop as it is; the default target, portable, unrolls it too.
    kept = cli("lower", "loop.onnx", "-o", "out.onnx", "--target", "onnxruntime")
    assert "lowered 1 Split/SplitToSequence node(s) for target onnxruntime (" in kept.stderr
    plain = cli("lower", "loop.onnx", "-o", "out.onnx")
    assert "and 1 Loop(s) of SequenceInsert for target portable" in plain.stderr


def test_lower_prints_what_became_of_each_node_as_json(cli: Cli, tmp_path: Path) -> None:
    onnx.save(fewer_outputs(), tmp_path / "fewer.onnx")
    done = cli("lower", "fewer.onnx", "-o", "out.onnx", "--json")
    assert done.returncode == 0, done.stderr
    (row,) = json.loads(done.stdout)
    assert set(row) == {"graph", "node", "op", "opset", "outcome", "detail", "squeezed"}
    assert (row["node"], row["outcome"], row["squeezed"]) == ("fewer", "rewritten", False)


def test_lower_reports_invalid_nodes_as_check_does_and_writes_nothing(
    cli: Cli, broken_model: Path, tmp_path: Path
) -> None:
    checked = cli("check", broken_model)
    lowered = cli("lower", broken_model, "-o", "out.onnx")
    assert lowered.returncode == checked.returncode == 1
    assert lowered.stdout == checked.stdout
    assert "nothing written" in lowered.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.onnx"]


def test_lower_without_sequences_names_the_node_in_one_line(
    cli: Cli, tmp_path: Path, error_line: ErrorLine
) -> None:
    onnx.save(with_sequence_output(), tmp_path / "seq.onnx")
    done = cli("lower", "seq.onnx", "-o", "out.onnx", "--target", "no-sequences")
    assert done.returncode == 1
    line = error_line(done)
    assert "'rows' (SplitToSequence)" in line
    assert "output of main" in line
    assert not (tmp_path / "out.onnx").exists()
    kept = cli("lower", "seq.onnx", "-o", "out.onnx")
    assert kept.returncode == 0, kept.stderr
    assert "kept" in kept.stdout


def test_lower_for_onnx2torch_refuses_control_flow_in_one_line(
    cli: Cli, tmp_path: Path, error_line: ErrorLine
) -> None:
    """onnx2torch converts no If: its target refuses the model (exit 1, the If named),
    where another target lowers the Splits in its branches."""
    branches = [
        helper.make_graph(
            [helper.make_node("Split", ["x"], names, axis=0, num_outputs=3)],
            branch,
            [],
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, [None]) for n in names],
        )
        for branch, names in (("then", ["a", "b", "c"]), ("else", ["d", "e", "f"]))
    ]
    choose = helper.make_node(
        "If", ["go"], ["p", "q", "r"], then_branch=branches[0], else_branch=branches[1]
    )
    choose.name = "pick"
    graph = helper.make_graph(
        [choose],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [7])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [None]) for n in "pqr"],
        [onnx.numpy_helper.from_array(np.array(True), "go")],
    )
    onnx.save(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), tmp_path / "if.onnx"
    )
    done = cli("lower", "if.onnx", "-o", "out.onnx", "--target", "onnx2torch")
    assert done.returncode == 1
    line = error_line(done)
    assert "If 'pick' in main" in line
    assert "target 'onnx2torch' cannot run" in line
    assert not (tmp_path / "out.onnx").exists()
    lowered = cli("lower", "if.onnx", "-o", "out.onnx", "--target", "tinygrad")
    assert lowered.returncode == 0, lowered.stderr
    assert lowered.stdout.count("rewritten") == 2


def test_a_failed_write_leaves_the_old_file_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source, target = tmp_path / "fewer.onnx", tmp_path / "out.onnx"
    onnx.save(fewer_outputs(), source)
    target.write_bytes(b"the old file")

    writing = model_weights.write_pieces

    def full_disk(stream: IO[bytes], *pieces: Any) -> None:
        """The real writer, on a disk that fills up after 10 bytes."""

        class Full:
            def write(self, data: bytes) -> None:
                stream.write(data[:10])
                raise OSError(28, "No space left on device")

        writing(Full(), *pieces)

    monkeypatch.setattr(model_weights, "write_pieces", full_disk)
    assert main(["lower", str(source), "-o", str(target)]) == 2
    assert target.read_bytes() == b"the old file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fewer.onnx", "out.onnx"]


def _departs_on_onnxruntime(model: ModelProto, x: np.ndarray) -> bool:
    """Whether onnxruntime, run live, refuses the model or computes other parts than the
    spec."""
    expected = splitops.run_node(model.graph.node[0], [x], opset=18)
    try:
        got = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    except Exception:
        return True
    return [g.shape for g in got] != [e.shape for e in expected]


def test_check_portability_finds_what_onnxruntime_does_and_that_lower_fixes_it(
    cli: Cli, tmp_path: Path
) -> None:
    model = fewer_outputs()
    onnx.save(model, tmp_path / "fewer.onnx")
    assert _departs_on_onnxruntime(model, np.arange(8, dtype=np.float32))
    done = cli("check", "fewer.onnx", "--portability", "--json")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["problems"] == []
    assert found["runtimes"][0] == f"onnxruntime {ort.__version__}"
    rows = [d for d in found["departures"] if d["runtime"].startswith("onnxruntime")]
    assert rows
    assert all(d["node"] == "fewer" and d["fixed_by_lower"] for d in rows)
    assert 8 in [length for d in rows for length in d["lengths"]]
    text = cli("check", "fewer.onnx", "--portability")
    assert "main/fewer (Split-18) onnxruntime" in text.stdout
    assert "lower fixes it" in text.stdout
    assert "node(s) probed on onnxruntime" in text.stderr


def test_check_portability_of_the_example_finds_no_departure_on_onnxruntime(cli: Cli) -> None:
    """The example's Splits run as the spec says on onnxruntime and onnx.reference; its
    SplitToSequence, a graph output, is what runtimes without sequences refuse, and its
    Split-18 nodes what onnx2torch refuses (it has no Split-18 converter), which lower fixes."""
    done = cli(
        "check",
        Path(splitops.__file__).parent / "examples" / "split_tour.onnx",
        "--json",
        "--portability",
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    ours = [d for d in found["departures"] if d["runtime"].startswith(("onnxruntime", "onnx."))]
    assert ours == []
    others = {d["runtime"].split()[0]: d for d in found["departures"]}
    assert set(others) <= {"openvino", "tract", "tvm", "tinygrad", "onnx2torch"}
    for departure in found["departures"]:
        if departure["node"] != "tail_chunks":
            assert departure["runtime"].startswith("onnx2torch"), departure
            assert departure["op"] == "Split"
            assert departure["opset"] == 18
            assert departure["fixed_by_lower"]
    assert {r["runtime"] for r in found["not_installed"]} | {
        name.split()[0] for name in found["runtimes"]
    } >= {"onnxruntime", "onnx.reference", "openvino", "tract", "tvm"}


def test_check_portability_without_onnxruntime_names_it_and_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    onnx.save(fewer_outputs(), tmp_path / "fewer.onnx")
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # as if it were not installed
    monkeypatch.chdir(tmp_path)
    assert main(["check", "fewer.onnx", "--portability"]) == 0
    err = capsys.readouterr().err
    assert (
        "onnxruntime: not probed: it is not installed; pip install onnxruntime (or pip install "
        "'splitops[onnxruntime]')\n"
    ) in err
    assert "node(s) probed on onnx.reference" in err
    assert main(["check", "fewer.onnx", "--portability", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert "onnxruntime" in [entry["runtime"] for entry in found["not_installed"]]
    assert not [r for r in found["runtimes"] if r.startswith("onnxruntime")]


def test_run_on_onnxruntime_prints_what_the_reference_engine_prints(
    cli: Cli, tmp_path: Path
) -> None:
    onnx.save(fewer_outputs(), tmp_path / "fewer.onnx")
    for args in (["fewer.onnx", "--dim", "N=8"], ["--dim", "batch=3"]):
        reference = cli("run", *args)
        fast = cli("run", *args, "--engine", "onnxruntime")
        assert fast.returncode == reference.returncode == 0, fast.stderr
        assert fast.stdout == reference.stdout
        assert f"engine: onnxruntime {ort.__version__}" in fast.stderr


_WITHOUT_ORT = (
    "import sys; sys.modules['onnxruntime'] = None\n"
    "from splitops.cli import main\n"
    "raise SystemExit(main(sys.argv[1:]))\n"
)


def test_run_on_onnxruntime_without_it_says_how_to_install_it(error_line: ErrorLine) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_ORT, "run", "--engine", "onnxruntime"],
        capture_output=True,
        text=True,
        timeout=GUARD_SECONDS,
        check=False,
    )
    assert done.returncode == 2
    assert "pip install onnxruntime" in error_line(done)
    assert done.stdout == ""  # said before the model is described, not after


def test_the_parser_and_the_command_table_list_every_lowering_target() -> None:
    """The command's choices and docs/cli.md's row are TARGETS, the one list of targets (the
    parser keeps its own copy so that ``splitops --help`` imports no onnx)."""
    parser = build_parser()
    lower = next(
        action.choices["lower"]
        for action in parser._actions
        if isinstance(action, argparse._SubParsersAction)
    )
    (target,) = [action for action in lower._actions if "--target" in action.option_strings]
    assert tuple(target.choices) == TARGETS
    table = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text()
    (row,) = [line for line in table.splitlines() if line.startswith("| `splitops lower ")]
    listed = "\\|".join(TARGETS)  # a | escaped in a Markdown table
    assert f"[--target {listed}]" in row


def test_lower_for_a_release_of_onnxruntime_that_computes_split18_keeps_the_node(
    cli: Cli, tmp_path: Path
) -> None:
    """onnxruntime 1.32 cuts a Split-18 by num_outputs as the spec says at every length: lowered
    for it, an uneven split on a run-time axis stays one Split; for any release, its sizes
    are computed in the graph."""
    node = helper.make_node("Split", ["x"], ["a", "b", "c"], axis=0, num_outputs=3, name="thirds")
    onnx.save(make_model([node], {"x": (F, ["N"])}, ["a", "b", "c"], opset=18), tmp_path / "m.onnx")
    kept = cli(
        "lower", "m.onnx", "-o", "new.onnx", "--target", "onnxruntime", "--release", "1.32.0"
    )
    assert kept.returncode == 0, kept.stderr
    assert [n.op_type for n in onnx.load(tmp_path / "new.onnx").graph.node] == ["Split"]
    computed = cli("lower", "m.onnx", "-o", "any.onnx", "--target", "onnxruntime")
    assert computed.returncode == 0, computed.stderr
    assert len(onnx.load(tmp_path / "any.onnx").graph.node) > 1


def test_lower_refuses_a_release_that_is_no_version(cli: Cli, tmp_path: Path) -> None:
    onnx.save(fewer_outputs(), tmp_path / "fewer.onnx")
    done = cli("lower", "fewer.onnx", "-o", "out.onnx", "--release", "latest")
    assert done.returncode == 2
    assert "the runtime release must be a version such as '1.32.0'; 'latest' was given" in (
        done.stderr
    )
    assert not (tmp_path / "out.onnx").exists()
