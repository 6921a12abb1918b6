"""``python -m benchmarks.models``: whole exported models, on every engine.

For each model of the exported corpus (:mod:`harness.corpus`): torch (the module itself),
onnxruntime on the original model, splitops' onnxruntime engine on the lowered model
(``splitops.backend.prepare(model, engine="onnxruntime")``, what ``splitops run --engine
onnxruntime`` runs once the model is loaded), and splitops' reference engine. The target:
the onnxruntime engine within 1.2 times onnxruntime on the original model, wherever
onnxruntime runs the original.

How it is measured: one process, one thread everywhere (torch, onnxruntime's intra- and
inter-op threads, the BLAS libraries). Each round times every peer once, in a shuffled
order, each over enough calls to last about 20 ms (the reference engine: at least one call);
a peer's figure is its median over the rounds. The ratio judged is the median over rounds of
the engine's time over onnxruntime's *in the same round*, so that load from other processes
on a shared machine falls on both sides. Before timing, every peer's outputs are compared
with torch's (to 1e-4) and the engine's with onnxruntime's on the original model.

    python -m benchmarks.models                      # every model; writes results/latest/models.*
    python -m benchmarks.models --only gpt2 glu      # some of them
    python -m benchmarks.models --quick --out /tmp/m # a smoke run: few rounds, no target verdicts
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .folders import LATEST, add_out
from .machine import collect, describe
from .units import format_time

__all__ = ["BOUND", "ModelResult", "main", "measure"]


#: The target: the onnxruntime engine at most this many times onnxruntime's time.
BOUND = 1.2

#: Rounds of the full and the quick run; the time each peer's batch of calls aims at.
ROUNDS, QUICK_ROUNDS, BATCH_SECONDS = 15, 3, 0.02

#: The input of each model: (batch, sequence length).
SIZE = (2, 16)

ATOL = 1e-4


@dataclass
class ModelResult:
    """One model: its times per peer (median seconds per call), the paired ratio, checks."""

    model: str
    nodes: int
    lowered_nodes: int
    lowering_seconds: float
    times: dict[str, float] = field(default_factory=dict)
    #: Median over rounds of (engine / onnxruntime on the original), or None.
    ratio: float | None = None
    #: What onnxruntime said where it cannot run the original model.
    original_fails: str | None = None
    checks: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        if self.ratio is None:
            return "n/a"
        return "PASS" if self.ratio <= BOUND else "FAIL"


def _options() -> Any:
    """onnxruntime's session options here: one thread, fatal errors only."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 4
    return options


def _session(model: Any) -> Any:
    import onnxruntime

    return onnxruntime.InferenceSession(
        model.SerializeToString(), _options(), providers=["CPUExecutionProvider"]
    )


def _timed(call: Callable[[], Any], loops: int) -> float:
    began = time.perf_counter()
    for _ in range(loops):
        call()
    return (time.perf_counter() - began) / loops


def _loops(call: Callable[[], Any]) -> int:
    """How many calls last about BATCH_SECONDS (at least one)."""
    once = _timed(call, 1)
    return max(1, int(BATCH_SECONDS / max(once, 1e-7)))


def _close(got: Sequence[Any], want: Sequence[Any]) -> bool:
    return len(got) == len(want) and all(
        np.shape(g) == np.shape(w) and np.allclose(g, w, atol=ATOL, rtol=0)
        for g, w in zip(got, want, strict=True)
    )


def measure(entry: Any, path: Path, rounds: int) -> ModelResult:
    """Time one corpus model on every peer; check their outputs first."""
    import onnx
    import torch

    import splitops
    from splitops.onnx.run.backend import OnnxruntimeRep

    model = onnx.load(os.fspath(path))
    began = time.perf_counter()
    lowered = splitops.lower_model(model)
    lowering = time.perf_counter() - began
    result = ModelResult(path.name, len(model.graph.node), len(lowered.graph.node), lowering)
    module = entry.build()
    args = entry.inputs(*SIZE)
    feeds = {name: arg.numpy() for name, arg in zip(entry.input_names, args, strict=True)}
    with torch.no_grad():
        expected = module(*args)
    want = [t.numpy() for t in ((expected,) if isinstance(expected, torch.Tensor) else expected)]

    def torch_call() -> Any:
        with torch.no_grad():
            return module(*args)

    engine = splitops.backend.prepare(model, engine="onnxruntime", session_options=_options())
    assert isinstance(engine, OnnxruntimeRep)
    assert engine.engine == "onnxruntime"
    reference = splitops.backend.prepare(model)
    peers: dict[str, Callable[[], Any]] = {
        "torch": torch_call,
        "splitops --engine onnxruntime": lambda: engine.run(feeds),
        "splitops reference engine": lambda: reference.run(feeds),
    }
    try:
        original = _session(model)
        original_out = original.run(None, feeds)
        peers["onnxruntime (original)"] = lambda: original.run(None, feeds)
    except Exception as error:  # onnxruntime cannot run the original model
        result.original_fails = " ".join(str(error).split())[:200]
        original_out = None
    engine_out = engine.run(feeds)
    if not _close(engine_out, want):
        result.checks.append("the engine's outputs differ from torch's")
    if original_out is not None and not _close(engine_out, original_out):
        result.checks.append("the engine's outputs differ from onnxruntime's on the original")
    if not _close(reference.run(feeds), want):
        result.checks.append("the reference engine's outputs differ from torch's")
    loops = {name: _loops(call) for name, call in peers.items()}
    loops["splitops reference engine"] = max(1, loops["splitops reference engine"] // 4)
    samples: dict[str, list[float]] = {name: [] for name in peers}
    ratios = []
    order = list(peers)
    shuffle = random.Random(0)
    for _ in range(rounds):
        shuffle.shuffle(order)
        this_round = {name: _timed(peers[name], loops[name]) for name in order}
        for name, seconds in this_round.items():
            samples[name].append(seconds)
        if "onnxruntime (original)" in this_round:
            ratios.append(
                this_round["splitops --engine onnxruntime"] / this_round["onnxruntime (original)"]
            )
    result.times = {name: statistics.median(values) for name, values in samples.items()}
    result.ratio = statistics.median(ratios) if ratios else None
    return result


def _warm_up() -> None:
    """Import and cache what lowering uses, so that the first model's lowering time is its
    own."""
    from onnx import TensorProto, helper

    import splitops

    node = helper.make_node("Split", ["x"], ["a", "b"], num_outputs=2)
    graph = helper.make_graph(
        [node],
        "warm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [None]) for n in "ab"],
    )
    splitops.lower_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]))


COLUMNS = [
    "torch",
    "onnxruntime (original)",
    "splitops --engine onnxruntime",
    "splitops reference engine",
]


def markdown(results: list[ModelResult], machine: dict[str, Any], settings: dict[str, Any]) -> str:
    """``models.md``: the machine, how it was measured, and one row per model."""
    passed = sum(r.verdict == "PASS" for r in results)
    judged = sum(r.verdict != "n/a" for r in results)
    worst = max((r.ratio for r in results if r.ratio is not None), default=None)
    lines = [
        "# Whole models: torch, onnxruntime, and splitops' two engines",
        "",
        describe(machine),
        "",
        f"Input (batch, sequence) = {SIZE}; {settings['rounds']} interleaved rounds in one "
        f"process; each cell the median time per call (ratio to onnxruntime on the original "
        f"model). Target: the onnxruntime engine <= {BOUND}x onnxruntime on the original, "
        f"judged on the median of per-round ratios: {passed} of {judged} models pass"
        + (f", worst {worst:.2f}." if worst is not None else "."),
        "",
        "| model | nodes (lowered, portable) | lowering | "
        + " | ".join(COLUMNS)
        + " | engine / onnxruntime | result |",
        "|---|---|---|" + "---|" * len(COLUMNS) + "---|---|",
    ]
    for r in results:
        base = r.times.get("onnxruntime (original)")
        cells = []
        for column in COLUMNS:
            value = r.times.get(column)
            if value is None:
                cells.append("fails" if column == "onnxruntime (original)" else "-")
                continue
            ratio = f" (x{value / base:.2g})" if base and column != "onnxruntime (original)" else ""
            cells.append(format_time(value) + ratio)
        ratio_text = "-" if r.ratio is None else f"{r.ratio:.2f}"
        lines.append(
            f"| {r.model} | {r.nodes} ({r.lowered_nodes}) | {format_time(r.lowering_seconds)} | "
            + " | ".join(cells)
            + f" | {ratio_text} | {r.verdict if not settings['quick'] else 'n/a'} |"
        )
    failures = [f"- {r.model}: {c}" for r in results for c in r.checks]
    lines += ["", "Outputs: " + ("every engine agrees with torch." if not failures else "")]
    lines += failures
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; 1 if an output check failed (targets never change the status)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.models", description=__doc__)
    parser.add_argument("--corpus", type=Path, help="the exported corpus folder (reused)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="these models only")
    parser.add_argument("--quick", action="store_true", help="a smoke run: few rounds")
    add_out(parser, default=LATEST)
    options = parser.parse_args(argv)
    import torch

    from harness import corpus

    torch.set_num_threads(1)
    folder = options.corpus or Path(
        os.environ.get("SPLITOPS_CORPUS_DIR") or Path(tempfile.gettempdir()) / "splitops-corpus"
    )
    entries = [e for e in corpus.CORPUS if not options.only or e.name in options.only]
    rounds = QUICK_ROUNDS if options.quick else ROUNDS
    began = time.perf_counter()
    results = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        paths = corpus.export_all(folder, sorted({e.name for e in entries}))
    by_name = {path.name: path for path in paths}
    _warm_up()
    for entry in entries:
        result = measure(entry, by_name[entry.file_name], rounds)
        results.append(result)
        print(
            f"{result.model:<35} engine/onnxruntime "
            f"{'-' if result.ratio is None else f'{result.ratio:.2f}':>5} "
            + "  ".join(f"{k}: {format_time(v)}" for k, v in result.times.items()),
            flush=True,
        )
    settings = {
        "rounds": rounds,
        "quick": options.quick,
        "seconds": round(time.perf_counter() - began, 1),
    }
    machine = collect()
    options.out.mkdir(parents=True, exist_ok=True)
    document = {
        "machine": machine,
        "settings": settings,
        "bound": BOUND,
        "results": [asdict(r) | {"verdict": r.verdict} for r in results],
    }
    (options.out / "models.json").write_text(json.dumps(document, indent=2) + "\n")
    text = markdown(results, machine, settings)
    (options.out / "models.md").write_text(text)
    print(text)
    return 1 if any(r.checks for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
