"""The scale benchmark's smoke run: its model passes onnx's full check (the peer's own work
fails otherwise), and a quick run times the peer and every command, each exiting 0, and
writes its table and JSON."""

from __future__ import annotations

import json
from pathlib import Path

import onnx
from benchmarks.scale import COMMANDS, if_tree, main


def test_the_tree_has_a_split_at_every_leaf_and_passes_onnxs_full_check() -> None:
    model = if_tree(3)
    onnx.checker.check_model(model, full_check=True)
    splits, stack = 0, [model.graph]
    while stack:
        graph = stack.pop()
        for node in graph.node:
            splits += node.op_type == "Split"
            stack += [attribute.g for attribute in node.attribute if attribute.HasField("g")]
    assert splits == 2**3


def test_a_quick_run_times_the_peer_and_every_command(tmp_path: Path) -> None:
    assert main(["--quick", "--out", str(tmp_path)]) == 0
    found = json.loads((tmp_path / "scale.json").read_text())["rows"]["10"]
    assert set(found) == {"onnx", *COMMANDS}
    for row in found.values():
        assert row["seconds"] > 0
        assert row["peak_bytes"] > 0
    table = (tmp_path / "scale.md").read_text()
    assert all(f"| Ifs 10 deep | {name} |" in table for name in ("onnx", *COMMANDS))
