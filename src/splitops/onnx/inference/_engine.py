"""Shape and type inference for Split and SplitToSequence that agrees with execution.

The sizes of the parts come from the planner (:mod:`._split`), so an inferred shape is the
executed shape by construction; a ``split`` computed by other nodes (``Shape -> Gather ->
Div -> Concat``) is followed by :mod:`._values`, so that its sizes are expressions of the
input's dims. Inference is an overlay on the model's view, linear in the size of the model,
one module per job:

1. onnx's own pass types the whole model once (:mod:`._onnx_pass`), the nodes it cannot
   take hidden from it. The view (:class:`~splitops.onnx.model.ModelView`) then holds the
   user's model and onnx's typed copy, scope by scope, by identity.
2. One walk over the view's scopes (:mod:`._overlay`), in order, subgraphs where their node
   stands: an overlay per scope walked adds what splitops finds to what the view says, each
   Split's outcome from the planner, and other nodes inferred again by onnx only where an
   input's type changed. Subgraphs alike are walked once.
3. A call of a local function that holds a Split is inferred by inlining that one call and
   running this scheme on it (:mod:`._calls`); calls alike are inferred once.
4. The types that differ from onnx's are written into the typed copy (:mod:`._write`), and
   what was found of each node is returned as a :class:`SplitNodeInference`, which carries
   the node's identity.

What is written: the element type and shape of each output of each node, in the graph's
``value_info`` (or in a graph output), in the main graph, subgraphs and local functions.
A Split output whose declaration contradicts the inferred type is a problem of that node
(``declared-shape``).

>>> from onnx import TensorProto, helper
>>> graph = helper.make_graph(
...     [helper.make_node("Split", ["x"], ["a", "b", "c", "d"], axis=1, num_outputs=4)], "g",
...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, "N"])],
...     [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in "abcd"])
>>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
>>> for row in describe_split_outputs(model)[-2:]:
...     print(row.output, row.type, row.shape)
c tensor(float) [2, ceiling(N/4)]
d tensor(float) [2, N - 3*ceiling(N/4)]
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

from onnx import ModelProto, NodeProto, TypeProto

from ...core import SplitError, require_argument
from ..model import (
    FunctionId,
    ModelView,
    Node,
    ScopeKey,
    ValueType,
    check_node_count,
    node_error,
    node_label,
)
from ..model.describe import SplitOutputDescription
from ._calls import Calls, add_call, infer_uncalled
from ._onnx_pass import split_holders, typed_by_onnx
from ._overlay import SAME_TYPE_OPS, _Pass
from ._split import Inferred, Outcome, Site, merge
from ._symbolic import DimParams
from ._write import write_functions

__all__ = [
    "SAME_TYPE_OPS",
    "SplitInferenceWarning",
    "SplitNodeInference",
    "SplitOutputDescription",
    "describe_split_outputs",
    "infer_model_and_nodes",
    "infer_shapes",
    "infer_split_nodes",
]


class SplitInferenceWarning(UserWarning):
    """An invalid Split or SplitToSequence node whose outputs were left without shapes."""


@dataclass(frozen=True)
class SplitNodeInference:
    """What inference found for one Split or SplitToSequence node."""

    #: Where the node lives: "main", "main/if_1.then_branch", "function:local.MyFn".
    graph: str
    node: NodeProto
    #: The default-domain opset the node is read at.
    opset: int
    #: The inferred type of each output, by name; empty when the input type is unknown or
    #: the node is invalid.
    outputs: tuple[tuple[str, TypeProto], ...] = ()
    #: Each problem found, as (check, error): the check is "schema", "dtype",
    #: "split-dtype", "split-shape", "axis", "sizes" or "declared"; the error does not name
    #: the node.
    problems: tuple[tuple[str, SplitError], ...] = ()
    #: Whether the node lies inside a branch of an If, which may never run: a branch for
    #: other input shapes may hold nodes that are invalid for these ones.
    in_branch: bool = False
    #: Its identity: the scope it lies in (see :data:`~splitops.onnx.model.ScopeKey`) and its
    #: index there. ``graph`` and ``label`` are for people: two nodes may share both.
    scope: ScopeKey = (None, ())
    index: int = 0
    #: The node's operator.
    op_type: str = ""

    @property
    def output_names(self) -> tuple[str, ...]:
        """The names of its outputs, as it lists them (``""`` for one left out)."""
        return Node.alone(self.node).output_names

    @property
    def label(self) -> str:
        """The node's name, or its first output's name when it has none."""
        return node_label(self.node)

    @property
    def error(self) -> SplitError | None:
        """The first problem, as the SplitError that names the node, or ``None``."""
        return node_error(self.node, self.problems[0][1]) if self.problems else None


def infer_shapes(model: ModelProto, *, strict: bool = True) -> ModelProto:
    """A copy of ``model`` with the types and shapes of all values, Split's exact.

    Every other node is inferred by ``onnx.shape_inference`` as usual, from splitops' types.
    An invalid Split or SplitToSequence node raises SplitError (naming the graph and node),
    or with ``strict=False`` warns with :class:`SplitInferenceWarning` and leaves its outputs
    without shapes. An invalid node inside a branch of an If only warns, even when strict:
    the branch may be one that these inputs never take.
    """
    require_argument(model, ModelProto, "infer_shapes", "an onnx.ModelProto")
    inferred, records = _infer_model(model, write=True)
    for record in records:
        error = record.error
        if error is None:
            continue
        if strict and not record.in_branch:
            raise error.in_context(f"{record.graph}: ") from record.problems[0][1]
        reasons = SplitError(
            " ".join(str(problem) for _, problem in record.problems), rule=error.rule
        )
        warnings.warn(
            f"{record.graph}: {node_error(record.node, reasons)} "
            "Its outputs are left without shapes.",
            SplitInferenceWarning,
            stacklevel=2,
        )
    return inferred.model


def infer_model_and_nodes(model: ModelProto) -> tuple[ModelProto, list[SplitNodeInference]]:
    """:func:`infer_shapes` with ``strict=False`` (without its warnings) and
    :func:`infer_split_nodes`, from one inference: the inferred copy of ``model`` and what
    was found for every node."""
    inferred, records = _infer_model(model, write=True)
    return inferred.model, records


def infer_split_nodes(model: ModelProto) -> list[SplitNodeInference]:
    """What inference finds for every Split and SplitToSequence node: main graph,
    subgraphs, then local functions (types on which all call sites agree, and the first
    error any call site meets)."""
    return _infer_model(model, write=False)[1]


def describe_split_outputs(model: ModelProto) -> list[SplitOutputDescription]:
    """Every output of every Split and SplitToSequence node with its inferred type and shape.

    An invalid node's outputs come with the reason in ``error`` (nothing is raised).
    """
    rows: list[SplitOutputDescription] = []
    for record in infer_split_nodes(model):
        types = dict(record.outputs)
        error = "" if record.error is None else str(record.error)
        rows.extend(
            SplitOutputDescription.of(record.graph, record.label, output, types.get(output), error)
            for output in record.output_names
            if output
        )
    return rows


# --- one inference of a model -------------------------------------------------------------


def _infer_model(model: ModelProto, *, write: bool) -> tuple[Inferred, list[SplitNodeInference]]:
    """One inference of the user's ``model`` (see the module's docstring), its size first
    checked against the limits; ``write``: the types go into the returned model. What was
    found, and the record of every node."""
    # Without local functions, the walk that finds what onnx's pass must not see counts
    # the nodes, before that pass.
    view = ModelView.read(model)
    functions = bool(view.functions)
    if functions:
        check_node_count(model)
    params = DimParams(view.dim_names)
    calls = Calls(_infer_inlined)
    holders = split_holders(view)
    inferred, view = _infer(view, holders, params, calls, write=write, count_nodes=not functions)
    infer_uncalled(inferred, view, holders, params, calls)
    if write:
        write_functions(inferred, view)
    return inferred, _records(inferred, view)


def _infer_inlined(model: ModelProto, params: DimParams, calls: Calls) -> Inferred:
    """The inference of a model of one call, inlined (:mod:`._calls`): ``params`` are the
    dim names of the inference that inlined it, ``calls`` the calls met so far."""
    view = ModelView.read(model)
    return _infer(view, split_holders(view), params, calls, write=False)[0]


def _infer(
    view: ModelView,
    holders: set[FunctionId],
    params: DimParams,
    calls: Calls,
    *,
    write: bool,
    count_nodes: bool = False,
) -> tuple[Inferred, ModelView]:
    """onnx's pass and the overlay walk over the view's model, whose local functions
    ``holders`` hold a Split: what they found, and the view of the model walked (a copy
    without negative dims where the model held some), its types from onnx's typed copy.
    ``count_nodes``: its nodes are held against the ``max_nodes`` limit before onnx's pass
    (a model without local functions)."""
    view, base = typed_by_onnx(view, holders, count_nodes=count_nodes)
    view.take_types(base)
    run = _Pass(view, holders, params, calls)
    main = run.walk_main()
    inferred = Inferred(base, run.sites(write=write))
    for name in view.main.output_names():
        found = main.type_of(name)
        if found is not None and found.known:
            inferred.outputs[name] = found
    for function, call in run.met.values():
        add_call(inferred, function, call, nested=True)
    run.release()
    return inferred, view


def _records(inferred: Inferred, view: ModelView) -> list[SplitNodeInference]:
    """What was found of every node: the model's own, then each local function's places
    (types on which all call sites agree, and the first error any call site meets)."""
    written = _Written()
    found = [written.record(site, outcome) for site, outcome in inferred.own]
    for key in view.functions:
        places = inferred.functions.get(key, {})
        for (where, index), outcomes in sorted(places.items()):
            scope = view.scope((key, where))
            assert scope is not None  # a place inference found in the function
            site = Site.of(scope.nodes[index], scope.in_branch)
            found.append(written.record(site, merge(list(outcomes.values()))))
    return found


class _Written:
    """The records of the nodes, each outcome's types written once as ``TypeProto`` (nodes
    alike share their outcome, and parts of one size their type)."""

    def __init__(self) -> None:
        # By the type's id, with the type, which keeps the id its own: the outcomes of nodes
        # alike hold the same types.
        self._types: dict[int, tuple[ValueType, TypeProto]] = {}

    def record(self, site: Site, outcome: Outcome) -> SplitNodeInference:
        outputs = []
        types = self._types
        for name, found in outcome.outputs:
            known = types.get(id(found))
            if known is None:
                known = types[id(found)] = (found, found.proto())
            outputs.append((name, known[1]))
        return SplitNodeInference(
            site.label,
            site.node,
            site.opset or 0,
            tuple(outputs),
            outcome.problems,
            site.in_branch,
            site.key,
            site.position,
            site.op_type,
        )
