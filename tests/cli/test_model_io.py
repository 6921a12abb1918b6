"""load_model: what it refuses from a stranger's file, and what it reads."""

from __future__ import annotations

import os
import threading
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import ModelProto, TensorProto, helper, numpy_helper
from tests.malformed_models import _shared_external

import splitops
from splitops import ModelLoadError, SplitError, limits
from splitops.core import current_limits
from splitops.examples import EXAMPLE_MODEL
from splitops.onnx.model._io import load_model, save_model
from splitops.onnx.rewrite._convert import convert_model

MAX_MODEL_PARTS = current_limits().max_parts

WEIGHTS = np.arange(6, dtype=np.float32)


def weights_model(location: str, *, offset: int | None = None, length: int | None = None) -> bytes:
    """A model whose initializer ``w`` keeps its 24 bytes in external data at ``location``."""
    tensor = numpy_helper.from_array(WEIGHTS, "w")
    tensor.ClearField("raw_data")
    tensor.data_location = TensorProto.EXTERNAL
    entries = {"location": location, "offset": offset, "length": length}
    for key, value in entries.items():
        if value is not None:
            tensor.external_data.add(key=key, value=str(value))
    graph = helper.make_graph(
        [helper.make_node("Split", ["w"], ["a", "b"], num_outputs=2)],
        "g",
        [],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [3]) for n in "ab"],
        initializer=[tensor],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    return model.SerializeToString()


@pytest.fixture
def model_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "model"
    folder.mkdir()
    (tmp_path / "secret").write_bytes(b"s" * 24)
    return folder


def test_a_saved_model_loads_back_unchanged(tmp_path: Path) -> None:
    model = onnx.load(EXAMPLE_MODEL)
    save_model(model, tmp_path / "m.onnx")
    assert load_model(tmp_path / "m.onnx") == model


@pytest.mark.parametrize(
    ("content", "phrase"),
    [
        pytest.param(b"", "the file is empty", id="empty"),
        pytest.param(EXAMPLE_MODEL.read_bytes()[:400], "truncated", id="truncated"),
        pytest.param(np.random.default_rng(7).bytes(512), "not an ONNX model", id="random"),
        pytest.param(b"this is a text file\n", "not an ONNX model", id="text"),
        pytest.param(b"\x93NUMPY\x01\x00v\x00{'descr'", "NumPy .npy array", id="npy"),
        pytest.param(b"PK\x03\x04\x14\x00", "zip archive", id="zip"),
        pytest.param(helper.make_opsetid("", 18).SerializeToString(), "no graph", id="no-graph"),
    ],
)
def test_a_file_that_is_not_a_whole_onnx_model_is_refused(
    tmp_path: Path, content: bytes, phrase: str
) -> None:
    file = tmp_path / "model.onnx"
    file.write_bytes(content)
    with pytest.raises(ModelLoadError, match=phrase):
        load_model(file)


def test_a_missing_file_or_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError, match="no such file"):
        load_model(tmp_path / "absent.onnx")
    with pytest.raises(ModelLoadError, match="not a regular file"):
        load_model(tmp_path)


def test_a_model_file_over_2gb_is_refused_without_reading_it(tmp_path: Path) -> None:
    file = tmp_path / "huge.onnx"
    with file.open("wb") as stream:
        stream.truncate(2**31)  # sparse: no disk used
    tracemalloc.start()
    try:
        with pytest.raises(ModelLoadError, match="over protobuf's 2 GB limit"):
            load_model(file)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2**20


def test_external_data_inside_the_folder_is_loaded(model_folder: Path) -> None:
    (model_folder / "data").mkdir()
    (model_folder / "data" / "w.bin").write_bytes(b"\0" * 8 + WEIGHTS.tobytes())
    (model_folder / "m.onnx").write_bytes(weights_model("data/w.bin", offset=8, length=24))
    model = load_model(model_folder / "m.onnx")
    np.testing.assert_array_equal(numpy_helper.to_array(model.graph.initializer[0]), WEIGHTS)


@pytest.mark.parametrize(
    ("location", "phrase"),
    [
        pytest.param("../secret", "climbs out with '..'", id="dotdot"),
        pytest.param("sub/../../secret", "climbs out with '..'", id="dotdot-inside"),
        pytest.param("..\\secret", "climbs out with '..'", id="dotdot-windows"),
        pytest.param("/etc/passwd", "an absolute path", id="etc-passwd"),
        pytest.param("C:\\Windows\\win.ini", "an absolute path", id="windows-drive"),
    ],
)
def test_external_data_outside_the_folder_is_refused(
    model_folder: Path, location: str, phrase: str
) -> None:
    (model_folder / "m.onnx").write_bytes(weights_model(location))
    with pytest.raises(ModelLoadError, match=phrase):
        load_model(model_folder / "m.onnx")


def test_external_data_through_a_symlink_out_of_the_folder_is_refused(model_folder: Path) -> None:
    os.symlink(model_folder.parent / "secret", model_folder / "w.bin")
    (model_folder / "m.onnx").write_bytes(weights_model("w.bin"))
    outside = r"which resolves to .*secret, outside the model's folder"
    with pytest.raises(ModelLoadError, match=outside):
        load_model(model_folder / "m.onnx")


def test_trust_external_data_lifts_only_the_folder_check(model_folder: Path) -> None:
    (model_folder / "m.onnx").write_bytes(weights_model("../secret"))
    model = load_model(model_folder / "m.onnx", trust_external_data=True)
    assert model.graph.initializer[0].raw_data == b"s" * 24


@pytest.mark.parametrize(
    ("offset", "length", "says"),
    [
        (30, None, "too short: offset 30 and length 24 lie past its end"),
        (20, 24, "too short: offset 20 and length 24 lie past its end"),
        (0, 48, "with length 48, but its dims \\[6\\] need 24 bytes"),
        (20, 8, "with length 8, but its dims \\[6\\] need 24 bytes"),
    ],
    ids=["offset", "both", "length over dims", "length under dims"],
)
def test_external_data_that_cannot_hold_its_dims_is_refused(
    model_folder: Path, offset: int, length: int | None, says: str
) -> None:
    (model_folder / "w.bin").write_bytes(WEIGHTS.tobytes())
    (model_folder / "m.onnx").write_bytes(weights_model("w.bin", offset=offset, length=length))
    with pytest.raises(ModelLoadError, match=says):
        load_model(model_folder / "m.onnx")


def test_weights_sharing_one_file_count_each_claim_against_the_limit(tmp_path: Path) -> None:
    """200 weights each claiming the whole of one 256 KiB file claim 50 MiB in all: the
    limit weighs what is read, not the size of the files."""
    case = _shared_external(200)
    (tmp_path / case.name).write_bytes(case.data)
    for name, data in case.beside.items():
        (tmp_path / name).write_bytes(data)
    claimed = 200 * 2**18
    with (
        splitops.limits(max_external_bytes=claimed - 1),
        pytest.raises(ModelLoadError, match=f"claim {claimed} bytes of external data in all"),
    ):
        load_model(tmp_path / case.name)
    with splitops.limits(max_external_bytes=claimed):
        assert len(load_model(tmp_path / case.name).graph.initializer) == 200


def test_missing_external_data_is_refused(model_folder: Path) -> None:
    (model_folder / "m.onnx").write_bytes(weights_model("absent.bin"))
    with pytest.raises(ModelLoadError, match="does not exist"):
        load_model(model_folder / "m.onnx")


needs_fifos = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs need a POSIX system")


@needs_fifos
@pytest.mark.parametrize("trusted", [False, True])
def test_external_data_in_a_fifo_is_refused_without_opening_it(
    model_folder: Path, trusted: bool
) -> None:
    # Opened for reading, a FIFO blocks until a writer comes: for ever.
    os.mkfifo(model_folder / "w.bin")
    (model_folder / "m.onnx").write_bytes(weights_model("w.bin"))
    with pytest.raises(ModelLoadError, match="which is not a regular file"):
        load_model(model_folder / "m.onnx", trust_external_data=trusted)


@needs_fifos
def test_a_link_to_a_fifo_outside_the_folder_is_refused_without_opening_it(
    model_folder: Path,
) -> None:
    os.mkfifo(model_folder.parent / "fifo")
    os.symlink(model_folder.parent / "fifo", model_folder / "w.bin")
    (model_folder / "m.onnx").write_bytes(weights_model("w.bin"))
    with pytest.raises(ModelLoadError, match="outside the model's folder"):
        load_model(model_folder / "m.onnx")
    with pytest.raises(ModelLoadError, match="which is not a regular file"):
        load_model(model_folder / "m.onnx", trust_external_data=True)


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero here")
def test_a_link_to_a_device_is_refused_even_when_trusted(model_folder: Path) -> None:
    os.symlink("/dev/zero", model_folder / "w.bin")
    (model_folder / "m.onnx").write_bytes(weights_model("w.bin"))
    with pytest.raises(ModelLoadError, match="which is not a regular file"):
        load_model(model_folder / "m.onnx", trust_external_data=True)


def test_a_hard_link_is_refused_unless_trusted(model_folder: Path) -> None:
    # The link lies in the folder, the file it shares also outside: a check by path passes.
    (model_folder.parent / "secret").write_bytes(WEIGHTS.tobytes())
    os.link(model_folder.parent / "secret", model_folder / "w.bin")
    (model_folder / "m.onnx").write_bytes(weights_model("w.bin"))
    with pytest.raises(ModelLoadError, match="which has 2 hard links"):
        load_model(model_folder / "m.onnx", load_external_data=False)
    model = load_model(model_folder / "m.onnx", trust_external_data=True)
    assert model.graph.initializer[0].raw_data == WEIGHTS.tobytes()


def _typed_external(data_type: int, dims: list[int], length: int | None = None) -> bytes:
    tensor = TensorProto(name="w", data_type=data_type, dims=dims)
    tensor.data_location = TensorProto.EXTERNAL
    tensor.external_data.add(key="location", value="w.bin")
    if length is not None:
        tensor.external_data.add(key="length", value=str(length))
    graph = helper.make_graph(
        [], "g", [], [helper.make_tensor_value_info("w", data_type, dims)], initializer=[tensor]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    return model.SerializeToString()


@pytest.mark.parametrize(
    ("data_type", "count", "stored"),
    [
        (TensorProto.FLOAT4E2M1, 6, 3),
        (TensorProto.INT4, 5, 3),
        (TensorProto.UINT4, 4, 2),
        (TensorProto.FLOAT, 3, 12),
    ],
    ids=["float4e2m1", "int4-odd", "uint4", "float"],
)
def test_external_data_is_counted_as_onnx_packs_it(
    model_folder: Path, data_type: int, count: int, stored: int
) -> None:
    (model_folder / "w.bin").write_bytes(bytes(range(1, stored + 1)) + b"tail")
    (model_folder / "m.onnx").write_bytes(_typed_external(data_type, [count], length=stored))
    assert load_model(model_folder / "m.onnx").graph.initializer[0].raw_data == bytes(
        range(1, stored + 1)
    )
    (model_folder / "m.onnx").write_bytes(_typed_external(data_type, [count]))
    assert len(load_model(model_folder / "m.onnx").graph.initializer[0].raw_data) == stored


def test_sub_byte_external_data_counts_against_the_limit_before_it_is_read(
    model_folder: Path,
) -> None:
    # Counted as 0 bytes once, and then the whole file was read.
    with (model_folder / "w.bin").open("wb") as stream:
        stream.truncate(2**24)
    (model_folder / "m.onnx").write_bytes(_typed_external(TensorProto.INT4, [2**25]))
    tracemalloc.start()
    try:
        with limits(max_external_bytes=1024), pytest.raises(ModelLoadError, match="16777216"):
            load_model(model_folder / "m.onnx")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2**20


def test_strings_in_external_data_are_refused(model_folder: Path) -> None:
    (model_folder / "w.bin").write_bytes(b"text" * 4)
    (model_folder / "m.onnx").write_bytes(_typed_external(TensorProto.STRING, [4]))
    with pytest.raises(ModelLoadError, match="which have no fixed size"):
        load_model(model_folder / "m.onnx")


def test_a_fifo_given_as_the_model_is_refused_without_opening_it(tmp_path: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("FIFOs need a POSIX system")
    os.mkfifo(tmp_path / "m.onnx")
    with pytest.raises(ModelLoadError, match="not a regular file"):
        load_model(tmp_path / "m.onnx")


def test_functions_calling_one_another_are_counted_by_their_calls(tmp_path: Path) -> None:
    from tests.malformed_models import _calling_twice

    save_model(_calling_twice(12), tmp_path / "m.onnx")
    assert load_model(tmp_path / "m.onnx").functions
    with limits(max_nodes=2**12), pytest.raises(ModelLoadError, match="the max_nodes limit"):
        load_model(tmp_path / "m.onnx")


def _asking_model(build_model: Callable[..., ModelProto], **attributes: object) -> ModelProto:
    split = helper.make_node("Split", ["x"], ["a", "b"], name="greedy", **attributes)
    inner = helper.make_graph([split], "then", [], [helper.make_empty_tensor_value_info("a")])
    other = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["e"])],
        "else",
        [],
        [helper.make_empty_tensor_value_info("e")],
    )
    branch = helper.make_node("If", ["c"], ["out"], then_branch=inner, else_branch=other)
    inputs = {"x": (TensorProto.FLOAT, [0]), "c": (TensorProto.BOOL, [])}
    return build_model([branch], inputs, ["out"], opset=18)


def test_a_split_asking_for_a_billion_outputs_is_refused_before_allocating(
    tmp_path: Path, build_model: Callable[..., ModelProto]
) -> None:
    # Inside a subgraph, on a dim of 0: planning it would build a tuple of 10**9 sizes (8 GB).
    save_model(_asking_model(build_model, num_outputs=10**9), tmp_path / "m.onnx")
    tracemalloc.start()
    try:
        with pytest.raises(ModelLoadError, match=f"asks for {10**9} parts.*{MAX_MODEL_PARTS}"):
            load_model(tmp_path / "m.onnx")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2**24


def test_a_split_attribute_listing_too_many_sizes_is_refused(
    tmp_path: Path, build_model: Callable[..., ModelProto]
) -> None:
    save_model(_asking_model(build_model, split=[0] * (MAX_MODEL_PARTS + 1)), tmp_path / "m.onnx")
    with pytest.raises(ModelLoadError, match="greedy"):
        load_model(tmp_path / "m.onnx")


def test_convert_model_refuses_a_billion_outputs_in_memory_too(
    build_model: Callable[..., ModelProto],
) -> None:
    with pytest.raises(SplitError, match="asks for 1000000000 parts"):
        convert_model(_asking_model(build_model, num_outputs=10**9), 11)


def test_swapping_the_data_file_for_a_link_never_reads_outside_the_folder(
    model_folder: Path,
) -> None:
    # A second thread swaps w.bin, over and over, between a file inside the folder and a link
    # to a file outside it, as an attacker would between a check and a read.
    secret = model_folder.parent / "secret"
    secret.write_bytes(b"s" * 24)
    (model_folder / "m.onnx").write_bytes(weights_model("w.bin"))
    (model_folder / "w.bin").write_bytes(WEIGHTS.tobytes())
    stop = threading.Event()

    def swap() -> None:
        turn = 0
        while not stop.is_set():
            staged = model_folder / f".staged{turn % 2}"
            if turn % 2:
                staged.write_bytes(WEIGHTS.tobytes())
            else:
                os.symlink(secret, staged)
            os.replace(staged, model_folder / "w.bin")
            turn += 1

    swapper = threading.Thread(target=swap)
    swapper.start()
    outcomes: dict[str, int] = {}
    try:
        for _ in range(1500):
            outcome = _load_or_refusal(model_folder / "m.onnx")
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
    finally:
        stop.set()
        swapper.join()
    assert set(outcomes) <= {"the weights from inside", "refused: outside", "refused: absent"}
    assert outcomes.get("the weights from inside")  # the race really ran: both happened
    assert outcomes.get("refused: outside")


def _load_or_refusal(path: Path) -> str:
    """What loading ``path`` gave: the weights from inside the folder, a refusal, or else
    what it read."""
    try:
        model = load_model(path)
    except ModelLoadError as error:
        if "outside the model's folder" in str(error):
            return "refused: outside"
        return "refused: absent" if "does not exist" in str(error) else str(error)
    data = model.graph.initializer[0].raw_data
    return "the weights from inside" if data == WEIGHTS.tobytes() else f"read {data!r}"
