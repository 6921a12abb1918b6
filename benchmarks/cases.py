"""What is measured: one :class:`Case` per input and call, in the groups targets and plots read.

>>> [case.id for case in cpu_cases(quick=True)][:4]
['small', 'many-parts', 'size-1KiB-views', 'size-64KiB-views']
>>> small = cpu_cases(quick=False)[0]
>>> small.shape, small.sizes()
((2, 6), (3, 3))
>>> [(case.id, case.chunk, case.parts) for case in cpu_cases(quick=True) if case.group == "parts"]
[('parts-2', 500, 2), ('parts-100', 10, 100)]
>>> [case.describe() for case in cpu_cases(quick=False) if case.id == "copies-axis1-64"]
['Split of (1024, 1024, 16) float32 (64MiB) on axis 1 into 64 parts, copies']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

import splitops

from .units import human_bytes

__all__ = ["Case", "cpu_cases", "gpu_cases", "make_input"]

#: Element type of every input: 4 bytes, so sizes in bytes convert to element counts exactly.
DTYPE = "float32"

#: Groups, in the order the report shows them.
GROUPS = (
    "small",
    "many-parts",
    "size-views",
    "size-copies",
    "parts",
    "copies",
    "gpu-size-views",
    "gpu-size-copies",
)


@dataclass(frozen=True)
class Case:
    """One input and one call: Split with ``num_outputs``, or SplitToSequence with ``chunk``.

    The sizes of the parts, their number and their common length all come from the planner.
    """

    id: str
    group: str
    op: str  # "Split" or "SplitToSequence"
    shape: tuple[int, ...]
    axis: int
    num_outputs: int | None = None  # Split's attribute
    chunk: int | None = None  # SplitToSequence's scalar split; None: parts of length 1
    copy: bool = False
    device: str = "cpu"
    only: tuple[str, ...] = ()  # the peers measured on this case; () for every one that applies

    @property
    def dim(self) -> int:
        return self.shape[self.axis]

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape)) * np.dtype(DTYPE).itemsize

    def sizes(self) -> tuple[int, ...]:
        """The part sizes, from splitops' planner (the one place that decides them)."""
        if self.op == "Split":
            return splitops.split_sizes(self.dim, num_outputs=self.num_outputs)
        return splitops.sequence_sizes(self.dim, self.chunk)

    @property
    def parts(self) -> int:
        """The number of parts."""
        return len(self.sizes())

    @property
    def part_length(self) -> int:
        """The length of the first part: every part's, as every case cuts equal parts."""
        return self.sizes()[0]

    def describe(self) -> str:
        call = f"{self.op} of {self.shape} {DTYPE} ({human_bytes(self.nbytes)}) on axis "
        what = "copies" if self.copy else "views"
        return f"{call}{self.axis} into {self.parts} parts, {what}"

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "group": self.group,
            "op": self.op,
            "shape": list(self.shape),
            "dtype": DTYPE,
            "axis": self.axis,
            "num_outputs": self.num_outputs,
            "parts": self.parts,
            "chunk": self.chunk,
            "copy": self.copy,
            "device": self.device,
            "only": list(self.only),
            "nbytes": self.nbytes,
        }


def make_input(case: Case) -> Any:
    """The case's input on the host: distinct, deterministic values (no random generator cost)."""
    count = int(np.prod(case.shape))
    return np.arange(count, dtype=DTYPE).reshape(case.shape)


def _size_cases(sizes: list[int], *, device: str = "cpu") -> list[Case]:
    prefix = "" if device == "cpu" else "gpu-"
    cases = []
    for copy in (False, True):
        what = "copies" if copy else "views"
        for nbytes in sizes:
            count = nbytes // np.dtype(DTYPE).itemsize
            cases.append(
                Case(
                    id=f"{prefix}size-{human_bytes(nbytes)}-{what}",
                    group=f"{prefix}size-{what}",
                    op="Split",
                    shape=(count,),
                    axis=0,
                    num_outputs=2,
                    copy=copy,
                    device=device,
                )
            )
    return cases


def cpu_cases(*, quick: bool) -> list[Case]:
    """Every CPU case: the two target cases, the size and part-count sweeps, then the cases
    of the copy targets.

    ``quick`` keeps the structure with small inputs, for the smoke run.
    """
    rows = 1000 if quick else 100_000
    sizes = [2**10, 2**16] if quick else [2**10, 2**16, 2**22, 2**28]
    counts = [2, 100] if quick else [2, 10, 100, 1000, 10_000, 100_000]
    cases = [
        Case("small", "small", "Split", (2, 6), axis=1, num_outputs=2),
        Case("many-parts", "many-parts", "SplitToSequence", (rows, 16), axis=0),
    ]
    cases += _size_cases(sizes)
    # A chunk that cuts the rows into n parts: the length of Split's n equal parts.
    cases += [
        Case(f"parts-{n}", "parts", "SplitToSequence", (rows, 16), 0, chunk=_equal_part(rows, n))
        for n in counts
    ]
    return cases + _copy_cases(quick=quick, rows=rows)


#: The peers of a copy target: splitops and one whole copy then views, on numpy and torch.
_COPY_PEERS = ("splitops", "copy, then views", "splitops on torch", "clone, then views")


def _copy_cases(*, quick: bool, rows: int) -> list[Case]:
    """copy=True along axis 0 (part counts up to 65,536), along axis 1 into 64 parts, along an
    innermost axis of 32, out= into 1,024 parts, and SplitToSequence's copies of ``rows``
    parts (its views are the case many-parts); a few KiB each in a quick run.

    The copies' inputs are 64 MiB, above glibc's largest mmap threshold (32 MiB): each new
    buffer, on either side of a ratio, is mapped and faulted in afresh. At 16 MiB glibc
    sometimes hands a freed buffer to the next call whole, and a ratio swung from 0.41 to 0.74
    with which side got it. out= takes 256 MiB, the largest input of the size sweep: it
    checks each of its 1,024 arrays on the host, about a microsecond each."""
    scale = 256 if quick else 1
    counts = [2, 1024 // min(scale, 64), 65_536 // min(scale, 64)]
    cases = [
        Case(
            f"copies-axis0-{n}",
            "copies",
            "Split",
            (262_144 // scale, 64),
            0,
            n,
            copy=True,
            only=_COPY_PEERS,
        )
        for n in counts
    ]
    cases += [
        Case("copies-axis1-64", "copies", "Split", (1024 // scale, 1024, 16), 1, 64, copy=True,
             only=_COPY_PEERS),
        Case("copies-innermost-2", "copies", "Split", (524_288 // scale, 32), 1, 2, copy=True,
             only=_COPY_PEERS),
        Case("copies-out-1024", "copies", "Split", (65_536 // min(scale, 64), 1024), 0, 1024,
             copy=True, only=("splitops out=", "np.copyto")),
        Case("many-parts-copies", "copies", "SplitToSequence", (rows, 16), 0, copy=True,
             only=("splitops", "splitops on torch")),
    ]  # fmt: skip
    return cases


def _equal_part(dim: int, count: int) -> int:
    return splitops.split_sizes(dim, num_outputs=count)[0]


def gpu_cases(*, quick: bool) -> list[Case]:
    """The GPU section: Split of 1-d inputs into 2 parts on the device, views and copies."""
    sizes = [2**10, 2**20] if quick else [2**10, 2**20, 2**28]
    return _size_cases(sizes, device="cuda")
