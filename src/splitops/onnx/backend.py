"""An ``onnx.backend`` that runs whole models: Split and SplitToSequence on splitops, every
other operator on ``onnx.reference``.

The module itself is the backend (``prepare``, ``run_model``, ``run_node``,
``supports_device``), so it plugs into ``onnx.backend.test.BackendTest(splitops.backend)``.
Split nodes inside subgraphs (If, Loop, Scan) and model-local functions run on splitops too:
the evaluator passes its op classes down to every graph it creates.

>>> import numpy as np
>>> from onnx import TensorProto, helper
>>> from splitops import backend
>>> graph = helper.make_graph(
...     [helper.make_node("Split", ["x"], ["a", "b"], num_outputs=2)], "g",
...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
...     [helper.make_tensor_value_info(n, TensorProto.FLOAT, [None]) for n in "ab"])
>>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
>>> backend.run_model(model, [np.arange(3, dtype=np.float32)])
(array([0., 1.], dtype=float32), array([2.], dtype=float32))
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import (
    AttributeProto,
    FunctionProto,
    ModelProto,
    TypeProto,
    helper,
    numpy_helper,
)
from onnx.backend.base import Backend, BackendRep, Device, DeviceType
from onnx.reference import ReferenceEvaluator

from ..arrays import element_of
from ..core import (
    ElementType,
    ModelCheckWarning,
    ModelInputError,
    OtherOperatorError,
    SplitError,
    SplitopsError,
)
from ._graphs import fed_inputs, split_nodes
from ._node import read_node
from ._node import run_node as _run_node
from ._reference import reference_ops
from ._types import element_name, shape_text, tensor_parts, type_text

__all__ = [
    "SplitopsBackend",
    "SplitopsEvaluator",
    "SplitopsRep",
    "check_feeds",
    "check_split_nodes",
    "prepare",
    "run_model",
    "run_node",
    "supports_device",
]


class SplitopsEvaluator(ReferenceEvaluator):
    """``ReferenceEvaluator`` with splitops' Split and SplitToSequence everywhere in a model.

    Every graph it creates (If, Loop and Scan bodies, model-local functions, function bodies
    of operators onnx.reference lacks) is a ``SplitopsEvaluator`` too. Beyond
    ``ReferenceEvaluator(model, new_ops=reference_ops())`` it

    - gives a model's local functions the op classes of ``new_ops`` as well (onnx.reference
      builds them without ``new_ops``);
    - lets a call leave out a function attribute (onnx.reference fails on the call) and
      applies the function's attribute defaults (``FunctionProto.attribute_proto``), which
      onnx.reference ignores: a ``ref_attr_name`` to a left-out attribute takes its default,
      or leaves the attribute out when there is none;
    - lets a :class:`~splitops.SplitError` raised in a subgraph or a function reach the caller
      as itself: ``OpRun.run`` re-raises every ``TypeError`` of an If, Loop, Scan or function
      node, :class:`~splitops.SplitTypeError` included, as a bare ``TypeError``.

    Op classes given in ``new_ops`` take precedence over splitops' own.
    """

    def __init__(self, proto: Any, new_ops: Any = None, **kwargs: Any) -> None:
        ops = [*(new_ops or ()), *reference_ops()]
        super().__init__(proto, new_ops=ops, **kwargs)
        if isinstance(proto, FunctionProto):
            # A caller's OpFunction reads these names off the calling node and fails on one the
            # call leaves out. The call's attributes reach run() all the same, so none are
            # listed: a left-out attribute is then absent from the body, as ONNX says.
            self.attributes_ = []
        if new_ops and isinstance(proto, ModelProto) and proto.functions:
            # The base class built the local functions without new_ops: build them again.
            self.functions_ = {}
            for function in proto.functions:
                self.functions_[function.domain, function.name] = type(self)(
                    function,
                    new_ops=ops,
                    verbose=self.verbose,
                    functions=list(self.functions_.values()),
                )
            self._init()

    def run(  # type: ignore[override]
        self,
        output_names: Any,
        feed_inputs: dict[str, Any],
        attributes: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        """Run as ``ReferenceEvaluator.run`` does, with the additions listed above."""
        if isinstance(self.proto_, FunctionProto) and attributes is not None:
            defaults = {a.name: _attribute_value(a) for a in self.proto_.attribute_proto}
            attributes = {**defaults, **attributes}
        try:
            return super().run(output_names, feed_inputs, attributes, **kwargs)
        except TypeError as error:
            split_error = _split_error_cause(error)
            if split_error is None:
                raise
            raise split_error from split_error.__cause__


class SplitopsRep(BackendRep):
    """A prepared model: ``run(inputs)`` returns the graph outputs in order."""

    def __init__(self, model: onnx.ModelProto) -> None:
        self.model = model
        try:
            self.evaluator = SplitopsEvaluator(model)
        except SplitopsError:
            raise
        except Exception as error:  # onnx.reference refusing another operator's node
            raise OtherOperatorError(
                f"onnx.reference cannot prepare the model: {type(error).__name__}: {error}"
            ) from error
        self.input_names = [entry.name for entry in fed_inputs(model.graph)]

    def run(self, inputs: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Run on ``inputs``: a mapping by name, a sequence in graph-input order, or one array.

        Each array must fit the graph input it feeds (:func:`check_feeds`), as onnxruntime
        requires; a :class:`~splitops.ModelInputError` says which does not.
        """
        if isinstance(inputs, Mapping):
            feeds = dict(inputs)
        else:
            values = [inputs] if isinstance(inputs, np.ndarray) else list(inputs)
            if len(values) > len(self.input_names):
                count = len(self.input_names)
                raise ModelInputError(
                    f"the model takes {count} input{'' if count == 1 else 's'} "
                    f"{self.input_names}; {len(values)} were given. Pass one array per graph "
                    "input, or a dict by name."
                )
            feeds = dict(zip(self.input_names, values))  # noqa: B905 (optional inputs may be left out)
        check_feeds(self.model, feeds)
        try:
            return tuple(self.evaluator.run(None, feeds))
        except SplitopsError:
            raise
        except Exception as error:  # another operator failing in onnx.reference
            raise OtherOperatorError(
                f"the model failed to run: {type(error).__name__}: {error}"
            ) from error


class SplitopsBackend(Backend):
    """The backend class; the module-level functions below are its methods."""

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> SplitopsRep:
        """Check the model and get it ready to run.

        Every Split and SplitToSequence node (subgraphs and local functions included) is read
        by its version's rules first, so a broken one raises SplitError naming it rather than
        the checker's ValidationError; then ``onnx.checker`` checks the rest, and what it
        finds is a :class:`~splitops.ModelCheckWarning`, not a refusal: onnxruntime and
        onnx.reference run such models.
        """
        check_split_nodes(model)
        try:
            onnx.checker.check_model(model)
        except onnx.checker.ValidationError as error:
            # onnxruntime and onnx.reference run models the checker objects to (a graph output
            # declared without a shape, say): a problem unrelated to Split only warns.
            warnings.warn(
                f"onnx.checker: {' '.join(str(error).split())} The model runs all the same.",
                ModelCheckWarning,
                stacklevel=2,
            )
        return SplitopsRep(model)

    @classmethod
    def run_model(
        cls, model: onnx.ModelProto, inputs: Any, device: str = "CPU", **kwargs: Any
    ) -> tuple[Any, ...]:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(
        cls,
        node: onnx.NodeProto,
        inputs: Sequence[Any],
        device: str = "CPU",
        outputs_info: Any = None,
        **kwargs: Any,
    ) -> tuple[Any, ...]:
        opset = kwargs.get("opset_version", onnx.defs.onnx_opset_version())
        return tuple(_run_node(node, inputs, opset=opset))

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return bool(Device(device).type == DeviceType.CPU)


def check_feeds(model: ModelProto, feeds: Mapping[str, Any]) -> None:
    """ModelInputError unless the arrays in ``feeds`` fit the graph inputs they feed.

    Every input that no initializer fills must be given, and nothing else; an array must
    have the declared element type, rank and static dims, and a symbolic dim used by several
    inputs must have one length in all of them. Inputs whose type is not a tensor are left to
    the evaluator.

    >>> from onnx import TensorProto, helper
    >>> x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])
    >>> model = helper.make_model(helper.make_graph([], "g", [x], [x]))
    >>> check_feeds(model, {"x": np.zeros((3, 5), np.float32)})
    Traceback (most recent call last):
    ...
    splitops.ModelInputError: input 'x': the model declares ..., but ... dim 1 must be 4.
    """
    declared = {entry.name: entry for entry in model.graph.input}
    needed = [entry.name for entry in fed_inputs(model.graph)]
    unknown = sorted(set(feeds) - set(declared))
    if unknown:
        raise ModelInputError(f"the model has no input {unknown[0]!r}; its inputs are {needed}.")
    missing = [name for name in needed if name not in feeds]
    if missing:
        raise ModelInputError(f"the model needs input {missing[0]!r}; none was given.")
    lengths: dict[str, tuple[int, str]] = {}
    for name, value in feeds.items():
        problem = _misfit(declared[name].type, value, name, lengths)
        if problem:
            given = f"an array of {_element_text(value)} {tuple(np.shape(value))}"
            raise ModelInputError(
                f"input {name!r}: the model declares {_type_text(declared[name].type)}, but "
                f"{given} was given: {problem}."
            )


def _misfit(
    declared: TypeProto, value: Any, name: str, lengths: dict[str, tuple[int, str]]
) -> str | None:
    """What about ``value`` does not fit ``declared``, or ``None``."""
    elem, dims = tensor_parts(declared)
    if declared.WhichOneof("value") != "tensor_type" or not hasattr(value, "dtype"):
        return None
    given = element_of(value.dtype)
    if elem and getattr(given, "code", None) != elem:
        return f"its element type must be {element_name(elem)}"
    if dims is None:
        return None
    shape = tuple(np.shape(value))
    if len(shape) != len(dims):
        return f"its rank must be {len(dims)}"
    for axis, (dim, length) in enumerate(zip(dims, shape, strict=True)):
        if dim.HasField("dim_value") and dim.dim_value != length:
            return f"dim {axis} must be {dim.dim_value}"
        if dim.dim_param:
            first = lengths.setdefault(dim.dim_param, (length, f"{name!r} dim {axis}"))
            if first[0] != length:
                return (
                    f"dim {axis} is the symbol {dim.dim_param!r}, which is {first[0]} in {first[1]}"
                )
    return None


def _element_text(value: Any) -> str:
    element = element_of(value.dtype)
    return str(element) if isinstance(element, ElementType) else str(value.dtype)


def _type_text(type_proto: TypeProto) -> str:
    return f"{type_text(type_proto) or '?'} {shape_text(type_proto) or '?'}"


def check_split_nodes(model: ModelProto) -> None:
    """Read every Split and SplitToSequence node of ``model`` by its version's rules.

    Raises SplitError naming the first broken node. A node of a function body whose attributes
    refer to the function's (``ref_attr_name``) is read when it runs, once the call gives them.
    """
    for body, node in split_nodes(model):
        if body.opset is not None and not any(a.ref_attr_name for a in node.attribute):
            read_node(node, body.opset)


def _split_error_cause(error: BaseException) -> SplitError | None:
    """The SplitError that ``OpRun.run`` wrapped, possibly several times, into ``error``."""
    cause: BaseException | None = error
    while isinstance(cause, TypeError):
        if isinstance(cause, SplitError):
            return cause
        cause = cause.__cause__
    return None


def _attribute_value(attribute: AttributeProto) -> Any:
    """A function attribute's default value as onnx.reference passes attributes to nodes."""
    value = helper.get_attribute_value(attribute)
    if attribute.type == AttributeProto.STRING:
        return value.decode("utf-8")
    if attribute.type == AttributeProto.STRINGS:
        return [item.decode("utf-8") for item in value]
    if attribute.type == AttributeProto.TENSOR:
        return numpy_helper.to_array(value)
    if attribute.type == AttributeProto.TENSORS:
        return [numpy_helper.to_array(item) for item in value]
    return value


prepare = SplitopsBackend.prepare
run_model = SplitopsBackend.run_model
run_node = SplitopsBackend.run_node
supports_device = SplitopsBackend.supports_device
