"""``python -m benchmarks.scale``: the commands on models of tens of thousands of nodes, as
ratios against onnx's own load, full check and shape inference, in one run.

The model is Ifs nested ``depth`` deep whose both branches hold the If below, with a Split
at every leaf (:func:`if_tree`): at depth 14, 32,767 graphs and 16,384 Splits. Each command
runs as a whole process, as a user runs it, its peak memory read from the kernel
(``wait4``); the peer is onnx's ``load_model``, ``check_model``
with ``full_check=True`` and ``infer_shapes`` in one process. Rounds alternate the peer
and each command; a cell is the median time, a ratio the median of the per-round ratios.

Written to ``benchmarks/results/latest/scale.md`` and ``scale.json`` (``--out`` names
another folder, ``--out benchmarks/results`` the committed one; ``--quick``: depth 10, one
round).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import onnx
from onnx import TensorProto, helper

from .folders import add_out, default_out
from .machine import collect, describe

FLOAT = TensorProto.FLOAT

#: The peer: onnx's own load, full check and inference of the file, in one process.
ONNX_PEER = (
    "import sys, onnx; m = onnx.load(sys.argv[1]); "
    "onnx.checker.check_model(m, full_check=True); onnx.shape_inference.infer_shapes(m)"
)

#: Each command's arguments.
COMMANDS = {
    "check": ["check", "{model}"],
    "infer": ["infer", "{model}"],
    "lower": ["lower", "{model}", "-o", "{out}"],
}
#: The targets: per depth and command, the bound on the ratio to the peer's time, and on the
#: ratio to its peak memory.
TIME_BOUNDS = {14: {"check": 1.5, "infer": 2.0, "lower": 3.0}}
MEMORY_BOUNDS = {16: {"lower": 2.0}}


def if_tree(depth: int) -> onnx.ModelProto:
    """Ifs nested ``depth`` deep whose both branches hold the If below, a Split of ``x`` (of
    4 floats) at every leaf: 2^depth Splits, every branch alike, valid by onnx's full
    check."""
    part = [helper.make_tensor_value_info("a", FLOAT, [2])]
    inner = helper.make_graph(
        [helper.make_node("Split", ["x"], ["a", "b"], num_outputs=2, name="halves")],
        "leaf",
        [],
        part,
    )
    for level in range(depth):
        node = helper.make_node(
            "If", ["c"], [f"o{level}"], then_branch=inner, else_branch=inner, name=f"if{level}"
        )
        out = [helper.make_tensor_value_info(f"o{level}", FLOAT, [2])]
        inner = helper.make_graph([node], f"g{level}", [], out)
    inputs = [
        helper.make_tensor_value_info("c", TensorProto.BOOL, []),
        helper.make_tensor_value_info("x", FLOAT, [4]),
    ]
    graph = helper.make_graph(list(inner.node), "tree", inputs, list(inner.output))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


#: Runs the command given as its arguments and prints its seconds, peak resident bytes and
#: exit status. Linux counts in a child's peak the resident memory of the process that
#: started it (the parent's memory high-water mark passes to the child at ``exec``), so a
#: command started by a large process (pytest after a thousand tests: 1 GB) reads as large:
#: the command is started by this small process instead.
LAUNCHER = (
    "import os, subprocess, sys, time\n"
    "started = time.perf_counter()\n"
    "child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, "
    "stderr=subprocess.DEVNULL)\n"
    "_, status, usage = os.wait4(child.pid, 0)\n"
    "seconds = time.perf_counter() - started\n"
    "print(seconds, usage.ru_maxrss * 1024, os.waitstatus_to_exitcode(status))\n"
)


def run(command: Sequence[str], env: dict[str, str] | None = None) -> tuple[float, int, int]:
    """Seconds, peak resident bytes and exit status of ``command`` as a whole process (in
    ``env``, default: this one's environment), started by a small process of its own
    (:data:`LAUNCHER`), so that the peak is the command's whatever this process holds."""
    done = subprocess.run(
        [sys.executable, "-c", LAUNCHER, *command],
        capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    seconds, peak, status = done.stdout.split()
    return float(seconds), int(peak), int(status)


def measure(model: Path, rounds: int, folder: Path) -> dict[str, dict[str, float]]:
    """Per command (and the peer): the median seconds, the median ratio to the peer's time,
    the peak memory and its ratio to the peer's."""
    splitops = [sys.executable, "-m", "splitops"]
    commands = {"onnx": [sys.executable, "-c", ONNX_PEER, str(model)]}
    for name, arguments in COMMANDS.items():
        filled = [a.format(model=model, out=folder / "lowered.onnx") for a in arguments]
        commands[name] = [*splitops, *filled]
    times: dict[str, list[float]] = {name: [] for name in commands}
    peaks: dict[str, list[int]] = {name: [] for name in commands}
    for round_ in range(rounds):
        for name, command in commands.items():
            seconds, peak, status = run(command)
            if status != 0:
                raise SystemExit(f"{' '.join(command)} exited {status}")
            times[name].append(seconds)
            peaks[name].append(peak)
        print(f"  round {round_ + 1}/{rounds}: " + ", ".join(
            f"{n} {times[n][-1]:.2f} s" for n in commands), flush=True)  # fmt: skip
    found = {}
    for name in commands:
        ratios = [t / p for t, p in zip(times[name], times["onnx"], strict=True)]
        found[name] = {
            "seconds": statistics.median(times[name]),
            "ratio": statistics.median(ratios),
            "peak_bytes": max(peaks[name]),
            "peak_ratio": max(peaks[name]) / max(peaks["onnx"]),
        }
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scale", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="depth 10 only, one round")
    add_out(parser)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args(argv)
    depths = (10,) if options.quick else (14, 16)
    rounds = 1 if options.quick else options.rounds
    machine = collect()
    print(describe(machine), flush=True)
    rows = {}
    with tempfile.TemporaryDirectory(prefix="splitops-scale-") as work:
        folder = Path(work)
        for depth in depths:
            model = folder / f"if{depth}.onnx"
            onnx.save(if_tree(depth), model)
            print(f"Ifs nested {depth} deep ({model.stat().st_size / 1e6:.1f} MB):", flush=True)
            rows[depth] = measure(model, rounds, folder)
    note = (
        f"{rounds} rounds; whole processes; the peer is onnx's load, full check and shape "
        "inference. A ratio is the command's over the peer's (time: median of the rounds; "
        "memory: the largest peak of each)."
    )
    lines = [
        "| model | command | time | x onnx | bound | peak memory | x onnx | bound |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for depth, found in rows.items():
        for name, row in found.items():
            time_bound = TIME_BOUNDS.get(depth, {}).get(name)
            memory_bound = MEMORY_BOUNDS.get(depth, {}).get(name)
            lines.append(
                f"| Ifs {depth} deep | {name} | {row['seconds']:.2f} s | {row['ratio']:.2f} | "
                f"{'' if time_bound is None else f'<= {time_bound}'} | "
                f"{row['peak_bytes'] / 2**20:.0f} MiB | {row['peak_ratio']:.2f} | "
                f"{'' if memory_bound is None else f'<= {memory_bound}'} |"
            )
    document = {"machine": machine, "rounds": rounds, "rows": rows}
    write_results(options.out, options.quick, "scale", "Commands at scale", note, lines, document)
    return 0


def write_results(
    out: Path | None,
    quick: bool,
    name: str,
    title: str,
    note: str,
    table: list[str],
    document: dict[str, Any],
) -> None:
    """Write ``out/NAME.md`` (``title``, the machine of ``document``, ``note``, ``table``)
    and ``out/NAME.json`` (``document``); print the table. ``out`` defaults to
    ``benchmarks/results/latest``, or ``benchmarks/results/quick`` for a quick run."""
    folder = out or default_out(quick=quick)
    folder.mkdir(parents=True, exist_ok=True)
    lines = [f"# {title}", "", describe(document["machine"]), "", note, "", *table]
    (folder / f"{name}.md").write_text("\n".join(lines) + "\n")
    (folder / f"{name}.json").write_text(json.dumps(document, indent=1) + "\n")
    print("\n".join(table))
    print(f"Wrote {name}.md, {name}.json to {folder}")


if __name__ == "__main__":
    sys.exit(main())
