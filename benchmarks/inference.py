"""``python -m benchmarks.inference``: shape inference at the size of real models.

Times ``splitops.infer_shapes`` against ``onnx.shape_inference.infer_shapes`` (its single C++
pass, with and without ``data_prop``) and onnxruntime's ``SymbolicShapeInference`` (where
installed) on:

- **chains**: Split-18 ``num_outputs=2`` (the default axis, 0: the dynamic ``B``), then
  Concat and 8 Relu, chained *k* times on an input ``[B, 64]``; *k* = 10, 100, 200, 400
  (100 to 4,000 nodes); and the same chains split on the static axis 1;
- a **wide** model: 2,000 Split-18 side by side on one input, their halves multiplied and
  summed (4,001 nodes);
- the **corpus** of exported models (:mod:`harness.corpus`: GPT-2, Phi-3, GPTBigCode,
  CodeGen, GPT-NeoX and small modules, both torch exporters).

All peers run in this process, one after the other within each round, so that a change of
load between rounds hits them alike; a ratio is the median of the per-round ratios. The
corpus also gets a knowledge table: every dim of every Split and SplitToSequence output, as
each peer infers it, judged against the shapes onnxruntime executes at two input sizes
(:func:`split_dim_verdicts`). It writes ``inference.json`` and ``inference.md`` into
``benchmarks/results/latest/`` (``--out benchmarks/results`` replaces the committed ones)::

    python -m benchmarks.inference                         # about a minute
    python -m benchmarks.inference --quick --out /tmp/inf  # seconds: small models, 1 round
    python -m benchmarks.inference --corpus /tmp/corpus    # reuse an exported corpus

The targets print PASS or FAIL and never change the exit status, which is 1 only when a dim
that splitops infers contradicts an executed shape (another peer's are reported).

>>> model = chain_model(2)
>>> len(model.graph.node), [n.op_type for n in model.graph.node[:3]]
(20, ['Split', 'Concat', 'Relu'])
>>> len(wide_model(3).graph.node)
7
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import onnx
import onnx.shape_inference
from harness.shapes import (
    KNOWN,
    WRONG,
    executed_shapes,
    split_dim_verdicts,
    without_shapes,
)
from onnx import ModelProto, TensorProto, helper

from .folders import add_out, default_out
from .machine import collect, describe
from .units import format_time

__all__ = [
    "PEERS",
    "Peer",
    "Target",
    "chain_model",
    "evaluate",
    "main",
    "split_dim_verdicts",
    "time_peers",
    "wide_model",
]


#: Opset of the generated models.
OPSET = 18
#: Chains of so many links (10 nodes each), and the quick run's.
CHAINS, QUICK_CHAINS = (10, 100, 200, 400), (10, 40)
#: Split nodes side by side in the wide model, and the quick run's.
WIDE, QUICK_WIDE = 2000, 100
#: Rounds per model (each peer once per round), and the quick run's.
ROUNDS, QUICK_ROUNDS = 7, 1
#: Input sizes the corpus models are executed at: (batch, seq).
SIZES = ((2, 5), (3, 7))


# --- models -----------------------------------------------------------------------------------


def chain_model(links: int, axis: int = 0) -> ModelProto:
    """``links`` times: Split-18 into 2 (``num_outputs=2``) on ``axis`` of ``[B, 64]``, Concat
    of the halves, 8 Relu; 10 nodes a link. Axis 0 (the default) is the dynamic ``B``."""
    nodes = []
    value = "x"
    for i in range(links):
        split = helper.make_node(
            "Split", [value], [f"a{i}", f"b{i}"], num_outputs=2, name=f"split{i}",
            **({"axis": axis} if axis else {}),
        )  # fmt: skip
        nodes += [split, helper.make_node("Concat", [f"a{i}", f"b{i}"], [f"c{i}"], axis=axis)]
        value = f"c{i}"
        for j in range(8):
            nodes.append(helper.make_node("Relu", [value], [f"r{i}_{j}"]))
            value = f"r{i}_{j}"
    return _model(nodes, [value], f"chain{links}")


def wide_model(branches: int) -> ModelProto:
    """``branches`` Split-18 of one input ``[B, 64]`` into 2 on axis 1, each pair of halves
    multiplied, all products summed: ``2 * branches + 1`` nodes."""
    nodes = []
    for i in range(branches):
        nodes.append(helper.make_node("Split", ["x"], [f"a{i}", f"b{i}"], axis=1, num_outputs=2))
        nodes.append(helper.make_node("Mul", [f"a{i}", f"b{i}"], [f"m{i}"]))
    nodes.append(helper.make_node("Sum", [f"m{i}" for i in range(branches)], ["y"]))
    return _model(nodes, ["y"], f"wide{branches}")


def _model(nodes: list[onnx.NodeProto], outputs: list[str], name: str) -> ModelProto:
    graph = helper.make_graph(
        nodes,
        name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", 64])],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


# --- peers ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Peer:
    """One shape inference: a name and a function from a model to the inferred model."""

    name: str
    infer: Callable[[ModelProto], ModelProto]
    module: str = "onnx"

    def available(self) -> bool:
        return importlib.util.find_spec(self.module) is not None


def _splitops(model: ModelProto) -> ModelProto:
    import splitops

    return splitops.infer_shapes(model)


def _ort_tool(model: ModelProto) -> ModelProto:
    from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference

    inferred: ModelProto = SymbolicShapeInference.infer_shapes(model, auto_merge=True)
    return inferred


#: The peers, splitops first; ``onnx`` is onnx's default pass, the targets' baseline.
PEERS = (
    Peer("splitops", _splitops, "splitops"),
    Peer("onnx", onnx.shape_inference.infer_shapes),
    Peer("onnx data_prop", lambda m: onnx.shape_inference.infer_shapes(m, data_prop=True)),
    Peer("onnxruntime tool", _ort_tool, "onnxruntime"),
)


def time_peers(
    model: ModelProto, peers: Sequence[Peer], rounds: int
) -> dict[str, list[float | None]]:
    """Seconds each peer takes on ``model``, per round (``None`` where it failed); each
    peer runs once before the rounds, untimed (imports, caches)."""
    times: dict[str, list[float | None]] = {peer.name: [] for peer in peers}
    failed = {peer.name for peer in peers if _run(peer, model) is None}
    for index in range(rounds):
        order = peers if index % 2 == 0 else list(reversed(peers))
        for peer in order:
            if peer.name in failed:
                times[peer.name].append(None)
                continue
            began = time.perf_counter()
            peer.infer(model)
            times[peer.name].append(time.perf_counter() - began)
    return times


def _run(peer: Peer, model: ModelProto) -> ModelProto | None:
    """``peer`` on ``model``, or ``None`` where it fails (onnxruntime's tool does on some
    corpus models); its warnings are silenced."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return peer.infer(model)
    except Exception:  # a peer that fails is reported, not fatal
        return None


#: The two ratios of each row: splitops' time over onnx's, onnxruntime's tool's over splitops'.
_OVER_ONNX, _ORT_OVER = "splitops / onnx", "onnxruntime tool / splitops"


def _median(values: Sequence[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return statistics.median(kept) if kept else None


def _paired(times: dict[str, list[float | None]], top: str, bottom: str) -> float | None:
    """The median over rounds of ``top``'s time over ``bottom``'s."""
    ratios = [
        a / b
        for a, b in zip(times.get(top, []), times.get(bottom, []), strict=False)
        if a is not None and b is not None and b > 0
    ]
    return statistics.median(ratios) if ratios else None


@dataclass
class Knowledge:
    """Split output dims of a model, counted per peer: known, unknown, wrong, and the dims
    that the peer knows and splitops does not (``ahead``)."""

    known: dict[str, int] = field(default_factory=dict)
    unknown: dict[str, int] = field(default_factory=dict)
    wrong: dict[str, int] = field(default_factory=dict)
    ahead: dict[str, int] = field(default_factory=dict)

    def add(self, peer: str, verdicts: dict[str, list[str]], ours: dict[str, list[str]]) -> None:
        for name, row in verdicts.items():
            mine = ours[name]
            for k, verdict in enumerate(row):
                bucket = {KNOWN: self.known, WRONG: self.wrong}.get(verdict, self.unknown)
                bucket[peer] = bucket.get(peer, 0) + 1
                theirs_known = verdict == KNOWN
                ours_known = len(mine) == len(row) and mine[k] == KNOWN
                if theirs_known and not ours_known:
                    self.ahead[peer] = self.ahead.get(peer, 0) + 1
            self.known.setdefault(peer, 0)


# --- targets ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """One target: what it asks, the measured figure, the bound, PASS/FAIL/n/a."""

    id: str
    text: str
    measured: float | None
    bound: str
    status: str = "n/a"
    detail: str = ""

    def line(self) -> str:
        figure = "-" if self.measured is None else f"{self.measured:.3g}"
        line = f"{self.status:4}  {self.id} {self.text}: {figure} (target {self.bound})."
        return f"{line} {self.detail}".rstrip()


def _verdict(value: float | None, bound: str) -> str:
    if value is None:
        return "n/a"
    sign, limit = bound.split()
    ok = {"<=": value <= float(limit), ">=": value >= float(limit), "<": value < float(limit)}
    return "PASS" if ok[sign] else "FAIL"


def evaluate(rows: list[dict[str, Any]], check_seconds: float | None, knowledge: Knowledge,
             *, quick: bool) -> list[Target]:  # fmt: skip
    """The targets, from the timed rows, the timed ``splitops check`` and the corpus counts."""
    chains = sorted((r for r in rows if r["kind"] == "chain"), key=lambda r: r["links"])
    longest = chains[-1]
    hundred = next((r for r in chains if r["links"] == 100), chains[0])
    growth = None
    if longest["median"].get("splitops") and hundred["median"].get("splitops"):
        growth = longest["median"]["splitops"] / hundred["median"]["splitops"]
    links, fewer = longest["links"], hundred["links"]
    counted = bool(knowledge.known)
    targets = [
        Target("I1", f"chain of {links} Splits, splitops / onnx",
               longest["ratio"].get(_OVER_ONNX), "<= 10"),
        Target("I2", f"chain of {links} Splits, onnxruntime tool / splitops",
               longest["ratio"].get(_ORT_OVER), ">= 2"),
        Target("I3", f"splitops, chain of {links} / chain of {fewer} Splits", growth,
               f"<= {1.25 * links / fewer:g}", f"{links // fewer} times the nodes, at most "
               f"{1.25 * links / fewer:g} times the time"),
        Target("I4", "splitops check of the largest corpus model, s (start-up included)",
               check_seconds, "< 2"),
        Target("I5", "corpus split dims that onnx or onnxruntime's tool knows and splitops not",
               float(sum(knowledge.ahead.values())) if counted else None, "<= 0"),
        Target("I6", "corpus split dims that splitops infers wrong",
               float(knowledge.wrong.get("splitops", 0)) if counted else None, "<= 0"),
    ]  # fmt: skip
    judged = [
        Target(t.id, t.text, t.measured, t.bound, _verdict(t.measured, t.bound), t.detail)
        for t in targets
    ]
    if quick:  # a round of small models measures no time
        return [t if t.id in ("I5", "I6") else _not_measured(t) for t in judged]
    return judged


def _not_measured(target: Target) -> Target:
    return Target(target.id, target.text, target.measured, target.bound, "n/a", target.detail)


# --- the run ----------------------------------------------------------------------------------


def _row(name: str, kind: str, model: ModelProto, peers: Sequence[Peer], rounds: int,
         **extra: Any) -> dict[str, Any]:  # fmt: skip
    times = time_peers(model, peers, rounds)
    splits = sum(n.op_type in ("Split", "SplitToSequence") for n in model.graph.node)
    return {
        "model": name,
        "kind": kind,
        "nodes": len(model.graph.node),
        "splits": splits,
        "seconds": times,
        "median": {p: _median(t) for p, t in times.items()},
        "ratio": {
            _OVER_ONNX: _paired(times, "splitops", "onnx"),
            _ORT_OVER: _paired(times, "onnxruntime tool", "splitops"),
        },
        **extra,
    }


def _corpus(folder: Path, quick: bool) -> list[tuple[Any, Path]]:
    """The corpus entries and their files (exported into ``folder`` when not there yet)."""
    if (
        importlib.util.find_spec("torch") is None
        or importlib.util.find_spec("transformers") is None
    ):
        return []
    from harness import corpus

    entries = [e for e in corpus.CORPUS if not quick or e.source == "hand-written"]
    return [(entry, corpus.export(entry, folder)) for entry in entries]


def _check_seconds(path: Path, repeats: int) -> float | None:
    """Wall time of ``splitops check PATH`` in a fresh process, the least of ``repeats``."""
    command = shutil.which("splitops")
    argv = [command] if command else [sys.executable, "-m", "splitops"]
    best = None
    for _ in range(repeats):
        began = time.perf_counter()
        done = subprocess.run([*argv, "check", str(path)], capture_output=True, check=False)
        took = time.perf_counter() - began
        if done.returncode not in (0, 1):
            return None
        best = took if best is None else min(best, took)
    return best


def _table(rows: list[dict[str, Any]], peers: Sequence[Peer]) -> tuple[list[str], list[list[str]]]:
    header = ["model", "nodes", "Splits", *(p.name for p in peers), _OVER_ONNX, _ORT_OVER]
    body = []
    for row in rows:
        cells = [row["model"], f"{row['nodes']:,}", f"{row['splits']:,}"]
        for peer in peers:
            median = row["median"].get(peer.name)
            cells.append("failed" if median is None else format_time(median))
        for key in (_OVER_ONNX, _ORT_OVER):
            ratio = row["ratio"].get(key)
            cells.append("-" if ratio is None else f"{ratio:.2g}x")
        body.append(cells)
    return header, body


def _markdown_table(header: list[str], body: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(cells) + " |" for cells in body])


def _knowledge_table(knowledge: Knowledge, peers: Sequence[Peer]) -> str:
    header = ["peer", "known", "unknown", "wrong", "known by it, not by splitops"]
    body = [
        [p.name, str(knowledge.known.get(p.name, 0)), str(knowledge.unknown.get(p.name, 0)),
         str(knowledge.wrong.get(p.name, 0)),
         "-" if p.name == "splitops" else str(knowledge.ahead.get(p.name, 0))]
        for p in peers
    ]  # fmt: skip
    return _markdown_table(header, body)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; 1 if a peer inferred a dim that execution contradicts."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.inference", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small models, one round")
    add_out(parser)
    parser.add_argument("--corpus", type=Path, default=None, help="exported corpus folder")
    options = parser.parse_args(argv)
    quick = options.quick
    rounds = QUICK_ROUNDS if quick else ROUNDS
    peers = [peer for peer in PEERS if peer.available()]
    started = time.time()
    print(describe(collect()), flush=True)
    rows = []
    for axis in (0, 1):
        for links in QUICK_CHAINS if quick else CHAINS:
            name = f"chain {links}" + ("" if axis == 0 else " (axis 1)")
            rows.append(_row(name, "chain" if axis == 0 else "chain-static",
                             chain_model(links, axis), peers, rounds, links=links))  # fmt: skip
            print(f"  {name}: {rows[-1]['median']}", flush=True)
    width = QUICK_WIDE if quick else WIDE
    rows.append(_row(f"wide {width}", "wide", wide_model(width), peers, rounds))
    folder = options.corpus or Path(
        os.environ.get("SPLITOPS_CORPUS_DIR") or tempfile.mkdtemp(prefix="corpus-")
    )
    knowledge = Knowledge()
    contradicted = []
    largest: tuple[int, Path] | None = None
    for entry, path in _corpus(folder, quick):
        model = onnx.load(os.fspath(path))
        rows.append(_row(entry.file_name.removesuffix(".onnx"), "corpus", model, peers, rounds))
        if largest is None or len(model.graph.node) > largest[0]:
            largest = (len(model.graph.node), path)
        feeds = [
            {name: t.numpy() for name, t in zip(entry.input_names, entry.inputs(b, s), strict=True)}
            for b, s in SIZES
        ]
        executed = executed_shapes(model, feeds)
        for variant in (model, without_shapes(model)):
            verdicts = {p.name: split_dim_verdicts(_run(p, variant), executed) for p in peers}
            for peer in peers:
                knowledge.add(peer.name, verdicts[peer.name], verdicts["splitops"])
                if any(WRONG in row for row in verdicts[peer.name].values()):
                    contradicted.append(f"{peer.name} on {entry.file_name}")
    check = None if largest is None else _check_seconds(largest[1], 1 if quick else 3)
    targets = evaluate(rows, check, knowledge, quick=quick)
    header, body = _table(rows, peers)
    out = options.out or default_out(quick=quick)
    out.mkdir(parents=True, exist_ok=True)
    machine = collect()
    document = {
        "machine": machine,
        "settings": {"quick": quick, "rounds": rounds, "seconds": round(time.time() - started, 1)},
        "rows": rows,
        "knowledge": knowledge.__dict__,
        "contradicted": contradicted,
        "targets": [t.__dict__ for t in targets],
    }
    (out / "inference.json").write_text(json.dumps(document, indent=1) + "\n")
    markdown = [
        "# Shape inference benchmark", "", describe(machine), "",
        f"{rounds} rounds, every peer once per round in one process; a cell is the median time, "
        "a ratio the median of the per-round ratios.", "", "## Targets", "",
        "| target | measured | bound | result |", "|---|---|---|---|",
        *(f"| {t.id}. {t.text} | {'-' if t.measured is None else f'{t.measured:.3g}'} | "
          f"{t.bound} | {t.status} |" for t in targets),
        "", "## Times", "", _markdown_table(header, body), "",
        "## Split output dims of the corpus, as exported and without declared shapes", "",
        "Each dim of each Split and SplitToSequence output, judged against onnxruntime's "
        f"execution at (batch, seq) = {', '.join(map(str, SIZES))}.", "",
        _knowledge_table(knowledge, peers), "",
    ]  # fmt: skip
    (out / "inference.md").write_text("\n".join(markdown))
    print(_markdown_table(header, body))
    print("\n".join(["", *(t.line() for t in targets)]))
    if contradicted:
        print("Inferred dims that execution contradicts: " + "; ".join(contradicted))
    print(f"Wrote inference.json, inference.md to {out}")
    return 1 if any(c.startswith("splitops") for c in contradicted) else 0


if __name__ == "__main__":
    sys.exit(main())
