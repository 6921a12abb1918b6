"""``python -m benchmarks.weights``: the commands on models whose weights lie in files, as
whole processes: time and peak memory of ``check``, ``lower`` and ``convert``.

Two models:

- **GPT-2**: a random-init ``transformers.GPT2LMHeadModel`` of ``GPT2Config``'s defaults
  (124M parameters, 12 Splits), exported by torch's dynamo exporter with its weights as
  external data (497 MB), as a user exports one. Exporting takes a minute or two;
  ``--cache DIR`` keeps the export for the next run.
- **5.2 GB**: 13 weights of 10,000 x 10,000 floats in one sparse file of 5.2 GB (no disk
  used), each multiplied by the input, its result cut by a Split-18 into 3 uneven parts and
  by a Split of the sizes of a small initializer: real Splits, their sizes from small
  tensors, weights over the default ``max_external_bytes`` (4 GiB).

Each command writes into another folder than the model's, so that ``lower`` and ``convert``
place the data files there (cloned, or copied by the kernel: the sparse file stays sparse).
A run alternates the commands for a number of rounds; a cell is the median time and the
largest peak resident memory (``wait4``). ``--baseline SRC`` runs every command with
another splitops source tree too (``--baseline ../main/src``: the code before a change), in
the same rounds; a command that exits with an error is reported as its one line.

Written to ``benchmarks/results/weights.md`` and ``weights.json`` (``--out`` names another
folder; ``--quick``: a sparse model of 1.2 GB only, one round).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .folders import add_out
from .machine import collect, describe
from .scale import run, write_results

#: Each command's arguments; it writes into ``{out}``, another folder than the model's.
COMMANDS = {
    "check": ["check", "{model}"],
    "lower": ["lower", "{model}", "-o", "{out}/lowered.onnx"],
    "convert": ["convert", "{model}", "--opset", "{opset}", "-o", "{out}/converted.onnx"],
}

#: The target: a model of 5.2 GB of weights lowered and converted in less peak memory.
PEAK_BOUND = 400 * 2**20


def sparse_model(folder: Path, weights: int, side: int = 10_000) -> Path:
    """``weights`` weights of ``side`` x ``side`` floats in one sparse file ``weights.bin``;
    each multiplied by ``x``, its result cut by a Split-18 into 3 uneven parts and by a
    Split of the sizes of a small initializer. Saved as ``folder/sparse.onnx``."""
    each = side * side * 4
    nodes, initializers, outputs = [], [], []
    thirds = [-(-side // 3)] * 2 + [side - 2 * -(-side // 3)]
    for index in range(weights):
        weight = TensorProto(
            name=f"w{index}",
            data_type=TensorProto.FLOAT,
            dims=[side, side],
            data_location=TensorProto.EXTERNAL,
        )
        for key, value in (("location", "weights.bin"), ("offset", index * each), ("length", each)):
            weight.external_data.add(key=key, value=str(value))
        sizes = np.array([side * 2 // 5, side - side * 2 // 5], dtype=np.int64)
        initializers += [weight, numpy_helper.from_array(sizes, f"sizes{index}")]
        parts = [f"t{index}_{k}" for k in range(3)] + [f"s{index}_{k}" for k in range(2)]
        nodes += [
            helper.make_node("MatMul", ["x", f"w{index}"], [f"h{index}"]),
            helper.make_node(
                "Split", [f"h{index}"], parts[:3], axis=1, num_outputs=3, name=f"thirds{index}"
            ),
            helper.make_node(
                "Split", [f"h{index}", f"sizes{index}"], parts[3:], axis=1, name=f"sized{index}"
            ),
        ]
        widths = [*thirds, *sizes.tolist()]
        outputs += [
            helper.make_tensor_value_info(name, TensorProto.FLOAT, ["batch", width])
            for name, width in zip(parts, widths, strict=True)
        ]
    graph = helper.make_graph(
        nodes,
        "sparse",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", side])],
        outputs,
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    folder.mkdir(parents=True, exist_ok=True)
    onnx.save(model, folder / "sparse.onnx")
    with (folder / "weights.bin").open("wb") as data:
        data.truncate(weights * each)
    onnx.checker.check_model(folder / "sparse.onnx", full_check=True)
    return folder / "sparse.onnx"


#: Exports GPT-2 to argv[1], in a process of its own (torch and transformers stay out of
#: the measuring one).
_EXPORT_GPT2 = """
import sys, warnings
import torch, transformers
warnings.simplefilter("ignore")
config = transformers.GPT2Config(use_cache=False, attn_implementation="eager")
torch.manual_seed(0)
model = transformers.GPT2LMHeadModel(config).eval()

class Logits(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids):
        return self.model(input_ids=ids, return_dict=False)[0]

batch, sequence = torch.export.Dim("batch"), torch.export.Dim("sequence")
torch.onnx.export(
    Logits(model), (torch.zeros((2, 5), dtype=torch.int64),), sys.argv[1], dynamo=True,
    external_data=True, input_names=["input_ids"], output_names=["logits"],
    dynamic_shapes=({0: batch, 1: sequence},), verbose=False,
)
"""


def gpt2(folder: Path) -> Path:
    """``folder/gpt2.onnx`` with its external data, exported unless already there."""
    path = folder / "gpt2.onnx"
    if not (path.exists() and (folder / "gpt2.onnx.data").exists()):
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-c", _EXPORT_GPT2, str(path)], check=True)
    return path


def _environment(source: str | None) -> dict[str, str]:
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [source, env.get("PYTHONPATH")]))
    return env


def _error_line(command: Sequence[str], env: dict[str, str]) -> str:
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    lines = [line for line in done.stderr.splitlines() if line.startswith("splitops: error:")]
    return lines[-1] if lines else done.stderr.strip()[-200:]


def measure(
    model: Path, opset: int, rounds: int, folder: Path, sources: dict[str, str | None]
) -> dict[str, dict[str, Any]]:
    """Per (code, command): the median seconds and the largest peak resident bytes, or the
    error line of a command that failed."""
    commands = {}
    for code, source in sources.items():
        out = folder / code
        for name, arguments in COMMANDS.items():
            filled = [a.format(model=model, out=out, opset=opset) for a in arguments]
            commands[f"{code} {name}"] = ([sys.executable, "-m", "splitops", *filled], source)
    times: dict[str, list[float]] = {name: [] for name in commands}
    peaks: dict[str, list[int]] = {name: [] for name in commands}
    failed: dict[str, str] = {}
    for round_ in range(rounds):
        for name, (command, source) in commands.items():
            if name in failed:
                continue
            seconds, peak, status = run(command, _environment(source))
            if status != 0:
                failed[name] = _error_line(command, _environment(source))
                continue
            times[name].append(seconds)
            peaks[name].append(peak)
        done = ", ".join(f"{n} {times[n][-1]:.2f} s" for n in commands if n not in failed)
        print(f"  round {round_ + 1}/{rounds}: {done}", flush=True)
    found: dict[str, dict[str, Any]] = {}
    for name in commands:
        if name in failed:
            found[name] = {"error": failed[name]}
        else:
            found[name] = {
                "seconds": statistics.median(times[name]),
                "peak_bytes": max(peaks[name]),
            }
    return found


def _cell(row: dict[str, Any]) -> tuple[str, str]:
    if "error" in row:
        # The reason, without the command's prefix and the model's (temporary) path.
        reason = re.sub(r"^splitops: error: (cannot load \S+: )?", "", row["error"])
        return "refused", reason if len(reason) <= 100 else reason[:100].rsplit(" ", 1)[0] + " ..."
    return f"{row['seconds']:.2f} s", f"{row['peak_bytes'] / 2**20:.0f} MiB"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.weights", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a 1.2 GB sparse model, one round")
    add_out(parser)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cache", type=Path, default=None, help="where GPT-2's export is kept")
    parser.add_argument(
        "--baseline", default=None, help="another splitops source tree, run beside this one"
    )
    options = parser.parse_args(argv)
    rounds = 1 if options.quick else options.rounds
    sources: dict[str, str | None] = {"after": None}
    if options.baseline is not None:
        sources = {"before": str(Path(options.baseline).resolve()), **sources}
    machine = collect()
    print(describe(machine), flush=True)
    rows: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="splitops-weights-") as work:
        folder = Path(work)
        models: dict[str, tuple[Path, int]] = {}
        if not options.quick:
            models["GPT-2, 497 MB external"] = (gpt2(options.cache or folder / "gpt2"), 21)
        weights = 3 if options.quick else 13
        label = f"{weights * 0.4:.1f} GB external (sparse)"
        models[label] = (sparse_model(folder / "sparse", weights), 13)
        for label, (model, opset) in models.items():
            print(f"{label}:", flush=True)
            rows[label] = measure(model, opset, rounds, folder / "out", sources)
    note = (
        f"{rounds} rounds; whole processes; time: the median of the rounds; memory: the "
        "largest peak resident memory. Outputs go to another folder than the model's."
    )
    lines = ["| model | code | command | time | peak memory |", "| --- | --- | --- | --- | --- |"]
    for label, found in rows.items():
        for name, row in found.items():
            code, command = name.split(" ")
            lines.append(f"| {label} | {code} | {command} | {' | '.join(_cell(row))} |")
    document = {"machine": machine, "rounds": rounds, "peak_bound": PEAK_BOUND, "rows": rows}
    title = "Commands on models with external weights"
    write_results(options.out, options.quick, "weights", title, note, lines, document)
    return 0


if __name__ == "__main__":
    sys.exit(main())
