"""A model file rewritten with its weights left where they lie (``rewrite_file``): the
result computes what the original computes (onnxruntime, run live), its weights stay in
their files (never read: the byte limit proves it), inline weights stay inline, and every
file is written whole, beside the output, never through a link and never over the input's.
"""

from __future__ import annotations

import errno
import functools
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import ModelProto, TensorProto, numpy_helper
from tests.model_building import (
    FLOOR,
    SIZES,
    WEIGHT,
    save_with_external_data,
    sparse_weights_model,
    weighted_model,
)

import splitops
from splitops import ModelLoadError, limits, rewrite_file
from splitops.onnx.model import _weights

ort = pytest.importorskip("onnxruntime")

SMALL_BYTES = FLOOR.nbytes + SIZES.nbytes

LOWER = functools.partial(splitops.lower_model, target="portable")
CONVERT = functools.partial(splitops.convert_model, opset=13)
REWRITES = {"lower": LOWER, "convert": CONVERT}


def save_external(folder: Path, name: str = "model.onnx", location: str = "weights.bin") -> Path:
    return save_with_external_data(weighted_model(), folder, name, location)


def outputs(model: str | Path | bytes) -> list[np.ndarray]:
    """What onnxruntime computes for a fixed input."""
    x = np.random.default_rng(0).standard_normal((3, 64)).astype(np.float32)
    session = ort.InferenceSession(model if isinstance(model, bytes) else str(model))
    return list(session.run(None, {"x": x}))


def expected() -> list[np.ndarray]:
    return outputs(weighted_model().SerializeToString())


def stored(path: Path) -> dict[str, TensorProto]:
    """The initializers of the model file at ``path``, as stored (external data not read)."""
    model = onnx.load(path, load_external_data=False)
    return {tensor.name: tensor for tensor in model.graph.initializer}


def location(tensor: TensorProto) -> str | None:
    entries = {entry.key: entry.value for entry in tensor.external_data}
    return entries.get("location") if tensor.data_location == TensorProto.EXTERNAL else None


@pytest.mark.parametrize("rewrite", sorted(REWRITES))
def test_a_rewritten_file_keeps_its_weights_external_and_computes_the_same(
    tmp_path: Path, rewrite: str
) -> None:
    source = save_external(tmp_path / "in")
    before = {p.name: p.read_bytes() for p in source.parent.iterdir()}
    output = tmp_path / "out" / "rewritten.onnx"
    rewrite_file(source, output, REWRITES[rewrite])
    assert sorted(p.name for p in output.parent.iterdir()) == ["rewritten.onnx", "weights.bin"]
    assert (output.parent / "weights.bin").read_bytes() == before["weights.bin"]
    tensors = stored(output)
    # The weight stays in its file; the small tensors, read, are inline (onnxruntime reads
    # no external data where a Split's sizes come from).
    assert {name: location(tensors[name]) for name in ("w", "floor", "sizes")} == {
        "w": "weights.bin",
        "floor": None,
        "sizes": None,
    }
    onnx.checker.check_model(output, full_check=True)
    for got, want in zip(outputs(output), expected(), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    assert {p.name: p.read_bytes() for p in source.parent.iterdir()} == before


@pytest.mark.parametrize("rewrite", sorted(REWRITES))
def test_the_rewrite_of_a_file_is_the_rewrite_of_the_model_read_whole(
    tmp_path: Path, rewrite: str
) -> None:
    source = save_external(tmp_path)
    output = tmp_path / "rewritten.onnx"
    rewrite_file(source, output, REWRITES[rewrite])
    whole = REWRITES[rewrite](splitops.load_model(source))
    assert list(splitops.load_model(output).graph.node) == list(whole.graph.node)


def test_the_weights_are_not_read_only_the_small_tensors_are(tmp_path: Path) -> None:
    source = save_external(tmp_path)
    with limits(max_external_bytes=SMALL_BYTES):
        with pytest.raises(ModelLoadError, match="bytes of external data in all"):
            splitops.load_model(source)
        rewrite_file(source, tmp_path / "lowered.onnx", LOWER)
    with limits(max_external_bytes=SMALL_BYTES - 1), pytest.raises(ModelLoadError):
        rewrite_file(source, tmp_path / "lowered.onnx", LOWER)


def test_the_rewrite_is_given_the_weights_as_references_without_data(tmp_path: Path) -> None:
    source = save_external(tmp_path)
    seen: list[TensorProto] = []

    def record(model: ModelProto) -> ModelProto:
        seen.extend(model.graph.initializer)
        return LOWER(model)

    rewrite_file(source, tmp_path / "lowered.onnx", record)
    by_name = {tensor.name: tensor for tensor in seen}
    assert by_name["w"].data_location == TensorProto.EXTERNAL
    assert not by_name["w"].raw_data
    # The sizes a Split is cut by are read: the rewrite sees their values.
    assert numpy_helper.to_array(by_name["sizes"]).tolist() == SIZES.tolist()


def test_many_gigabytes_of_weights_are_rewritten_under_the_default_limits(tmp_path: Path) -> None:
    """A weight claiming 6 GiB of a sparse file, over the default max_external_bytes of
    4 GiB: a rewrite that read it would be refused."""
    sparse_weights_model(tmp_path, 6)
    with pytest.raises(ModelLoadError, match="max_external_bytes"):
        splitops.load_model(tmp_path / "huge.onnx")
    rewrite_file(tmp_path / "huge.onnx", tmp_path / "lowered.onnx", LOWER)
    lowered = stored(tmp_path / "lowered.onnx")
    assert location(lowered["w"]) == "huge.bin"
    assert len(lowered) == 2  # the weight, and the sizes the lowering wrote
    assert sorted(p.name for p in tmp_path.iterdir()) == ["huge.bin", "huge.onnx", "lowered.onnx"]


@pytest.mark.parametrize("rewrite", sorted(REWRITES))
def test_inline_weights_stay_inline_and_the_rewrite_copies_none(
    tmp_path: Path, rewrite: str
) -> None:
    source = tmp_path / "inline.onnx"
    onnx.save(weighted_model(), source)
    given: list[TensorProto] = []

    def record(model: ModelProto) -> ModelProto:
        given.extend(t for t in model.graph.initializer if t.name == "w")
        return REWRITES[rewrite](model)

    output = tmp_path / "out" / "lowered.onnx"
    rewrite_file(source, output, record)
    assert not given[0].raw_data  # a stand-in: the weight itself was set aside
    assert sorted(p.name for p in output.parent.iterdir()) == ["lowered.onnx"]
    tensors = stored(output)
    assert all(location(tensor) is None for tensor in tensors.values())
    assert numpy_helper.to_array(tensors["w"]).tolist() == WEIGHT.tolist()
    for got, want in zip(outputs(output), expected(), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_an_output_over_protobufs_limit_is_refused_before_anything_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "inline.onnx"
    onnx.save(weighted_model(), source)
    monkeypatch.setattr(_weights, "MAX_MODEL_BYTES", WEIGHT.nbytes)  # the weight and more
    with pytest.raises(OSError, match="over protobuf's 2 GB limit") as raised:
        rewrite_file(source, tmp_path / "out" / "lowered.onnx", LOWER)
    assert raised.value.errno == errno.EFBIG
    assert not (tmp_path / "out").exists()


def test_an_output_beside_the_input_names_the_inputs_own_data_file(tmp_path: Path) -> None:
    source = save_external(tmp_path)
    data = tmp_path / "weights.bin"
    identity, content = data.stat(), data.read_bytes()
    rewrite_file(source, tmp_path / "lowered.onnx", LOWER)
    rewrite_file(source, source, CONVERT)  # in place
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "lowered.onnx",
        "model.onnx",
        "weights.bin",
    ]
    assert (data.stat().st_ino, data.stat().st_mtime_ns) == (identity.st_ino, identity.st_mtime_ns)
    assert data.read_bytes() == content
    for model in (tmp_path / "lowered.onnx", source):
        for got, want in zip(outputs(model), expected(), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-6)


def test_data_in_a_subfolder_keeps_its_relative_place(tmp_path: Path) -> None:
    source = save_external(tmp_path / "in", location="data/weights.bin")
    output = tmp_path / "out" / "lowered.onnx"
    rewrite_file(source, output, LOWER)
    assert (output.parent / "data" / "weights.bin").read_bytes() == (
        source.parent / "data" / "weights.bin"
    ).read_bytes()
    assert location(stored(output)["w"]) == "data/weights.bin"
    assert len(outputs(output)) == 7


def test_a_link_where_the_data_goes_is_replaced_never_written_through(tmp_path: Path) -> None:
    source = save_external(tmp_path / "in")
    elsewhere = tmp_path / "elsewhere.bin"
    elsewhere.write_bytes(b"not to be written")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "weights.bin").symlink_to(elsewhere)
    rewrite_file(source, tmp_path / "out" / "lowered.onnx", LOWER)
    assert elsewhere.read_bytes() == b"not to be written"
    placed = tmp_path / "out" / "weights.bin"
    assert not placed.is_symlink()
    assert placed.read_bytes() == (tmp_path / "in" / "weights.bin").read_bytes()


def test_data_named_like_the_output_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    source = save_external(tmp_path / "in", location="lowered.onnx.bin")
    target = tmp_path / "out" / "lowered.onnx.bin"
    with pytest.raises(OSError, match="would be the model file itself") as raised:
        rewrite_file(source, target, LOWER)
    assert raised.value.errno == errno.EEXIST
    assert raised.value.filename == str(target)
    assert not target.parent.exists() or list(target.parent.iterdir()) == []


def test_a_failed_rewrite_writes_nothing(tmp_path: Path) -> None:
    source = save_external(tmp_path / "in")
    output = tmp_path / "out" / "lowered.onnx"

    def broken(model: ModelProto) -> ModelProto:
        raise RuntimeError("refused")

    with pytest.raises(RuntimeError, match="refused"):
        rewrite_file(source, output, broken)
    assert not output.parent.exists() or list(output.parent.iterdir()) == []


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        (lambda folder: (folder / "weights.bin").unlink(), "which does not exist beside the model"),
        (lambda folder: os.truncate(folder / "weights.bin", 100), "which is too short"),
    ],
    ids=["missing", "short"],
)
def test_a_missing_or_short_data_file_is_a_load_error(
    tmp_path: Path, damage: Callable[[Path], None], says: str
) -> None:
    source = save_external(tmp_path / "in")
    damage(source.parent)
    with pytest.raises(ModelLoadError, match=says):
        rewrite_file(source, tmp_path / "out" / "lowered.onnx", LOWER)
    assert not (tmp_path / "out").exists()


def test_data_outside_the_folder_is_refused_unless_trusted_then_copied_in(
    tmp_path: Path,
) -> None:
    source = save_external(tmp_path / "in")
    (tmp_path / "shared").mkdir()
    (tmp_path / "in" / "weights.bin").rename(tmp_path / "shared" / "weights.bin")
    model = onnx.load(source, load_external_data=False)
    for tensor in model.graph.initializer:
        tensor.external_data[0].value = "../shared/weights.bin"
    onnx.save(model, source)
    output = tmp_path / "out" / "lowered.onnx"
    with pytest.raises(ModelLoadError, match=r"climbs out with '\.\.'"):
        rewrite_file(source, output, LOWER)
    rewrite_file(source, output, LOWER, trust_external_data=True)
    # onnx and onnxruntime refuse locations outside a model's folder: the data is copied in.
    assert location(stored(output)["w"]) == "weights.bin"
    assert (output.parent / "weights.bin").read_bytes() == (
        tmp_path / "shared" / "weights.bin"
    ).read_bytes()
    for got, want in zip(outputs(output), expected(), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_a_hard_linked_data_file_is_refused_as_the_loader_refuses_it(tmp_path: Path) -> None:
    source = save_external(tmp_path / "in")
    os.link(tmp_path / "in" / "weights.bin", tmp_path / "other.bin")
    with pytest.raises(ModelLoadError, match="2 hard links"):
        rewrite_file(source, tmp_path / "out" / "lowered.onnx", LOWER)


def test_rewrite_file_names_what_it_takes(tmp_path: Path) -> None:
    source = save_external(tmp_path)
    output = tmp_path / "lowered.onnx"
    with pytest.raises(TypeError, match=r"^rewrite_file takes a path \(str or os.PathLike\)"):
        rewrite_file(None, output, LOWER)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^rewrite_file takes a function of an onnx.ModelProto"):
        rewrite_file(source, output, "lower")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"must return an onnx.ModelProto; it returned NoneType"):
        rewrite_file(source, output, lambda model: None)  # type: ignore[arg-type,return-value]
    assert not output.exists()


# How each data file is placed: cloned, copied by the kernel, or streamed.


def _copy(source: Path, target: Path) -> str:
    target.write_bytes(b"")
    with source.open("rb") as stream:
        return _weights._copy_file(stream, target, "copying")


def test_the_kernel_copies_the_data_where_the_file_system_cannot_clone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "data.bin"
    source.write_bytes(os.urandom(3 * 2**20 + 5))
    monkeypatch.setattr(_weights, "_clone", lambda *_: False)
    assert _copy(source, tmp_path / "copy.bin") == "copied"
    assert (tmp_path / "copy.bin").read_bytes() == source.read_bytes()


def test_the_data_is_streamed_where_the_kernel_cannot_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "data.bin"
    source.write_bytes(os.urandom(3 * 2**20 + 5))

    def cannot(*_: object) -> int:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(_weights, "_clone", lambda *_: False)
    monkeypatch.setattr(os, "copy_file_range", cannot, raising=False)
    assert _copy(source, tmp_path / "copy.bin") == "streamed"
    assert (tmp_path / "copy.bin").read_bytes() == source.read_bytes()


@pytest.mark.parametrize("kernel", [True, False], ids=["kernel", "stream"])
def test_holes_stay_holes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kernel: bool) -> None:
    source = tmp_path / "sparse.bin"
    with source.open("wb") as stream:
        stream.truncate(256 * 2**20)
        stream.seek(100 * 2**20)
        stream.write(b"weights" * 1000)
    monkeypatch.setattr(_weights, "_clone", lambda *_: False)
    if not kernel:
        monkeypatch.delattr(os, "copy_file_range", raising=False)
    _copy(source, tmp_path / "copy.bin")
    copy = tmp_path / "copy.bin"
    assert copy.stat().st_size == source.stat().st_size
    with copy.open("rb") as stream:
        stream.seek(100 * 2**20 - 3)
        assert stream.read(7006) == b"\0" * 3 + b"weights" * 1000 + b"\0" * 3
    if source.stat().st_blocks * 512 < 2**20:  # where this file system keeps holes
        assert copy.stat().st_blocks * 512 < 2**20


def _clones(folder: Path) -> bool:
    """Whether the file system of ``folder`` shares blocks between files (FICLONE)."""
    (folder / "probe").write_bytes(b"probe")
    (folder / "probe.clone").write_bytes(b"")
    with (folder / "probe").open("rb") as source, (folder / "probe.clone").open("r+b") as copy:
        return _weights._clone(source, copy)


def test_a_file_system_that_shares_blocks_clones_the_data(tmp_path: Path) -> None:
    if not _clones(tmp_path):
        pytest.skip("the temporary folder's file system does not clone (FICLONE)")
    source = tmp_path / "data.bin"
    source.write_bytes(os.urandom(2**20))
    assert _copy(source, tmp_path / "copy.bin") == "cloned"
    assert (tmp_path / "copy.bin").read_bytes() == source.read_bytes()
