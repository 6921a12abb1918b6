"""splitops on the GPU: the suite's GPU section, and the sweep of ``python -m benchmarks.gpu``.

The GPU section of ``python -m benchmarks``: splitops on torch CUDA tensors and cupy arrays,
against torch, cupy and onnxruntime's CUDAExecutionProvider, views and copies.

It reuses the CPU machinery (cases, statements, the same timing and checks); each GPU
statement is followed by the library's synchronisation, so copies are timed to completion.
Peers whose library or device is missing are left out; with no CUDA device at all the suite
prints ``skipped: no CUDA``.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime
import importlib.metadata
import importlib.util
import math
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .cases import Case
from .peers import (
    Peer,
    copied,
    pinned_torch,
    session_options,
    splitops_statement,
    torch_parts,
)
from .units import format_time, human_bytes

__all__ = ["GPU_PEERS", "SweepRow", "cuda_available", "main", "sweep", "sweep_markdown"]

RESULTS = Path(__file__).resolve().parent / "results"


def _torch_cuda() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def _cupy_cuda() -> bool:
    import cupy

    try:
        return int(cupy.cuda.runtime.getDeviceCount()) > 0
    except cupy.cuda.runtime.CUDARuntimeError:
        return False


def _onnxruntime_cuda() -> bool:
    import onnxruntime

    return "CUDAExecutionProvider" in onnxruntime.get_available_providers()


def _on_gpu(case: Case) -> bool:
    return case.device == "cuda"


def _nothing_to_wait_for() -> None:
    """The host runs everything synchronously: nothing to wait for."""


# The torch and onnxruntime peers take the device from the case: "cuda" in the GPU section,
# "cpu" in the tests that run this module's statements on a machine without a GPU.


def _with_torch_device(case: Case, x: Any) -> dict[str, Any]:
    import splitops

    torch = pinned_torch()
    on_gpu = case.device.startswith("cuda")
    return {
        "splitops": splitops,
        "torch": torch,
        "t": torch.from_numpy(x).to(case.device),
        "sync": torch.cuda.synchronize if on_gpu else _nothing_to_wait_for,
    }


def _with_cupy(case: Case, x: Any) -> dict[str, Any]:
    import cupy

    import splitops

    return {
        "splitops": splitops,
        "cp": cupy,
        "c": cupy.asarray(x),
        "sync": cupy.cuda.get_current_stream().synchronize,
    }


def _cupy_parts(value: Any, ns: dict[str, Any], case: Case) -> list[Any]:
    return [part.get() for part in value]


def _with_onnxruntime_device(case: Case, x: Any) -> dict[str, Any]:
    import onnxruntime

    from .onnx_models import one_node_model

    provider = "CUDAExecutionProvider" if case.device == "cuda" else "CPUExecutionProvider"
    session = onnxruntime.InferenceSession(
        one_node_model(case).SerializeToString(), session_options(), providers=[provider]
    )
    binding = session.io_binding()
    device_input = onnxruntime.OrtValue.ortvalue_from_numpy(x, case.device, 0)
    binding.bind_ortvalue_input("x", device_input)
    for output in session.get_outputs():
        binding.bind_output(output.name, case.device)
    names = {"sess": session, "binding": binding, "sync": binding.synchronize_outputs}
    names["device_input"] = device_input  # the binding refers to it: keep it alive
    return names


def _onnxruntime_cuda_parts(value: Any, ns: dict[str, Any], case: Case) -> list[Any]:
    return [np.asarray(output.numpy()) for output in ns["binding"].get_outputs()]


GPU_PEERS = (
    Peer(
        "splitops (torch)",
        "torch",
        _on_gpu,
        lambda case: splitops_statement(case, "t"),
        _with_torch_device,
        torch_parts,
        _torch_cuda,
    ),
    Peer(
        "torch.split",
        "torch",
        _on_gpu,
        lambda case: copied(f"torch.split(t, {case.part_length})", case, "p.clone()"),
        _with_torch_device,
        torch_parts,
        _torch_cuda,
    ),
    Peer(
        "splitops (cupy)",
        "cupy",
        _on_gpu,
        lambda case: splitops_statement(case, "c"),
        _with_cupy,
        _cupy_parts,
        _cupy_cuda,
    ),
    Peer(
        "cupy.split",
        "cupy",
        _on_gpu,
        lambda case: copied(f"cp.split(c, {case.parts})", case),
        _with_cupy,
        _cupy_parts,
        _cupy_cuda,
    ),
    Peer(
        "onnxruntime (CUDA)",
        "onnxruntime",
        _on_gpu,
        lambda case: "sess.run_with_iobinding(binding)",
        _with_onnxruntime_device,
        _onnxruntime_cuda_parts,
        _onnxruntime_cuda,
    ),
)


def cuda_available() -> bool:
    """Whether any GPU peer can run here."""
    return any(peer.available() for peer in GPU_PEERS)


# The GPU sweep: ``python -m benchmarks.gpu`` ---------------------------------------------
#
# One script of at most five minutes for a machine with a CUDA device: Split along axis 0, a
# middle axis and the innermost axis into 2 to 100,000 parts; views, copy=True and out=; on
# torch and cupy, each against its library's own way and against the device's own copy of
# the whole input (the bound of every copy). It writes a Markdown table with the date and the
# device (benchmarks/results/gpu.md), which docs/performance.md links. ``--device cpu`` runs
# the same sweep on torch's CPU tensors with small inputs: the tests check the script so.

#: The parts of each layout; every count divides the split axis (102,400).
GPU_PARTS = (2, 64, 1024, 102_400)

#: Each layout: its name, the input's shape (256 MB of float32) and the split axis.
GPU_LAYOUTS = (
    ("axis 0", (102_400, 640), 0),
    ("axis 1 (rows of 320 B)", (8, 102_400, 80), 1),
    ("innermost", (640, 102_400), 1),
)

#: The smoke run's (``--device cpu``): the same layouts, 256 KB each.
SMOKE_PARTS = (2, 64, 1024)
SMOKE_LAYOUTS = (
    ("axis 0", (1024, 64), 0),
    ("axis 1 (rows of 320 B)", (8, 1024, 8), 1),
    ("innermost", (64, 1024), 1),
)

#: The sweep starts no layout after this many seconds (so that it ends within five minutes).
GPU_SECONDS = 240.0

#: Each measurement: calls per repeat are set to take about this long; the median of repeats.
GPU_REPEAT_SECONDS, GPU_REPEATS = 0.02, 5


@dataclasses.dataclass
class SweepRow:
    """One measured (layout, parts, mode, library): seconds per call of each side."""

    layout: str
    shape: tuple[int, ...]
    parts: int
    mode: str  # "views", "copy=True" or "out="
    library: str
    splitops: float | None
    peer: float | None
    peer_name: str
    bound: float | None  # the device's own copy of the whole input (copies only)
    note: str = ""


#: One mode's two calls: (mode, splitops' call, the peer's call, the peer's name, the bound).
Modes = list[tuple[str, Callable[[], object], Callable[[], object], str, "float | None"]]


def _clock(call: Callable[[], object], sync: Callable[[], None]) -> float:
    """Seconds per call: calibrated repeats, each synchronised, the median kept."""
    call()
    sync()
    started = time.perf_counter()
    call()
    sync()
    once = max(time.perf_counter() - started, 1e-7)
    loops = max(1, min(1000, round(GPU_REPEAT_SECONDS / once)))
    values = []
    for _ in range(GPU_REPEATS):
        started = time.perf_counter()
        for _ in range(loops):
            call()
        sync()
        values.append((time.perf_counter() - started) / loops)
    return statistics.median(values)


def _attempt(call: Callable[[], object], sync: Callable[[], None]) -> tuple[float | None, str]:
    """:func:`_clock`, or ``None`` and why when the call fails (torch's fused copy does on
    some layouts)."""
    try:
        return _clock(call, sync), ""
    except RuntimeError as error:
        with contextlib.suppress(RuntimeError):
            sync()
        return None, str(error).splitlines()[0][:80]


def _modes(library: str, x: Any, parts: int, axis: int, out: list[Any], bound: float) -> Modes:
    """splitops' views, copies and out= on ``x``, each beside its library's own way: torch's
    split, a clone of each part and its (fused on CUDA) split_with_sizes_copy; cupy's split,
    a copy of each part and a copyto of each."""
    import splitops

    own_split: Callable[[], Sequence[Any]]
    own_out: Callable[[], object]
    if library == "torch":
        import torch

        sizes = [x.shape[axis] // parts] * parts

        def own_split() -> Sequence[Any]:
            return torch.split(x, sizes, dim=axis)

        def own_out() -> object:
            torch.split_with_sizes_copy(x, sizes, dim=axis, out=out)
            return out

        names, copy_name = ("torch.split", "clone of each part", "split_with_sizes_copy"), "clone"
    else:
        import cupy

        def own_split() -> Sequence[Any]:
            return cupy.split(x, parts, axis=axis)  # type: ignore[no-any-return]

        def own_out() -> object:
            return [cupy.copyto(array, part) for array, part in zip(out, own_split(), strict=True)]

        names, copy_name = ("cupy.split", "copy of each part", "copyto of each part"), "copy"
    return [
        ("views", lambda: splitops.split(x, num_outputs=parts, axis=axis), own_split,
         names[0], None),
        ("copy=True", lambda: splitops.split(x, num_outputs=parts, axis=axis, copy=True),
         lambda: [getattr(part, copy_name)() for part in own_split()], names[1], bound),
        ("out=", lambda: splitops.split(x, num_outputs=parts, axis=axis, out=out), own_out,
         names[2], bound),
    ]  # fmt: skip


def _library_rows(
    library: str, layout: str, shape: tuple[int, ...], axis: int, counts: Sequence[int], device: str
) -> list[SweepRow]:
    """Every mode at every part count of one layout, on torch (``device``) or cupy."""
    import splitops

    if library == "torch":
        import torch

        sync = torch.cuda.synchronize if device.startswith("cuda") else _nothing_to_wait_for
        x = torch.arange(math.prod(shape), dtype=torch.float32, device=device).reshape(shape)
        whole = torch.empty_like(x)
        bound = _clock(lambda: whole.copy_(x), sync)
    else:
        import cupy

        sync = cupy.cuda.get_current_stream().synchronize
        x = cupy.arange(math.prod(shape), dtype=cupy.float32).reshape(shape)
        whole = cupy.empty_like(x)
        bound = _clock(lambda: cupy.copyto(whole, x), sync)
    rows = []
    for parts in counts:
        out = list(splitops.split(x, num_outputs=parts, axis=axis, copy=True))
        for mode, ours, theirs, name, limit in _modes(library, x, parts, axis, out, bound):
            mine, why_not = _attempt(ours, sync)
            peer, why = _attempt(theirs, sync)
            note = "; ".join(filter(None, [why_not, why]))
            rows.append(
                SweepRow(layout, shape, parts, mode, library, mine, peer, name, limit, note)
            )
        del out
    return rows


def sweep(device: str, libraries: Sequence[str] = ("torch", "cupy")) -> list[SweepRow]:
    """Every layout and part count on ``device`` (``cpu``: the smoke run's small ones); no
    layout starts after :data:`GPU_SECONDS`."""
    on_cuda = device.startswith("cuda")
    layouts, counts = (GPU_LAYOUTS, GPU_PARTS) if on_cuda else (SMOKE_LAYOUTS, SMOKE_PARTS)
    started = time.perf_counter()
    rows: list[SweepRow] = []
    for layout, shape, axis in layouts:
        if time.perf_counter() - started > GPU_SECONDS:
            break
        for library in libraries:
            rows += _library_rows(library, layout, shape, axis, counts, device)
    return rows


def _cell(seconds: float | None) -> str:
    return "-" if seconds is None else format_time(seconds)


def _ratio(top: float | None, bottom: float | None) -> str:
    return "-" if top is None or bottom is None else f"{top / bottom:.2f}"


def sweep_markdown(rows: Sequence[SweepRow], device_name: str, versions: dict[str, str]) -> str:
    """The table: per row, splitops' time, the peer's, the device's own copy, and the ratios
    (copies: the device copy's time over splitops', so 0.9 reads "90% of its bandwidth";
    views: splitops' time over the peer's)."""
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    shapes = {row.layout: row.shape for row in rows}
    inputs = "; ".join(
        f"{layout}: {shape}, {human_bytes(4 * math.prod(shape))}"
        for layout, shape in shapes.items()
    )
    lines = [
        "# splitops on the GPU",
        "",
        f"`python -m benchmarks.gpu`, {stamp}, on {device_name}. "
        + ", ".join(f"{name} {version}" for name, version in versions.items())
        + ".",
        "",
        f"Split of float32 inputs ({inputs}) into equal parts. Times are per call, "
        "synchronised, the median of 5 calibrated repeats. *of bound*: the device's own copy of "
        "the whole input over splitops' time (copies: 0.9 reads 90% of its bandwidth); *x peer*: "
        "splitops' time over the library's own way's.",
        "",
        "| layout | parts | mode | library | splitops | peer | peer time | device copy "
        "| of bound | x peer | note |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row.layout} | {row.parts:,} | {row.mode} | {row.library} | {_cell(row.splitops)} "
            f"| {row.peer_name} | {_cell(row.peer)} | {_cell(row.bound)} "
            f"| {_ratio(row.bound, row.splitops)} | {_ratio(row.splitops, row.peer)} "
            f"| {row.note} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the sweep and write its table; exit status 2 without a device to run it on."""
    parser = argparse.ArgumentParser(description="splitops on the GPU: the sweep of copies")
    parser.add_argument("--device", default="cuda", help="torch device (cpu: a smoke run)")
    parser.add_argument("--out", type=Path, default=RESULTS / "gpu.md", help="the table")
    args = parser.parse_args(argv)
    torch = pinned_torch()
    on_cuda = args.device.startswith("cuda")
    if on_cuda and not torch.cuda.is_available():
        print("benchmarks.gpu: no CUDA device here; --device cpu runs a smoke sweep")
        return 2
    libraries = ["torch"] + (["cupy"] if on_cuda and _cupy_usable() else [])
    rows = sweep(args.device, libraries)
    name = torch.cuda.get_device_name(args.device) if on_cuda else f"CPU ({args.device})"
    versions: dict[str, str] = {
        package: importlib.metadata.version(package)
        for package in ("splitops", "torch", "cupy")
        if package in libraries or package == "splitops"
    }
    text = sweep_markdown(rows, name, versions)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)
    print(f"Wrote {args.out}")
    return 0


def _cupy_usable() -> bool:
    return importlib.util.find_spec("cupy") is not None and _cupy_cuda()


if __name__ == "__main__":
    sys.exit(main())
