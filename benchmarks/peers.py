"""The libraries compared, each as a :class:`Peer`: the statement timed, and what it needs.

A peer's ``statement`` is the code a user of that library would write for the case; it is timed
inline (as ``timeit`` does) with the names that ``prepare`` returns bound as local variables.
``parts`` turns what the statement returned into numpy arrays, so that every peer's output can
be compared with splitops'.

>>> from benchmarks.cases import cpu_cases
>>> small = cpu_cases(quick=True)[0]
>>> [peer.statement(small) for peer in CPU_PEERS if peer.applies(small)][:3]
['splitops.split(x, num_outputs=2, axis=1)', 'sess.run(None, feeds)', 'ref.run(None, feeds)']
>>> SLICING.statement(small)
'x[:, :3], x[:, 3:]'
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import splitops

from .cases import Case

__all__ = ["CPU_PEERS", "SLICING", "SPLITOPS", "Peer", "splitops_statement"]

Prepare = Callable[[Case, Any], dict[str, Any]]
Parts = Callable[[Any, dict[str, Any], Case], list[Any]]


@dataclass(frozen=True)
class Peer:
    """A library's way to split: its statement for a case, the names it needs, its parts."""

    name: str
    library: str  # the module that must be importable
    applies: Callable[[Case], bool]
    statement: Callable[[Case], str]
    prepare: Prepare
    parts: Parts
    usable: Callable[[], bool] | None = None  # default: the library is installed

    def available(self) -> bool:
        """Whether this machine can run the peer (without importing heavy libraries)."""
        if importlib.util.find_spec(self.library) is None:
            return False
        return self.usable() if self.usable is not None else True


# Statements -------------------------------------------------------------------------------


def _keywords(case: Case, *, copy: bool = True) -> str:
    """``, axis=1, copy=True``: the keyword arguments that differ from the defaults."""
    words = [] if case.axis == 0 else [f"axis={case.axis}"]
    if copy and case.copy:
        words.append("copy=True")
    return "".join(f", {word}" for word in words)


def splitops_statement(case: Case, array: str = "x") -> str:
    """``splitops.split(x, num_outputs=2, axis=1)``: the call on the array named ``array``."""
    if case.op == "Split":
        return f"splitops.split({array}, num_outputs={case.num_outputs}{_keywords(case)})"
    chunk = "" if case.chunk is None else f", {case.chunk}"
    return f"splitops.split_to_sequence({array}{chunk}{_keywords(case)})"


def _slicing_statement(case: Case) -> str:
    lead = ":, " * case.axis
    if case.parts <= 4:
        bounds = [0, *np.cumsum(case.sizes()).tolist()]
        cuts = []
        for start, stop in itertools.pairwise(bounds):
            first = "" if start == 0 else str(start)
            last = "" if stop == case.dim else str(stop)
            cuts.append(f"x[{lead}{first}:{last}]")
        return ", ".join(cuts)
    length = case.part_length
    return f"[x[{lead}i:i + {length}] for i in range(0, {case.dim}, {length})]"


def copied(statement: str, case: Case, copy: str = "p.copy()") -> str:
    return f"[{copy} for p in {statement}]" if case.copy else statement


# Preparations -----------------------------------------------------------------------------


def _with_splitops(case: Case, x: Any) -> dict[str, Any]:
    return {"splitops": splitops, "x": x}


def _with_out(case: Case, x: Any) -> dict[str, Any]:
    # out allocated as the docs say: the parts of one copy=True call, reused by every call.
    out = list(splitops.split(x, num_outputs=case.num_outputs, axis=case.axis, copy=True))
    return {"splitops": splitops, "x": x, "out": out}


def _with_part_destinations(case: Case, x: Any) -> dict[str, Any]:
    views = splitops.split(x, num_outputs=case.num_outputs, axis=case.axis)
    pairs = [(np.empty(view.shape, x.dtype), view) for view in views]
    return {"np": np, "pairs": pairs}


def _with_numpy(case: Case, x: Any) -> dict[str, Any]:
    return {"np": np, "x": x}


def _with_destination(case: Case, x: Any) -> dict[str, Any]:
    return {"np": np, "x": x, "dst": np.empty_like(x)}


def session_options() -> Any:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    return options


def _with_onnxruntime(case: Case, x: Any) -> dict[str, Any]:
    import onnxruntime

    from .onnx_models import one_node_model

    model = one_node_model(case).SerializeToString()
    session = onnxruntime.InferenceSession(
        model, session_options(), providers=["CPUExecutionProvider"]
    )
    return {"sess": session, "feeds": {"x": x}}


def _with_reference(case: Case, x: Any) -> dict[str, Any]:
    from onnx.reference import ReferenceEvaluator

    from .onnx_models import one_node_model

    return {"ref": ReferenceEvaluator(one_node_model(case)), "feeds": {"x": x}}


def pinned_torch() -> Any:
    """torch, on one thread."""
    import torch

    torch.set_num_threads(1)
    if torch.get_num_interop_threads() != 1:
        # Only allowed before torch's first parallel work.
        with contextlib.suppress(RuntimeError):
            torch.set_num_interop_threads(1)
    return torch


def _with_torch(case: Case, x: Any) -> dict[str, Any]:
    torch = pinned_torch()
    return {"torch": torch, "t": torch.from_numpy(x)}


def _with_splitops_torch(case: Case, x: Any) -> dict[str, Any]:
    return {"splitops": splitops, **_with_torch(case, x)}


# Parts as numpy ---------------------------------------------------------------------------


def as_list(value: Any, ns: dict[str, Any], case: Case) -> list[Any]:
    return list(value)


def onnx_outputs(value: Any, ns: dict[str, Any], case: Case) -> list[Any]:
    return list(value) if case.op == "Split" else list(value[0])


def torch_parts(value: Any, ns: dict[str, Any], case: Case) -> list[Any]:
    return [part.cpu().numpy() for part in value]


def _destination_parts(value: Any, ns: dict[str, Any], case: Case) -> list[Any]:
    return list(splitops.split(ns["dst"], num_outputs=case.num_outputs, axis=case.axis))


def _part_destinations(value: Any, ns: dict[str, Any], case: Case) -> list[Any]:
    return [destination for destination, _ in ns["pairs"]]


# The peers --------------------------------------------------------------------------------


def _on_cpu(case: Case) -> bool:
    return case.device == "cpu"


def _on_cpu_views(case: Case) -> bool:
    return case.device == "cpu" and not case.copy


def _on_cpu_copies(case: Case) -> bool:
    return case.device == "cpu" and case.copy


SPLITOPS = Peer("splitops", "splitops", _on_cpu, splitops_statement, _with_splitops, as_list)

SPLITOPS_OUT = Peer(
    "splitops out=",
    "splitops",
    lambda case: _on_cpu_copies(case) and case.op == "Split",
    lambda case: (
        f"splitops.split(x, num_outputs={case.num_outputs}{_keywords(case, copy=False)}, out=out)"
    ),
    _with_out,
    as_list,
)

NP_COPYTO = Peer(
    "np.copyto",
    "numpy",
    _on_cpu_copies,
    lambda case: "np.copyto(dst, x)",
    _with_destination,
    _destination_parts,
)

# The same bytes as NP_COPYTO, one np.copyto per part (views of x made outside the timing):
# a single large copy may stream past the caches where part-sized ones do not.
NP_COPYTO_PARTS = Peer(
    "np.copyto per part",
    "numpy",
    _on_cpu_copies,
    lambda case: "[np.copyto(destination, view) for destination, view in pairs]",
    _with_part_destinations,
    _part_destinations,
)

ONNXRUNTIME = Peer(
    "onnxruntime",
    "onnxruntime",
    _on_cpu,
    lambda case: "sess.run(None, feeds)",
    _with_onnxruntime,
    onnx_outputs,
)

ONNX_REFERENCE = Peer(
    "onnx.reference",
    "onnx",
    _on_cpu_views,
    lambda case: "ref.run(None, feeds)",
    _with_reference,
    onnx_outputs,
)

NP_SPLIT = Peer(
    "np.split",
    "numpy",
    _on_cpu,
    lambda case: copied(f"np.split(x, {case.parts}{_keywords(case, copy=False)})", case),
    _with_numpy,
    as_list,
)

SLICING = Peer("slicing", "numpy", _on_cpu_views, _slicing_statement, _with_numpy, as_list)

TORCH = Peer(
    "torch.split",
    "torch",
    _on_cpu,
    lambda case: copied(f"torch.split(t, {case.part_length}, dim={case.axis})", case, "p.clone()"),
    _with_torch,
    torch_parts,
)

# splitops on the same memory as a torch tensor (torch.from_numpy copies nothing): torch's path.
SPLITOPS_TORCH = Peer(
    "splitops on torch",
    "torch",
    _on_cpu,
    lambda case: splitops_statement(case, "t"),
    _with_splitops_torch,
    torch_parts,
)


def _whole_then_views(name: str, library: str, copy: str, prepare: Prepare, parts: Parts) -> Peer:
    """What copy=True must do at least: one copy of the whole input (``copy``, an expression),
    then views of it, splitops' own, so that the ratio measures the copying alone."""
    return Peer(
        name,
        library,
        _on_cpu_copies,
        lambda case: splitops_statement(dataclasses.replace(case, copy=False), copy),
        prepare,
        parts,
    )


COPY_THEN_VIEWS = _whole_then_views(
    "copy, then views", "numpy", "x.copy()", _with_splitops, as_list
)
CLONE_THEN_VIEWS = _whole_then_views(
    "clone, then views", "torch", "t.clone()", _with_splitops_torch, torch_parts
)


def _with_jax(case: Case, x: Any) -> dict[str, Any]:
    import jax.numpy as jnp

    return {"splitops": splitops, "jnp": jnp, "j": jnp.asarray(x)}


def _jax_small(case: Case) -> bool:
    return case.group == "small"


# jax dispatches asynchronously: both statements are timed to the dispatch of their arrays.
SPLITOPS_JAX = Peer(
    "splitops on jax",
    "jax",
    _jax_small,
    lambda case: splitops_statement(case, "j"),
    _with_jax,
    lambda value, ns, case: [np.asarray(part) for part in value],
)

JNP_SPLIT = Peer(
    "jnp.split",
    "jax",
    _jax_small,
    lambda case: f"jnp.split(j, {case.parts}{_keywords(case, copy=False)})",
    _with_jax,
    lambda value, ns, case: [np.asarray(part) for part in value],
)

#: Every CPU peer, in the order of the report's columns. A case that names its peers
#: (``Case.only``) runs those alone.
CPU_PEERS = (
    SPLITOPS,
    ONNXRUNTIME,
    ONNX_REFERENCE,
    NP_SPLIT,
    SLICING,
    TORCH,
    SPLITOPS_TORCH,
    SPLITOPS_JAX,
    JNP_SPLIT,
    SPLITOPS_OUT,
    NP_COPYTO,
    NP_COPYTO_PARTS,
    COPY_THEN_VIEWS,
    CLONE_THEN_VIEWS,
)
