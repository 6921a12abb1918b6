"""An ``onnx.backend`` that runs whole models: Split and SplitToSequence on splitops, every
other operator on ``onnx.reference``.

The module itself is the backend (``prepare``, ``run_model``, ``run_node``,
``supports_device``), so it plugs into ``onnx.backend.test.BackendTest(splitops.backend)``.
Split nodes inside subgraphs (If, Loop, Scan) and model-local functions run on splitops too:
the evaluator passes its op classes down to every graph it creates.

``prepare(model, engine="onnxruntime")`` runs the whole model on onnxruntime instead, at its
speed: the model is lowered once (:func:`~splitops.lower_model`, for the onnxruntime release
installed), so that onnxruntime computes what the spec says, and one ``InferenceSession`` runs
it. Outputs and errors are the reference engine's: where onnxruntime fails on some inputs, the
reference engine runs them, and its error (or, where onnxruntime lacks what the model needs,
its outputs, with an :class:`EngineFallbackWarning`) is what the call gives. A model that
lowering refuses (a node the spec rejects, perhaps in an If branch these inputs never take) or
that onnxruntime cannot load runs on the reference engine, with an
:class:`EngineFallbackWarning` at ``prepare``.

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

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import FunctionProto, ModelProto, NodeProto
from onnx.backend.base import Backend, BackendRep, Device, DeviceType
from onnx.reference import ReferenceEvaluator

from ...core import (
    ModelCheckWarning,
    ModelInputError,
    OtherOperatorError,
    Rule,
    SplitError,
    SplitopsError,
    require_argument,
    warn_caller,
)
from ..model import Node, TensorType, ValueType, read_node
from ..model.describe import describe_type
from ..model.protobuf import (
    code_of_array,
    dtype_of_code,
    element_name,
    function_defaults,
    function_id,
    input_types,
    links_attributes,
    model_nodes,
    reserve_memory,
    weight_bytes,
)
from ..model.protobuf import run_node as _run_node
from ._control_flow import control_flow_ops
from ._reference import bounded_run, reference_ops

__all__ = [
    "ENGINES",
    "EngineFallbackWarning",
    "OnnxruntimeRep",
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
    """``ReferenceEvaluator`` with splitops' Split and SplitToSequence everywhere in a model,
    and Loop, Scan and local functions as the spec runs them where onnx.reference departs.

    Every graph it creates (If, Loop and Scan bodies, model-local functions, function bodies
    of operators onnx.reference lacks) is a ``SplitopsEvaluator`` too. Beyond
    ``ReferenceEvaluator(model, new_ops=reference_ops())`` it

    - runs Loop and Scan by the spec (:mod:`~splitops.onnx.run._control_flow`): a Loop
      without ``cond`` runs ``M`` iterations, scan outputs are stacked along a new axis, a
      zero-trip Loop or Scan gives empty scan outputs, and a Scan takes every axis and
      direction;
    - runs each call of a local function on the function its ``(domain, name, overload)``
      names (onnx.reference keys functions by domain and name, so every call ran one
      overload's body);
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

    def __init__(
        self, proto: Any, new_ops: Any = None, functions: Any = None, **kwargs: Any
    ) -> None:
        ops = [*(new_ops or ()), *reference_ops(), *control_flow_ops()]
        # The functions this graph may call, by identity; built before the base class loads
        # the nodes (_init), which asks _load_impl for each.
        listed = proto.functions if isinstance(proto, ModelProto) else functions or ()
        self._functions_by_id: dict[tuple[str, str, str], ReferenceEvaluator] = {}
        for function in listed:
            if isinstance(function, FunctionProto):
                function = type(self)(
                    function,
                    new_ops=new_ops,
                    verbose=kwargs.get("verbose", 0),
                    functions=list(self._functions_by_id.values()),
                )
            self._functions_by_id[function_id(function.proto_)] = function
        super().__init__(proto, new_ops=ops, functions=functions, **kwargs)
        if isinstance(proto, FunctionProto):
            # A caller's OpFunction reads these names off the calling node and fails on one the
            # call leaves out. The call's attributes reach run() all the same, so none are
            # listed: a left-out attribute is then absent from the body, as ONNX says.
            self.attributes_ = []

    def _init(self) -> None:
        # The base class keyed the functions by (domain, name), one overload each; keyed by
        # identity instead, a subgraph (which gets them through the run parameters) sees
        # every overload, and _load_impl picks the one a call names.
        self.functions_ = dict(self._functions_by_id)  # type: ignore[arg-type]
        super()._init()

    def _load_impl(self, node: NodeProto, input_types: Any = None) -> Any:
        identity = Node.alone(node).function_id
        called = self._functions_by_id.get(identity)
        if called is None:
            return super()._load_impl(node, input_types)
        # The base class finds a function by (domain, name): for this call, the one named.
        key = identity[:2]
        self.functions_[key] = called
        try:
            return super()._load_impl(node, input_types)
        finally:
            del self.functions_[key]

    def run(  # type: ignore[override]
        self,
        output_names: Any,
        feed_inputs: dict[str, Any],
        attributes: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        """Run as ``ReferenceEvaluator.run`` does, with the additions listed above."""
        if isinstance(self.proto_, FunctionProto) and attributes is not None:
            defaults = function_defaults(self.proto_, plain=True)
            attributes = {**defaults, **attributes}
        try:
            with bounded_run():
                return super().run(output_names, feed_inputs, attributes, **kwargs)
        except TypeError as error:
            split_error = _split_error_cause(error)
            if split_error is None:
                raise
            raise split_error from split_error.__cause__


#: The engines that run whole models: the exact reference path, and onnxruntime.
ENGINES = ("reference", "onnxruntime")


class EngineFallbackWarning(UserWarning):
    """The onnxruntime engine ran a model, or some inputs, on the reference engine."""


class SplitopsRep(BackendRep):
    """A prepared model: ``run(inputs)`` returns the graph outputs in order."""

    engine = "reference"

    def __init__(self, model: onnx.ModelProto) -> None:
        self.model = model
        try:
            self.evaluator = SplitopsEvaluator(model)
        except (SplitopsError, MemoryError):
            raise
        except Exception as error:  # onnx.reference refusing another operator's node
            raise OtherOperatorError(
                f"onnx.reference cannot prepare the model: {type(error).__name__}: {error}"
            ) from error
        self.input_names = list(input_types(model, fed=True))
        self._declared = input_types(model)

    def run(self, inputs: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Run on ``inputs``: a mapping by name, a sequence in graph-input order, or one array.

        Each array must fit the graph input it feeds (:func:`check_feeds`), as onnxruntime
        requires; a :class:`~splitops.ModelInputError` says which does not.
        """
        feeds = feeds_by_name(self.input_names, inputs)
        _check_feeds(self._declared, self.input_names, feeds)
        try:
            return tuple(self.evaluator.run(None, feeds))
        except (SplitopsError, MemoryError):
            raise
        except Exception as error:  # another operator failing in onnx.reference
            raise OtherOperatorError(
                f"the model failed to run: {type(error).__name__}: {error}"
            ) from error


class OnnxruntimeRep(BackendRep):
    """A model prepared for the onnxruntime engine: lowered once, one ``InferenceSession``.

    ``engine`` says what runs it: ``"onnxruntime"``, or ``"reference"`` where the model could
    not be lowered or loaded (``fallback`` says why).
    """

    def __init__(
        self,
        model: onnx.ModelProto,
        *,
        session_options: Any = None,
        providers: Sequence[str] | None = None,
    ) -> None:
        from ..rewrite import lower_model
        from ._ort import avoid_crashes, import_onnxruntime, make_session, needs_raw_values

        release = str(import_onnxruntime().__version__)
        self.model = model
        self.input_names = list(input_types(model, fed=True))
        self.session: Any = None
        self.fallback: str | None = None
        self._reference: SplitopsRep | None = None
        try:
            lowered = lower_model(model, target="onnxruntime", release=release)
        except SplitError as error:
            if error.rule is Rule.LIMIT:
                raise  # the reference engine would make as much
            self.fallback = f"lower_model refused the model: {error}"
        else:
            self.fallback = avoid_crashes(lowered)
        if self.fallback is None:
            try:
                self.session = make_session(
                    lowered, session_options=session_options, providers=providers
                )
            except MemoryError:
                raise
            except Exception as error:  # onnxruntime's own classes
                self.fallback = f"onnxruntime cannot load the lowered model: {_one_line(error)}"
        if self.fallback is not None:
            warn_caller(f"{self.fallback} The reference engine runs it.", EngineFallbackWarning)
        # The fast path: the session's own run, where numpy can hand every value over.
        plain = self.session is not None and not needs_raw_values(self.session)
        self._run: Any = self.session.run if plain else None

    @property
    def engine(self) -> str:
        return "reference" if self.session is None else "onnxruntime"

    def run(self, inputs: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Run on ``inputs`` as :meth:`SplitopsRep.run` does, on onnxruntime."""
        feeds = feeds_by_name(self.input_names, inputs)
        run = self._run
        if run is not None:
            try:
                return tuple(run(None, feeds))
            except Exception as error:  # onnxruntime's own classes
                return self._on_reference(feeds, error)
        if self.session is None:
            return self.reference.run(feeds)
        from ._ort import run_session

        try:
            return tuple(run_session(self.session, feeds))
        except Exception as error:  # onnxruntime's own classes
            return self._on_reference(feeds, error)

    def _on_reference(self, feeds: dict[str, Any], error: Exception) -> tuple[Any, ...]:
        """What the reference engine gives for inputs onnxruntime failed on: its error, or its
        outputs with a warning."""
        outputs = self.reference.run(feeds)
        warn_caller(
            f"onnxruntime failed on these inputs ({_one_line(error)}); the reference engine's "
            "outputs are returned.",
            EngineFallbackWarning,
        )
        return outputs

    @property
    def reference(self) -> SplitopsRep:
        """The reference engine's preparation of the same model, made at first use."""
        if self._reference is None:
            self._reference = SplitopsRep(self.model)
        return self._reference


def feeds_by_name(input_names: Sequence[str], inputs: Any) -> dict[str, Any]:
    """Inputs by name, from a mapping by name, a sequence in graph-input order, or one array;
    a numpy scalar (``np.float32(1.0)``) becomes a 0-d array, as ``onnxruntime.backend``
    takes it.

    Every run of a prepared model goes through it: a dict, a list or an array is told by its
    exact type first (an ``isinstance`` against ``Mapping`` costs more than a whole Split on
    onnxruntime's small models)."""
    kind = type(inputs)
    if kind is dict or (kind not in (list, tuple, np.ndarray) and isinstance(inputs, Mapping)):
        given = dict(inputs)
    else:
        values = [inputs] if kind is np.ndarray else list(inputs)
        if len(values) > len(input_names):
            count = len(input_names)
            raise ModelInputError(
                f"the model takes {count} input{'' if count == 1 else 's'} "
                f"{list(input_names)}; {len(values)} were given. Pass one array per graph "
                "input, or a dict by name."
            )
        given = dict(zip(input_names, values))  # noqa: B905 (optional inputs may be left out)
    for name, value in given.items():
        if isinstance(value, np.generic):
            given[name] = np.asarray(value)
    return given


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())


class SplitopsBackend(Backend):
    """The backend class; the module-level functions below are its methods."""

    @classmethod
    def prepare(
        cls,
        model: onnx.ModelProto,
        device: str = "CPU",
        engine: str = "reference",
        **kwargs: Any,
    ) -> SplitopsRep | OnnxruntimeRep:
        """Check the model and get it ready to run on ``engine``.

        Every Split and SplitToSequence node (subgraphs and local functions included) is read
        by its version's rules first, so a broken one raises SplitError naming it rather than
        the checker's ValidationError; then ``onnx.checker`` checks the rest, and what it
        finds is a :class:`~splitops.ModelCheckWarning`, not a refusal: onnxruntime and
        onnx.reference run such models.

        ``engine="reference"`` (the default) runs every operator on onnx.reference and Split
        on splitops: exact, slow. ``engine="onnxruntime"`` lowers the model once and runs it
        on onnxruntime (``session_options=`` and ``providers=`` go to its
        ``InferenceSession``): its speed, the same outputs and errors.
        """
        require_argument(model, ModelProto, "backend.prepare", "an onnx.ModelProto")
        if engine not in ENGINES:
            raise SplitError(
                f"the engine must be one of {', '.join(ENGINES)}; {engine!r} was given.",
                rule=Rule.ARGUMENT,
            )
        options = {k: kwargs.pop(k) for k in ("session_options", "providers") if k in kwargs}
        check_split_nodes(model)
        # onnx.checker serializes the model, and its C++ side parses it again.
        reserve_memory(2 * weight_bytes(model))
        try:
            onnx.checker.check_model(model)
        except onnx.checker.ValidationError as error:
            # onnxruntime and onnx.reference run models the checker objects to (a graph output
            # declared without a shape, say): a problem unrelated to Split only warns.
            warn_caller(
                f"onnx.checker: {' '.join(str(error).split())} The model runs all the same.",
                ModelCheckWarning,
            )
        if engine == "onnxruntime":
            return OnnxruntimeRep(model, **options)
        return SplitopsRep(model)

    @classmethod
    def run_model(
        cls,
        model: onnx.ModelProto,
        inputs: Any,
        device: str = "CPU",
        engine: str = "reference",
        **kwargs: Any,
    ) -> tuple[Any, ...]:
        require_argument(model, ModelProto, "backend.run_model", "an onnx.ModelProto")
        return cls.prepare(model, device, engine, **kwargs).run(inputs)

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
    _check_feeds(input_types(model), list(input_types(model, fed=True)), feeds)


def _check_feeds(
    declared: Mapping[str, ValueType | None], needed: Sequence[str], feeds: Mapping[str, Any]
) -> None:
    """:func:`check_feeds` against the types of the graph inputs (:func:`input_types`) and
    the names of those a caller must feed, read once."""
    unknown = sorted(set(feeds) - set(declared))
    if unknown:
        raise ModelInputError(f"the model has no input {unknown[0]!r}; its inputs are {needed}.")
    missing = [name for name in needed if name not in feeds]
    if missing:
        raise ModelInputError(f"the model needs input {missing[0]!r}; none was given.")
    lengths: dict[str, tuple[int, str]] = {}
    for name, value in feeds.items():
        problem = _misfit(declared[name], value, name, lengths)
        if problem:
            given = f"an array of {_element_text(value)} {tuple(np.shape(value))}"
            raise ModelInputError(
                f"input {name!r}: the model declares {describe_type(declared[name])}, but "
                f"{given} was given: {problem}."
            )


def _misfit(
    declared: ValueType | None, value: Any, name: str, lengths: dict[str, tuple[int, str]]
) -> str | None:
    """What about ``value`` does not fit ``declared`` (a negative length as written), or
    ``None``."""
    if not isinstance(declared, TensorType) or not hasattr(value, "dtype"):
        return None
    elem, dims = declared.element, declared.dims
    if elem and code_of_array(value.dtype) != elem:
        holder = dtype_of_code(elem)
        if holder is None:
            return f"its element type must be {element_name(elem)}"
        library = "ml_dtypes." if holder.isbuiltin == 2 else ""
        return f"its element type must be {element_name(elem)} (numpy dtype {library}{holder})"
    if dims is None:
        return None
    shape = tuple(np.shape(value))
    if len(shape) != len(dims):
        return f"its rank must be {len(dims)}"
    for axis, (dim, length) in enumerate(zip(dims, shape, strict=True)):
        if isinstance(dim, int) and dim != length:
            return f"dim {axis} must be {dim}"
        if isinstance(dim, str):
            first = lengths.setdefault(dim, (length, f"{name!r} dim {axis}"))
            if first[0] != length:
                return f"dim {axis} is the symbol {dim!r}, which is {first[0]} in {first[1]}"
    return None


def _element_text(value: Any) -> str:
    """An array's element type by its ONNX name, or its dtype where it has none."""
    code = code_of_array(value.dtype)
    return str(value.dtype) if code is None else element_name(code)


def check_split_nodes(model: ModelProto) -> None:
    """Read every Split and SplitToSequence node of ``model`` by its version's rules.

    Raises SplitError naming the first broken node. A node of a function body whose attributes
    refer to the function's (``ref_attr_name``) is read when it runs, once the call gives them.
    """
    for opset, node in model_nodes(model):
        if node.is_split and opset is not None and not links_attributes(node.proto):
            read_node(node.proto, opset)


def _split_error_cause(error: BaseException) -> SplitError | None:
    """The SplitError that ``OpRun.run`` wrapped, possibly several times, into ``error``."""
    cause: BaseException | None = error
    while isinstance(cause, TypeError):
        if isinstance(cause, SplitError):
            return cause
        cause = cause.__cause__
    return None


prepare = SplitopsBackend.prepare
run_model = SplitopsBackend.run_model
run_node = SplitopsBackend.run_node
supports_device = SplitopsBackend.supports_device
