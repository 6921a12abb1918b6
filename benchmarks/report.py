"""What a run leaves behind: the terminal table, ``results.json``, ``results.md`` and plots.

Each table cell is a peer's median time with its ratio to splitops in brackets (``x4.1``: that
peer took 4.1 times as long as splitops; below 1, it was faster).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

from .cases import GROUPS
from .machine import describe
from .measured import Measured
from .targets import Target
from .units import format_time, human_bytes

__all__ = ["markdown", "tables", "write"]

_TITLES = {
    "small": "Small tensor: Split of a (2, 6) float32 array on axis 1 into 2 parts",
    "many-parts": "Many parts: SplitToSequence of a (rows, 16) float32 array, no split",
    "size-views": "Size sweep, views: Split of a 1-d float32 array into 2 parts",
    "size-copies": "Size sweep, copies: the same with copy=True (and peers' copies)",
    "parts": "Part-count sweep: SplitToSequence of a (rows, 16) array with a scalar split",
    "copies": "Copies: copy=True and out= against one copy of the whole input (targets 9 to 12)",
    "gpu-size-views": "GPU, views: Split of a 1-d float32 CUDA array into 2 parts",
    "gpu-size-copies": "GPU, copies: the same with copy=True",
}


def _baseline(measured: Measured, case_id: str) -> float | None:
    peers = measured.peers[case_id]
    return measured.median(case_id, peers[0].name) if peers else None


def tables(measured: Measured) -> list[tuple[str, list[str], list[list[str]]]]:
    """Per group: its title, the column names, and the rows of cells."""
    out = []
    for group in GROUPS:
        cases = [c for c in measured.cases if c.group == group]
        if not cases:
            continue
        names: list[str] = []
        for case in cases:
            names += [p.name for p in measured.peers[case.id] if p.name not in names]
        rows = []
        for case in cases:
            base = _baseline(measured, case.id)
            row = [f"{case.id} ({case.describe().split(' (', 1)[1].split(')', 1)[0]})"]
            for name in names:
                median = measured.median(case.id, name)
                if median is None:
                    row.append("")
                elif base is None or name == measured.peers[case.id][0].name:
                    row.append(format_time(median))
                else:
                    row.append(f"{format_time(median)} ({_times(median / base)})")
            rows.append(row)
        out.append((_TITLES[group], ["case", *names], rows))
    return out


def _times(ratio: float) -> str:
    """``x4.1``, ``x0.57``, ``x140``: how many times as long as splitops."""
    return f"x{ratio:,.0f}" if ratio >= 10 else f"x{ratio:.2g}"


def _markdown_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _text_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)) for r in [header, *rows]
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _mismatches(measured: Measured) -> list[str]:
    return [
        f"{case_id} | {peer}: {status}"
        for case_id, row in measured.checks.items()
        for peer, status in row.items()
        if status != "ok"
    ]


def markdown(
    measured: Measured, targets: list[Target], machine: dict[str, Any], settings: dict[str, Any]
) -> str:
    """``results.md``: machine, targets, tables; relative links to the plots beside it."""
    parts = [
        "# splitops benchmark results",
        "",
        describe(machine),
        "",
        f"pyperf: {settings['pyperf']}; the run took {settings['seconds']} s. Each cell: median "
        "time (ratio to splitops: x4 = took 4 times as long).",
        "",
        "## Targets",
        "",
        "| target | paired ratio | ratio of medians | bound | result | detail |",
        "|---|---|---|---|---|---|",
    ]
    for t in targets:
        ratio = "-" if t.ratio is None else f"{t.ratio:.2f}"
        median = "-" if t.median_ratio is None else f"{t.median_ratio:.2f}"
        parts.append(
            f"| {t.id}. {t.text} | {ratio} | {median} | {t.bound} | {t.status} | {t.detail} |"
        )
    checks = _mismatches(measured)
    count = sum(len(row) for row in measured.checks.values())
    parts += ["", "## Outputs", ""]
    parts.append(
        f"All {count} (case, peer) outputs equal splitops' parts."
        if not checks
        else "Outputs that differ from splitops':\n\n" + "\n".join(f"- {c}" for c in checks)
    )
    for title, header, rows in tables(measured):
        parts += ["", f"## {title}", "", _markdown_table(header, rows)]
    parts += [
        "",
        "## Plots",
        "",
        "![time vs size](size.png)",
        "",
        "![time vs parts](parts.png)",
        "",
    ]
    return "\n".join(parts)


#: What a run says, at its start, where it can draw no plots.
NO_PLOTS = "plots need pip install -e '.[bench]' (matplotlib); this run draws none"


def can_plot() -> bool:
    """Whether matplotlib, which draws the plots, is installed (the ``bench`` extra)."""
    return importlib.util.find_spec("matplotlib") is not None


def _plot(measured: Measured, out: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    figure, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
    for ax, group in zip(axes, ("size-views", "size-copies"), strict=True):
        _lines(ax, measured, group, lambda c: c.nbytes, human_bytes)
        ax.set_xlabel("input size")
        ax.set_title(_TITLES[group].split(":")[0])
    axes[0].set_ylabel("median time per call (s)")
    figure.tight_layout()
    figure.savefig(out / "size.png", dpi=110)
    plt.close(figure)
    written.append("size.png")

    figure, ax = plt.subplots(figsize=(7, 4.5))
    _lines(ax, measured, "parts", lambda c: c.parts, lambda n: f"{n:,}")
    ax.set_xlabel("number of parts")
    ax.set_ylabel("median time per call (s)")
    ax.set_title("SplitToSequence of (rows, 16) float32, time vs number of parts")
    figure.tight_layout()
    figure.savefig(out / "parts.png", dpi=110)
    plt.close(figure)
    written.append("parts.png")
    return written


def _lines(ax: Any, measured: Measured, group: str, x_of: Any, label: Any) -> None:
    """One line per peer over the group's cases, x from ``x_of``, ticks named by ``label``."""
    cases = sorted((c for c in measured.cases if c.group == group), key=x_of)
    names: list[str] = []
    for case in cases:
        names += [p.name for p in measured.peers[case.id] if p.name not in names]
    for name in names:
        points = [(x_of(c), measured.median(c.id, name)) for c in cases]
        points = [(x, y) for x, y in points if y is not None]
        if points:
            xs, ys = zip(*points, strict=True)
            style = "-o" if name.startswith("splitops") else "--."
            ax.plot(xs, ys, style, label=name, linewidth=2 if name == "splitops" else 1)
    ax.set_xscale("log")
    ax.set_xticks([x_of(c) for c in cases], [label(x_of(c)) for c in cases])
    ax.minorticks_off()
    ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)


def write(
    measured: Measured,
    targets: list[Target],
    counted: dict[str, Any],
    out: Path,
    *,
    machine: dict[str, Any],
    settings: dict[str, Any],
    plots: bool,
) -> str:
    """Write results.json, results.md (and the plots) into ``out``; return the terminal text."""
    out.mkdir(parents=True, exist_ok=True)
    document = {
        "machine": machine,
        "settings": settings,
        "cases": [c.as_json() for c in measured.cases],
        "peers": {case_id: [p.name for p in peers] for case_id, peers in measured.peers.items()},
        "checks": measured.checks,
        "medians_s": measured.medians,
        "values_s": measured.values,
        "counted": counted,
        "targets": [t.as_json() for t in targets],
    }
    (out / "results.json").write_text(json.dumps(document, indent=1) + "\n")
    (out / "results.md").write_text(markdown(measured, targets, machine, settings))
    written = ["results.json", "results.md"]
    if plots:
        written += _plot(measured, out)
    text = []
    for title, header, rows in tables(measured):
        text += ["", title, _text_table(header, rows)]
    text += ["", "Targets:"] + [t.line() for t in targets]
    text += ["", f"Wrote {', '.join(written)} to {out}"]
    return "\n".join(text)
