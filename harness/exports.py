"""Real model exports on every installed runtime, original and lowered for every target:
what ``python -m benchmarks.exports`` runs and reports.

Two families of exports, each made in a venv of the torch release that writes it
(:mod:`harness.export_models`): tiny random-initialized ``transformers`` models (ConvNeXt,
Swin, ViT, DINOv2, DINOv3 ViT and ConvNeXt, wav2vec2, the Whisper encoder, GPT-2, Llama,
Phi-3), each written by torch's exporters: dynamo, dynamo unoptimized (as torch 2.5 and 2.6
ran it by default) and TorchScript; and small scripted and traced modules
(:mod:`harness.scripted_models`: loops over split, lists built in loops, unbind, counts and
indices given as tensors), each beside a Split-free control, written by the TorchScript
exporter at opsets 11, 13 and 18. The files users report were written by earlier exporters
than the current one, so the corpus is built with each torch that a venv offers:
``--torch-env PATH`` runs the exports in the venv at ``PATH`` (its ``bin/python``; torch,
onnx, and transformers and onnxscript for the transformers family) into
``CACHE/torch-<version>/``; without it the current interpreter exports, where the cache is
empty.

Each file runs on onnxruntime, onnx.reference, OpenVINO, tract, TVM, tinygrad and onnx2torch
where installed (each in a worker process), as exported and as ``lower_model(model,
target=...)`` gives it for each target of :data:`~splitops.onnx.rewrite.TARGETS`, at two
input sizes (the dynamic axes grown). For a transformers model, splitops' reference engine on
the original gives the spec's answer, and a size where that answer is not torch's (a tracing
exporter fixed an axis it was told is dynamic) is left out; for a scripted module, torch's
outputs are the oracle, at two sizes other than the traced one.
A run is **exact** when every output has the oracle's shape and element type and its values
within ``rtol=1e-3, atol=1e-4`` of the oracle's (runtimes sum in their own order); **wrong**
when not; **error** when the runtime refuses or fails (or the lowering itself fails, as no
lowering should); **refused** when the target's lowering refuses the model. Each error a
runtime gives an original, or its lowering for the runtime's own target, is cut down to the
part of the model that computes the failing node (the node the message names, or the last
of the shortest failing prefix of the graph), its Splits written as Slices, and run again
there and on onnxruntime: a cut with no Split and no sequence that fails the same way shows
the runtime's own limit, as a scripted module's control does for the whole module. A
lowering that makes an exact original anything else is listed. :func:`report` writes the
section "Real exports" of ``docs/portability.md``.

>>> model = onnx.parser.parse_model('''
...     <ir_version: 8, opset_import: ["" : 18]>
...     g (float[2, 5] x) => (float[2, 2] y, float[2, 2] a) {
...         two = Constant <value_int = 2> ()
...         zero = Constant <value_int = 0> ()
...         s = SplitToSequence <axis = 1> (x, two)
...         y = SequenceAt (s, zero)
...         a, b, c = Split <axis = 1, num_outputs = 3> (x)
...     }
... ''')
>>> describe(sequence_patterns(model))
'1 Split, 1 num_outputs, 1 uneven num_outputs, 1 SplitToSequence, 1 SequenceAt'
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnx.utils
from onnx import ModelProto

import splitops
from splitops.onnx.rewrite import TARGETS
from splitops.onnx.run import RUNTIMES, Runtime, RuntimeRunError, RuntimeWorkers, runtime_named

from .export_models import graphs

ROOT = Path(__file__).resolve().parents[1]
#: Where the exports are built (ignored by git): one folder per torch release.
CACHE = ROOT / ".cache" / "exports"
HEADING = "## Real exports"
RTOL, ATOL = 1e-3, 1e-4
VERDICTS = ("exact", "wrong", "error", "refused")
#: How the error of a lowering that failed (a bug: it refuses or lowers) begins.
FAILED = "lowering failed: "


@dataclass(frozen=True)
class Export:
    """One exported file, its example inputs at two sizes and torch's outputs for them."""

    path: Path
    model: str
    exporter: str
    torch: str
    transformers: str
    opset: int
    #: ``"transformers"``, or ``"scripted"`` (:mod:`harness.scripted_models`: torch's
    #: outputs are the oracle, and each module has a Split-free control).
    family: str = "transformers"
    #: A scripted module's control: its computation without split, chunk, unbind or lists.
    control: bool = False
    #: ``"script"`` or ``"trace"``, for a scripted module.
    kind: str = ""

    @property
    def label(self) -> str:
        if self.family == "scripted":
            control = " control" if self.control else ""
            return f"{self.model}{control} opset {self.opset} torch {self.torch}"
        return f"{self.model} {self.exporter} torch {self.torch}"

    def arrays(self) -> dict[str, Any]:
        with np.load(self.path.with_suffix(".npz")) as found:
            return dict(found)

    def feeds(self) -> list[dict[str, Any]]:
        """The inputs at each size, by input name."""
        arrays = self.arrays()
        return [
            {
                key[len(f"in{k}_") :]: value
                for key, value in arrays.items()
                if key.startswith(f"in{k}_")
            }
            for k in (0, 1)
        ]

    def torch_outputs(self) -> list[list[Any]]:
        arrays = self.arrays()
        return [
            [arrays[key] for key in sorted(arrays) if key.startswith(f"out{k}_")] for k in (0, 1)
        ]


def read_exports(folder: Path) -> list[Export]:
    """The exports under ``folder`` (every ``*/manifest.jsonl``: the last line of a file wins;
    failed exports are left out), by torch release, model and exporter."""
    found: dict[Path, Export] = {}
    for manifest in sorted(folder.glob("*/manifest.jsonl")):
        for line in manifest.read_text().splitlines():
            entry = json.loads(line)
            path = manifest.parent / entry["file"]
            if "error" in entry or not path.exists():
                found.pop(path, None)
                continue
            found[path] = Export(
                path,
                entry["model"],
                entry["exporter"],
                entry["torch"],
                entry["transformers"],
                entry["opset"],
                entry.get("family", "transformers"),
                bool(entry.get("control", False)),
                entry.get("kind", ""),
            )
    return sorted(
        found.values(),
        key=lambda e: (
            e.family != "transformers",
            _release(e.torch),
            e.model,
            e.exporter,
            e.opset,
            e.control,
        ),
    )


def export_failures(folder: Path) -> list[dict[str, Any]]:
    """The manifest lines of exports that failed (and did not succeed later)."""
    last: dict[Path, dict[str, Any]] = {}
    for manifest in sorted(folder.glob("*/manifest.jsonl")):
        for line in manifest.read_text().splitlines():
            entry = json.loads(line)
            last[manifest.parent / entry["file"]] = entry
    return [entry for entry in last.values() if "error" in entry]


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".")[:3] if part.isdigit())


def build(
    python: str,
    folder: Path,
    only: Sequence[str] | None = None,
    exporters: Sequence[str] | None = None,
    families: Sequence[str] | None = None,
) -> Path:
    """Export every architecture (or those in ``only``) by every exporter (or those in
    ``exporters``), and every scripted module at each opset, of the ``families`` asked (every
    one by default), with the interpreter ``python`` into ``folder/torch-<its torch
    version>``; returns that folder. Its manifest gains a line per export: the last one of a
    file wins."""
    version = subprocess.run(
        [python, "-c", "import torch; print(torch.__version__.split('+')[0])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    out = (folder / f"torch-{version}").resolve()
    out.mkdir(parents=True, exist_ok=True)
    command = [python, "-m", "harness.export_models", "--out", str(out)]
    if only:
        command += ["--only", *only]
    if exporters:
        command += ["--exporters", *exporters]
    if families:
        command += ["--families", *families]
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    # In the folder: the dynamo exporter of torch 2.4 writes a report where it runs.
    subprocess.run(command, cwd=out, env=environment, check=True, stdout=subprocess.DEVNULL)
    return out


def keep(export: Export, folder: Path) -> Path:
    """Copy ``export`` into ``folder/torch-<version>/`` as a test fixture: its inputs and
    torch's outputs, a manifest line, and the model without the exporter's per-node
    metadata (stack traces: most of a small dynamo export's bytes). Returns the model's
    path."""
    out = folder / export.path.parent.name
    out.mkdir(parents=True, exist_ok=True)
    model = onnx.load(str(export.path))
    for graph in graphs(model.graph):
        for node in graph.node:
            del node.metadata_props[:]
            node.doc_string = ""
    onnx.save(model, str(out / export.path.name))
    npz = export.path.with_suffix(".npz")
    (out / npz.name).write_bytes(npz.read_bytes())
    line: dict[str, Any] = {
        "model": export.model,
        "exporter": export.exporter,
        "torch": export.torch,
        "transformers": export.transformers,
        "file": export.path.name,
        "opset": export.opset,
    }
    if export.family != "transformers":
        line |= {"family": export.family, "control": export.control, "kind": export.kind}
    with (out / "manifest.jsonl").open("a") as manifest:
        manifest.write(json.dumps(line) + "\n")
    return out / export.path.name


# --- what an export holds -------------------------------------------------------------------


def _nodes(model: ModelProto) -> Iterator[onnx.NodeProto]:
    for graph in graphs(model.graph):
        yield from graph.node
    for function in model.functions:
        yield from function.node


def sequence_patterns(model: ModelProto) -> Counter[str]:
    """The Split and sequence patterns ``model`` holds, counted: ``Split`` (every Split),
    ``num_outputs`` and ``uneven num_outputs`` (a Split-18 whose axis length, known
    statically, the count does not divide), ``SplitToSequence``, ``SequenceAt``, ``Loop of
    SequenceInsert`` (a Loop whose body inserts into a sequence) and the other sequence ops."""
    found: Counter[str] = Counter()
    inferred = onnx.shape_inference.infer_shapes(model, data_prop=True)
    shapes = {
        value.name: [d.dim_value if d.HasField("dim_value") else None for d in
                     value.type.tensor_type.shape.dim]
        for value in [*inferred.graph.input, *inferred.graph.value_info, *inferred.graph.output]
        if value.type.HasField("tensor_type")
    }  # fmt: skip
    for node in _nodes(model):
        if node.op_type == "Loop":
            body = next(a.g for a in node.attribute if a.name == "body")
            if any(inner.op_type == "SequenceInsert" for g in graphs(body) for inner in g.node):
                found["Loop of SequenceInsert"] += 1
        if node.op_type.startswith("Sequence") or node.op_type in (
            "SplitToSequence",
            "ConcatFromSequence",
        ):
            found[node.op_type] += 1
        if node.op_type != "Split":
            continue
        found["Split"] += 1
        attributes = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        parts = attributes.get("num_outputs")
        if parts is None:
            continue
        found["num_outputs"] += 1
        dims = shapes.get(node.input[0])
        axis = int(attributes.get("axis", 0))
        length = dims[axis] if dims and -len(dims) <= axis < len(dims) else None
        if length is not None and length % int(parts):
            found["uneven num_outputs"] += 1
    return found


#: The patterns users report, in the order the report lists them.
PATTERNS = (
    "Split",
    "num_outputs",
    "uneven num_outputs",
    "SplitToSequence",
    "SequenceAt",
    "Loop of SequenceInsert",
)


def describe(counts: Counter[str]) -> str:
    """``counts`` in one short cell: the reported patterns first, then other sequence ops."""
    shown = [f"{counts[p]} {p}" for p in PATTERNS if counts[p]]
    shown += [f"{n} {op}" for op, n in sorted(counts.items()) if op not in PATTERNS and n]
    return ", ".join(shown) or "none"


# --- running --------------------------------------------------------------------------------


def _spec(model: ModelProto, feeds: Sequence[dict[str, Any]]) -> list[list[Any]] | str:
    """The spec's outputs at each size (splitops' reference engine), or why it failed."""
    try:
        return [list(splitops.backend.run_model(model, f)) for f in feeds]
    except Exception as error:  # reported: the row then has no oracle
        return f"{type(error).__name__}: {' '.join(str(error).split())[:200]}"


def close(got: Sequence[Any], want: Sequence[Any]) -> bool:
    """Every output with the wanted shape and element type, values within the tolerance."""
    if len(got) != len(want):
        return False
    for g, w in zip(got, want, strict=True):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape or g.dtype != w.dtype:
            return False
        if not np.allclose(g, w, rtol=RTOL, atol=ATOL, equal_nan=True):
            return False
    return True


def verdict(wanted: Sequence[list[Any]], got: Sequence[list[Any] | RuntimeRunError]) -> str:
    if any(isinstance(outcome, RuntimeRunError) for outcome in got):
        return "error"
    ok = all(close(g, w) for g, w in zip(got, wanted, strict=True))  # type: ignore[arg-type]
    return "exact" if ok else "wrong"


@dataclass
class Row:
    """One export on one runtime: the original's verdict and each target's, and the first
    error each gave (by target; ``"original"`` for the export itself)."""

    export: Export
    runtime: str
    original: str
    lowered: dict[str, str]
    errors: dict[str, str]


@dataclass
class Corpus:
    """An export, what it holds, and the input sizes it runs at: those where the spec's
    answer (``spec``, by size) is torch's. A tracing exporter may fix an axis it was told is
    dynamic; the file then holds at the example's size only. ``spec`` is why the spec's engine
    failed where it failed at every size."""

    export: Export
    nodes: int
    patterns: Counter[str]
    sizes: tuple[int, ...]
    spec: list[list[Any]] | str
    #: Where torch's outputs are the oracle (a scripted module's): whether splitops'
    #: reference engine gives them too, at each size.
    engine: str = ""

    def feeds(self) -> list[dict[str, Any]]:
        every = self.export.feeds()
        return [every[k] for k in self.sizes]

    @property
    def agreement(self) -> str:
        if self.engine:
            return self.engine
        if isinstance(self.spec, str):
            return f"spec failed: {self.spec}"
        if not self.sizes:
            return "no"
        return "yes" if len(self.sizes) == 2 else "at the example's size only"


def _engine_agrees(model: ModelProto, feeds: Sequence[dict[str, Any]],
                   outputs: Sequence[list[Any]]) -> str:  # fmt: skip
    """Whether splitops' reference engine gives torch's ``outputs`` at every size: ``yes``,
    ``no`` (where not), or why it failed."""
    for feed, wanted in zip(feeds, outputs, strict=True):
        spec = _spec(model, [feed])
        if isinstance(spec, str):
            return f"engine failed: {spec}"
        if not close(spec[0], wanted):
            return "no"
    return "yes"


def read_corpus(exports: Sequence[Export]) -> list[Corpus]:
    """What each export holds and the sizes it runs at, with its oracle: the spec's answer
    where torch's is the same (a transformers model), torch's (a scripted module)."""
    found = []
    for export in exports:
        model = onnx.load(str(export.path))
        every = export.feeds()
        outputs = export.torch_outputs()
        if export.family == "scripted":
            nodes = sum(1 for _ in _nodes(model))
            agrees = _engine_agrees(model, every, outputs)
            found.append(Corpus(export, nodes, sequence_patterns(model), (0, 1), outputs, agrees))
            continue
        sizes, wanted, failed = [], [], ""
        for k in (0, 1):
            spec = _spec(model, [every[k]])
            if isinstance(spec, str):
                failed = failed or spec
            elif close(spec[0], outputs[k]):
                sizes.append(k)
                wanted.append(spec[0])
        nodes = sum(1 for _ in _nodes(model))
        answer: list[list[Any]] | str = failed if failed and not sizes else wanted
        found.append(Corpus(export, nodes, sequence_patterns(model), tuple(sizes), answer))
    return found


def run_exports(
    corpus: Sequence[Corpus],
    runtimes: Sequence[Runtime],
    *,
    progress: Callable[[str], None] = lambda _: None,
    seconds: float | None = None,
) -> list[Row]:
    """Every export on every runtime, as exported and lowered for each target. A variant
    that is byte for byte one already run (up to the producer's version: torch 2.4 and 2.9
    write the same graphs) at the same inputs reuses its outcome."""
    rows: list[Row] = []
    seen: dict[tuple[str, str], list[list[Any] | RuntimeRunError]] = {}
    with RuntimeWorkers() if seconds is None else RuntimeWorkers(seconds) as workers:
        for entry in corpus:
            if isinstance(entry.spec, str) or not entry.sizes:
                continue
            progress(entry.export.label)
            model = onnx.load(str(entry.export.path))
            feeds = entry.feeds()
            # A variant that is no model: the verdict every runtime gets, and why.
            variants: dict[str, bytes | tuple[str, str]] = {"original": model.SerializeToString()}
            for target in TARGETS:
                try:
                    variants[target] = splitops.lower_model(
                        model, target=target
                    ).SerializeToString()
                except splitops.SplitError as refused:
                    variants[target] = ("refused", f"refused: {refused}")
                except Exception as failed:  # the lowering's own failure, on every runtime
                    said = " ".join(str(failed).split())
                    variants[target] = (
                        "error",
                        f"lowering failed: {type(failed).__name__}: {said}",
                    )
            keys = {
                name: _run_key(variant, feeds)
                for name, variant in variants.items()
                if isinstance(variant, bytes)
            }
            for runtime in runtimes:
                outcome: dict[str, str] = {}
                errors: dict[str, str] = {}
                for name, variant in variants.items():
                    if not isinstance(variant, bytes):
                        outcome[name], errors[name] = variant
                        continue
                    key = (runtime.name, keys[name])
                    if key not in seen:
                        seen[key] = workers.run_each(runtime, variant, feeds)
                    got = seen[key]
                    outcome[name] = verdict(entry.spec, got)
                    said = next((str(g) for g in got if isinstance(g, RuntimeRunError)), "")
                    if said:
                        errors[name] = said
                original = outcome.pop("original")
                rows.append(Row(entry.export, runtime.name, original, outcome, errors))
    return rows


def _run_key(variant: bytes, feeds: Sequence[dict[str, Any]]) -> str:
    """What a run depends on: the model without its producer's name and version, and the
    inputs."""
    model = ModelProto.FromString(variant)
    model.producer_name = model.producer_version = ""
    digest = hashlib.sha256(model.SerializeToString(deterministic=True))
    for feed in feeds:
        for name, value in sorted(feed.items()):
            array = np.ascontiguousarray(value)
            digest.update(f"{name}{array.dtype}{array.shape}".encode())
            digest.update(array.tobytes())
    return digest.hexdigest()


# --- reproductions without Split -------------------------------------------------------------

_SPLIT_OPS = {"Split", "SplitToSequence", "ConcatFromSequence", "Loop"}


def failing_node(message: str) -> str | None:
    """The node a runtime's error names: tract quotes it (``#12 "name" Op``), TVM writes
    ``Node name cannot ...``; ``None`` where the message names none."""
    found = re.search(r'#\d+ "([^"]+)"', message) or re.search(r"\bNode (\S+) ", message)
    return found.group(1) if found else None


def same_failure(said: str, message: str) -> bool:
    """Whether a runtime said ``message`` again, up to the numbers tract gives its nodes (a
    cut numbers them anew)."""

    def unnumbered(text: str) -> str:
        return re.sub(r"#\d+ ", "#", " ".join(text.split()))

    return unnumbered(said) == unnumbered(message)


def _cut(model: ModelProto, inferred: ModelProto, outputs: Sequence[str]) -> ModelProto | None:
    """The part of ``model`` that computes ``outputs`` from the graph's inputs (``None`` where
    no inference could type an output). ``inferred`` is ``model`` as splitops' inference
    types it, which types what onnx's cannot; the cut keeps the export's own value types
    only: a runtime takes a declared type as a fact, and the symbols inference names lengths
    by can make it fail elsewhere (tract fails a dynamo export's cut at its input then:
    "Source node without a determined fact")."""
    typed = {value.name for value in [*inferred.graph.value_info, *inferred.graph.output]}
    typed |= {value.name for value in inferred.graph.input}
    if not outputs or any(name not in typed for name in outputs):
        return None
    extractor = onnx.utils.Extractor(inferred)
    cut = extractor.extract_model([value.name for value in model.graph.input], list(outputs))
    declared = {value.name: value for value in model.graph.value_info}
    kept = [declared[value.name] for value in cut.graph.value_info if value.name in declared]
    del cut.graph.value_info[:]
    cut.graph.value_info.extend(kept)
    return cut


def cut_at(model: ModelProto, node_name: str) -> ModelProto | None:
    """The part of ``model`` that computes the node ``node_name`` from the graph's inputs, the
    node's outputs its outputs (``None`` where the main graph has no such node)."""
    node = next((n for n in model.graph.node if n.name == node_name), None)
    if node is None:
        return None
    return _cut(model, splitops.infer_shapes(model), [name for name in node.output if name])


def _prefix(model: ModelProto, inferred: ModelProto, count: int) -> ModelProto | None:
    """The first ``count`` nodes of ``model``'s main graph (a topological order), every value
    they compute that none of them reads an output."""
    nodes = model.graph.node[:count]
    read = {name for node in nodes for name in node.input}
    ends = [name for node in nodes for name in node.output if name and name not in read]
    typed = {value.name for value in [*inferred.graph.value_info, *inferred.graph.output]}
    return _cut(model, inferred, [name for name in ends if name in typed])


def bisect(
    model: ModelProto,
    runtime: Runtime,
    feeds: dict[str, Any],
    message: str,
    workers: RuntimeWorkers,
) -> str | None:
    """The node where ``model`` fails on ``runtime`` with ``message`` where the message names
    none: the last node of the shortest prefix of the main graph that fails with it (a
    runtime that converts node by node fails every longer prefix too). ``None`` where no
    prefix shorter than the graph fails so, or that node has no name."""
    inferred = splitops.infer_shapes(model)

    def fails(count: int) -> bool:
        prefix = _prefix(model, inferred, count)
        if prefix is None:
            return False
        said = _said(workers.run_each(runtime, prefix.SerializeToString(), [feeds]))
        return said is not None and same_failure(said, message)

    low, high = 0, len(model.graph.node)
    if not fails(high):
        return None
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if fails(middle) else (middle, high)
    return model.graph.node[high - 1].name or None


def _said(got: Sequence[list[Any] | RuntimeRunError]) -> str | None:
    return next((str(g) for g in got if isinstance(g, RuntimeRunError)), None)


def _constant_ints(model: ModelProto, name: str) -> list[int] | None:
    for tensor in model.graph.initializer:
        if tensor.name == name:
            return [int(v) for v in onnx.numpy_helper.to_array(tensor).ravel()]
    for node in model.graph.node:
        if node.op_type == "Constant" and list(node.output) == [name]:
            for attribute in node.attribute:
                if attribute.name == "value":
                    return [int(v) for v in onnx.numpy_helper.to_array(attribute.t).ravel()]
    return None


def _part_lengths(model: ModelProto, node: onnx.NodeProto, length: int | None) -> list[int] | None:
    """What each output of the Split ``node`` holds along its axis, from its constant sizes
    or from the axis' static ``length``; ``None`` where neither is known."""
    attributes = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    if len(node.input) > 1 and node.input[1]:
        return _constant_ints(model, node.input[1])
    if "split" in attributes:
        return [int(v) for v in attributes["split"]]
    if length is None:
        return None
    parts = int(attributes.get("num_outputs", len(node.output)))
    chunk = -(-length // parts)
    return [max(0, min(chunk, length - k * chunk)) for k in range(parts)]


def without_splits(model: ModelProto) -> ModelProto | None:
    """``model`` with each Split of its main graph written as Slices of constant bounds, one
    per output: the same values, computed with no Split. ``None`` where a Split's part
    lengths are not known statically, or a sequence operator, a Loop or a Split outside the
    main graph is left."""
    inferred = splitops.infer_shapes(model)
    shapes = {
        value.name: value.type.tensor_type.shape
        for value in [*inferred.graph.input, *inferred.graph.value_info]
        if value.type.tensor_type.HasField("shape")
    }
    made = ModelProto.FromString(model.SerializeToString())
    nodes: list[onnx.NodeProto] = []
    for node in made.graph.node:
        if node.op_type != "Split" or node.domain not in ("", "ai.onnx"):
            nodes.append(node)
            continue
        axis = next((a.i for a in node.attribute if a.name == "axis"), 0)
        dims = shapes[node.input[0]].dim if node.input[0] in shapes else []
        static = dims and -len(dims) <= axis < len(dims) and dims[axis].HasField("dim_value")
        lengths = _part_lengths(made, node, dims[axis].dim_value if static else None)
        if lengths is None or len(lengths) != len(node.output):
            return None
        start = 0
        for output, length in zip(node.output, lengths, strict=True):
            bounds = [f"{output}_start", f"{output}_end", f"{output}_axis"]
            for name, value in zip(bounds, (start, start + length, axis), strict=True):
                made.graph.initializer.append(
                    onnx.numpy_helper.from_array(np.array([value], np.int64), name)
                )
            start += length
            if output:
                nodes.append(
                    onnx.helper.make_node(
                        "Slice", [node.input[0], *bounds], [output], name=f"{node.name}_{output}"
                    )
                )
    del made.graph.node[:]
    made.graph.node.extend(nodes)
    return None if _holds_split(made) else made


def _holds_split(model: ModelProto) -> bool:
    ops = {node.op_type for node in _nodes(model)}
    return bool(ops & _SPLIT_OPS) or any(op.startswith("Sequence") for op in ops)


@dataclass(frozen=True)
class Reproduction:
    """A runtime's failure on an export, cut down to the failing node: the part of the export
    that computes that node, each Split in it written as Slices of constant bounds (where it
    holds Splits), and what the runtime and onnxruntime say to it."""

    export: Export
    runtime: str
    #: ``"original"``, or the target whose lowering failed.
    variant: str
    node: str
    #: The runtime's message names no node: ``node`` ends the shortest failing prefix.
    bisected: bool
    #: How many Splits the cut held, each now Slices.
    sliced: int
    #: The op types of the reproduction, and whether a Split or a sequence is left in it.
    ops: tuple[str, ...]
    has_split: bool
    said: str | None
    #: Whether the runtime says what it said to the whole export.
    same: bool
    #: Whether onnxruntime runs the reproduction.
    onnxruntime: bool
    #: The export's verdict lowered for the runtime's own target.
    own: str = ""
    #: The other exports (on the same runtime) that fail with the same message, up to the
    #: node it names: as exported (and most often lowered too), or lowered only.
    also: tuple[str, ...] = ()


def reproduce(
    entry: Corpus, runtime: Runtime, variant: str, message: str, workers: RuntimeWorkers
) -> Reproduction | None:
    """``message``'s failing node (named by it, or found by :func:`bisect`) cut out of
    ``entry``'s export (``variant``: the original, or the target it was lowered for), its
    Splits written as Slices, run on ``runtime`` and on onnxruntime."""
    model = onnx.load(str(entry.export.path))
    if variant != "original":
        model = splitops.lower_model(model, target=variant)  # type: ignore[arg-type]
    used = {value.name for value in model.graph.input}
    feeds = [{k: v for k, v in f.items() if k in used} for f in entry.feeds()]
    name = failing_node(message)
    bisected = name is None
    if name is None:
        name = bisect(model, runtime, feeds[0], message, workers)
    cut = None if name is None else cut_at(model, name)
    if cut is None or name is None:
        return None
    sliced = sum(1 for node in cut.graph.node if node.op_type == "Split")
    if sliced:
        cut = without_splits(cut) or cut
    said = _said(workers.run_each(runtime, cut.SerializeToString(), feeds))
    onnxruntime = workers.run_each(runtime_named("onnxruntime"), cut.SerializeToString(), feeds)
    ops = tuple(sorted({node.op_type for node in _nodes(cut)}))
    has_split = _holds_split(cut)
    return Reproduction(
        entry.export,
        runtime.name,
        variant,
        name,
        bisected,
        0 if has_split else sliced,
        ops,
        has_split,
        said,
        said is not None and same_failure(said, message),
        _said(onnxruntime) is None,
    )


def reproductions(
    corpus: Sequence[Corpus], rows: Sequence[Row], runtimes: Sequence[Runtime]
) -> list[Reproduction]:
    """For each runtime and each message its originals, or their lowerings for its own
    target, fail with (up to the node it names): the first export's failing node cut out and
    run again, with the other exports that fail so."""
    by_name = {runtime.name: runtime for runtime in runtimes}
    entries = {entry.export: entry for entry in corpus}
    failing: dict[tuple[str, str], list[tuple[Row, str, str]]] = {}
    for row in rows:
        target = by_name[row.runtime].target
        for variant in ("original", target):
            message = row.errors.get(variant)
            verdict = row.original if variant == "original" else row.lowered[variant]
            if verdict != "error" or message is None or message.startswith(FAILED):
                continue
            key = (row.runtime, re.sub(r"#\d+ \"[^\"]+\"|Node \S+ ", "", message))
            failing.setdefault(key, []).append((row, variant, message))
    found = []
    with RuntimeWorkers() as workers:
        for first, *others in failing.values():
            row, variant, message = first
            runtime = by_name[row.runtime]
            made = reproduce(entries[row.export], runtime, variant, message, workers)
            if made is None:
                continue
            variants: dict[str, set[str]] = {}
            for other, v, _ in others:
                if other.export != row.export:
                    variants.setdefault(other.export.label, set()).add(v)
            also = tuple(
                label + ("" if "original" in v else f" lowered for `{runtime.target}`")
                for label, v in variants.items()
            )
            found.append(replace(made, own=row.lowered[runtime.target], also=also))
    return found


# --- the report -----------------------------------------------------------------------------

_MARK = {"exact": "✓", "wrong": "✗", "error": "E", "refused": "R"}


def report(
    corpus: Sequence[Corpus],
    rows: Sequence[Row],
    runtimes: Sequence[Runtime],
    failures: Sequence[dict[str, Any]],
    seconds: float,
    found: Sequence[Reproduction] = (),
) -> str:
    versions = ", ".join(f"{r.name} {r.version()}" for r in runtimes)
    models = [entry for entry in corpus if entry.export.family == "transformers"]
    model_rows = [row for row in rows if row.export.family == "transformers"]
    lines = [
        HEADING,
        "",
        "Written by `python -m benchmarks.exports` (`harness/exports.py` says how the corpus "
        f"is built and judged) in {seconds:.0f} s, with {versions}. Tiny random-initialized "
        "`transformers` models, exported by torch's dynamo and TorchScript exporters of each "
        "torch release listed; a run is exact when its outputs match splitops' reference "
        f"engine on the original within rtol={RTOL:g}, atol={ATOL:g}.",
        "",
        "Built and run from the root of a clone; each earlier torch lives in a venv of its "
        "own, with a transformers release of its time (the scripted modules below say how "
        "they are built); `python -m benchmarks.exports` then runs what the cache holds:",
        "",
        "```bash",
        "python -m venv /tmp/torch2.4 && /tmp/torch2.4/bin/pip install torch==2.4.1 "
        "transformers==4.56.2 onnx onnxscript",
        "python -m benchmarks.exports --torch-env /tmp/torch2.4 --families transformers "
        "--build-only",
        "python -m benchmarks.exports",
        "```",
        "",
        "### The corpus",
        "",
        "| model | exporter | torch | transformers | opset | nodes | Split and sequence "
        "patterns | torch = spec |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for entry in models:
        e = entry.export
        lines.append(
            f"| {e.model} | {e.exporter} | {e.torch} | {e.transformers} | {e.opset} "
            f"| {entry.nodes} | {describe(entry.patterns)} | {entry.agreement} |"
        )
    if failures:
        lines += ["", "Exports that failed (no file):", ""]
        lines += [
            f"- {f['model']} {f['exporter']}{_asked(f)}, torch {f['torch']}: {f['error'][:160]}"
            for f in failures
        ]
    lines += [
        "",
        "### Model by model",
        "",
        "A cell reads the original's verdict, then each target's lowering in the order of "
        "the columns' heading: ✓ exact, ✗ wrong, E error, R the target refuses the model.",
        "",
    ]
    order = " ".join(TARGETS)
    for runtime in runtimes:
        mine = [row for row in model_rows if row.runtime == runtime.name]
        lines += [
            f"**{runtime.name}** (own target `{runtime.target}`)",
            "",
            f"| export | original | {order} |",
            "|---|---|---|",
        ]
        for row in mine:
            marks = " ".join(_MARK[row.lowered[t]] for t in TARGETS)
            lines.append(f"| {row.export.label} | {row.original} | {marks} |")
        lines.append("")
    totals = ["| runtime | original | " + " | ".join(f"`{t}`" for t in TARGETS) + " |"]
    totals.append("|---" * (2 + len(TARGETS)) + "|")
    for runtime in runtimes:
        mine = [row for row in model_rows if row.runtime == runtime.name]
        cells = [_count([row.original for row in mine])]
        cells += [_count([row.lowered[t] for row in mine]) for t in TARGETS]
        totals.append(f"| {runtime.name} | " + " | ".join(cells) + " |")
    lines += [
        "Totals, exports counted exact / wrong / error / refused:",
        "",
        *totals,
        "",
        "An export a runtime runs exactly that a lowering (for any target) does not keep "
        "exact: " + _listed(regressions(model_rows)) + ". An export a runtime's own target "
        "gives a wrong answer for: " + _listed(own_wrong(model_rows, runtimes)) + ".",
        "",
        *scripted_report(corpus, rows, runtimes),
        "### Failures cut down to the node a runtime names",
        "",
        "For each runtime and each error its originals, or their lowerings for its own "
        "target, fail with (once), the part of the first such model that computes the node "
        "the error names, run alone on that runtime and on onnxruntime. Where the error names "
        "no node, the node is the last of the shortest prefix of the graph (in its order) "
        "that fails with it. Each Split in the cut is written as Slices of constant bounds "
        "(by this benchmark, not by splitops' lowering). Where that cut holds no Split and no "
        "sequence, fails the same way, and runs on onnxruntime, the failure is the runtime's "
        "own limit, not the Split's. After each: the export lowered for the runtime's own "
        "target, and the other exports that fail with the same message (at a node of their "
        "own). Several are cut down further, to a node or a few, in the live tests "
        "`test_*_limits_without_split_or_sequences` and "
        "`test_tract_shapes_a_mask_anded_with_true_wrongly_without_split` "
        "(tests/onnx/rewrite/test_lower_sequences.py).",
        "",
    ]
    for made in found:
        lines.append(f"- {_reproduction(made)}")
    lines += [
        "",
        "### Why a run departs (each runtime's first error, by export)",
        "",
    ]
    for row in model_rows:
        # One line per message: the original's error is most often every target's too.
        by_message: dict[str, list[str]] = {}
        for name, said in row.errors.items():
            if name == "original" or row.lowered.get(name) == "error":
                by_message.setdefault(" ".join(said.split())[:220], []).append(name)
        for said, names in by_message.items():
            which = "original and every target" if len(names) == 1 + len(TARGETS) else (
                ", ".join(names))  # fmt: skip
            lines.append(f"- {row.export.label}, {row.runtime} ({which}): {said}")
    return "\n".join(lines) + "\n"


def _asked(failure: dict[str, Any]) -> str:
    """`` opset N`` for a scripted module's failed export (asked for opset N)."""
    return f" opset {failure['asked_opset']}" if "asked_opset" in failure else ""


def _unnamed(message: str) -> str:
    """``message`` without the node a runtime names (tract's ``#12 "name"``, TVM's ``Node
    name``) and its spacing: the same failure at other nodes reads the same."""
    return re.sub(r'#\d+ "[^"]+"|Node \S+ ', "", " ".join(message.split()))


def _where(exports: Sequence[Export]) -> str:
    """``exports`` of scripted modules in short: each module with its opsets and torches."""
    by_model: dict[str, list[Export]] = {}
    for export in exports:
        by_model.setdefault(export.model + (" control" if export.control else ""), []).append(
            export
        )
    return "; ".join(
        f"{model} (opset {', '.join(sorted({str(e.opset) for e in found}, key=int))}, torch "
        f"{', '.join(sorted({e.torch for e in found}, key=_release))})"
        for model, found in by_model.items()
    )


def scripted_report(
    corpus: Sequence[Corpus], rows: Sequence[Row], runtimes: Sequence[Runtime]
) -> list[str]:
    """The section of the scripted modules (where the corpus holds them): what each export
    holds, each runtime's matrix beside the control's verdict, the totals, and the messages
    each runtime fails originals, their lowerings for its own target and the controls with."""
    entries = [entry for entry in corpus if entry.export.family == "scripted"]
    if not entries:
        return []
    modules = [entry for entry in entries if not entry.export.control]
    controls = {
        (e.export.model, e.export.torch, e.export.opset): e for e in entries if e.export.control
    }
    by_export = {(row.export, row.runtime): row for row in rows}
    lines = [
        "### TorchScript-era scripted modules",
        "",
        "Small modules of `harness/scripted_models.py` written as users write them (`for t "
        "in x.split(...)`, list comprehensions over `x.split(1, dim=1)`, "
        "`torch.stack(list(x.unbind(1)))`, `x.chunk(k)` with a tensor `k`, "
        "`torch.tensor_split(x, idx)` with a tensor `idx`, a loop appending to a list, a "
        "module returning a list, sizes from `x.shape`, a ViT block whose qkv is chunked and "
        "whose heads are unbound in a loop), scripted (`torch.jit.script`: loops and lists "
        "stay, as Loops and sequences) or traced, exported by the TorchScript exporter of each "
        "torch listed at opsets 11, 13 and 18, their batch and sequence axes dynamic. Each runs "
        "at two sizes other than the one it was traced at; torch's outputs are the oracle. "
        "Each has a Split-free control: the same computation without split, chunk, unbind or "
        "lists (slices, indexing, a tensor carried through its loop), exported the same way. "
        "A runtime that fails a control fails for a limit of its own, not the Split's. Built "
        "with a venv for each torch:",
        "",
        "```bash",
        'python -m venv /tmp/torch2.4 && /tmp/torch2.4/bin/pip install torch==2.4.1 "numpy<2" onnx',
        "python -m benchmarks.exports --torch-env /tmp/torch2.4 --families scripted --build-only",
        "python -m venv /tmp/torch2.9 && /tmp/torch2.9/bin/pip install torch==2.9.1 onnx",
        "python -m benchmarks.exports --torch-env /tmp/torch2.9 --families scripted --build-only",
        "```",
        "",
        "| module | kind | torch | opset | nodes | Split and sequence patterns | the control's "
        "| splitops' engine gives torch's answer |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for entry in modules:
        e = entry.export
        control = controls.get((e.model, e.torch, e.opset))
        theirs = describe(control.patterns) if control else "no export"
        lines.append(
            f"| {e.model} | {e.kind} | {e.torch} | {e.opset} | {entry.nodes} "
            f"| {describe(entry.patterns)} | {theirs} | {entry.agreement} |"
        )
    lines += [
        "",
        "A cell reads the original's verdict, then each target's lowering in the order of the "
        "columns' heading, then the control's verdict as exported: ✓ exact, ✗ wrong, E error, "
        "R the target refuses the model, - no control.",
        "",
    ]
    order = " ".join(TARGETS)
    totals = [
        "| runtime | original | own target | `portable` | control |",
        "|---|---|---|---|---|",
    ]
    for runtime in runtimes:
        lines += [
            f"**{runtime.name}** (own target `{runtime.target}`)",
            "",
            f"| export | original | {order} | control |",
            "|---|---|---|---|",
        ]
        mine: list[Row] = []
        paired_rows: list[Row] = []
        for entry in modules:
            row = by_export.get((entry.export, runtime.name))
            if row is None:
                continue
            mine.append(row)
            control = controls.get((entry.export.model, entry.export.torch, entry.export.opset))
            paired = by_export.get((control.export, runtime.name)) if control else None
            if paired:
                paired_rows.append(paired)
            marks = " ".join(_MARK[row.lowered[t]] for t in TARGETS)
            mark = _MARK[paired.original] if paired else "-"
            lines.append(f"| {row.export.label} | {row.original} | {marks} | {mark} |")
        lines.append("")
        totals.append(
            f"| {runtime.name} | {_count([row.original for row in mine])} "
            f"| {_count([row.lowered[runtime.target] for row in mine])} "
            f"| {_count([row.lowered['portable'] for row in mine])} "
            f"| {_count([row.original for row in paired_rows])} |"
        )
    lines += [
        "Totals of the scripted modules, exports counted exact / wrong / error / refused:",
        "",
        *totals,
        "",
        "#### What each runtime says",
        "",
        "Each message a runtime fails a control with (its own limit), then each it fails an "
        "original or its lowering for the runtime's own target with, and each reason the "
        "target refuses, once, with the exports it concerns. A run that gives another answer "
        "than torch's reads *wrong answer*.",
        "",
    ]
    for runtime in runtimes:
        said: dict[tuple[str, str], list[Export]] = {}
        for entry in entries:
            row = by_export.get((entry.export, runtime.name))
            if row is None:
                continue
            variants = ["original"] if entry.export.control else ["original", runtime.target]
            for variant in variants:
                verdict = row.original if variant == "original" else row.lowered[variant]
                if verdict not in ("error", "wrong", "refused"):
                    continue
                what = "original" if variant == "original" else f"lowered for `{variant}`"
                what = "control" if entry.export.control else what
                message = "wrong answer" if verdict == "wrong" else row.errors.get(variant, "")
                said.setdefault((what, _unnamed(message)[:200]), []).append(entry.export)
        if not said:
            lines.append(f"- **{runtime.name}**: every control, original and own lowering runs")
            continue
        for (what, message), exports in sorted(said.items(), key=lambda kv: kv[0][0] != "control"):
            lines.append(f"- **{runtime.name}**, {what}: {message} — {_where(exports)}")
    return [*lines, ""]


def _reproduction(made: Reproduction) -> str:
    """One line of the failures cut down: where, what the cut holds, what each runtime says,
    and the other exports that fail with the same message."""
    target = next(r.target for r in RUNTIMES if r.name == made.runtime)
    if made.variant == "original":
        which, own = "", f"; the export lowered for `{target}`: {made.own}"
    else:
        which, own = f" lowered for `{made.variant}`", ""
    how = "found by cutting prefixes" if made.bisected else "named"
    holds = "holds a Split or a sequence" if made.has_split else "no Split, no sequence"
    sliced = f", its {made.sliced} Split(s) as Slices" if made.sliced else ""
    if made.said is None:
        outcome = "runs"
    else:
        said = " ".join(made.said.split())[:160]
        outcome = f"fails the same way: {said}" if made.same else f"fails otherwise: {said}"
    peer = "onnxruntime runs it" if made.onnxruntime else "onnxruntime fails it too"
    also = f". The same message in: {', '.join(made.also)}" if made.also else ""
    return (
        f"{made.runtime}, {made.export.label}{which}, node `{made.node}` ({how}): the cut"
        f"{sliced} ({', '.join(made.ops)}; {holds}) {outcome}; {peer}{own}{also}"
    )


def regressions(rows: Sequence[Row]) -> list[str]:
    """Each export a runtime ran exactly that a target's lowering does not keep exact, with
    the runtimes where it does not."""
    found: dict[tuple[str, str, str], list[str]] = {}
    for row in rows:
        if row.original != "exact":
            continue
        for target, verdict in row.lowered.items():
            if verdict != "exact":
                found.setdefault((row.export.label, target, verdict), []).append(row.runtime)
    return [
        f"{label} lowered for `{target}`: exact -> {verdict} on {', '.join(names)}"
        for (label, target, verdict), names in found.items()
    ]


def own_wrong(rows: Sequence[Row], runtimes: Sequence[Runtime]) -> list[str]:
    """Each export that a runtime's own target's lowering gives a wrong answer for."""
    targets = {runtime.name: runtime.target for runtime in runtimes}
    return [
        f"{row.export.label} on {row.runtime}"
        for row in rows
        if row.lowered[targets[row.runtime]] == "wrong"
    ]


def _listed(found: Sequence[str]) -> str:
    return "; ".join(found) if found else "none"


def _count(verdicts: Sequence[str]) -> str:
    found = Counter(verdicts)
    return " / ".join(str(found[v]) for v in VERDICTS)
