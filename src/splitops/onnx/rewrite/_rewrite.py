"""What every rewrite of a model's Split nodes does, in one order: onnx-ir's passes state
``requires`` and ``ensures``; a :class:`Rewrite` states them around its plan.

1. :meth:`Rewrite.requires`: the model is one this rewrite takes (its size against the
   limits, and what the rewrite itself needs), or a :class:`~splitops.SplitError`;
2. :meth:`Rewrite.types`: the types the plan reads (splitops' inference);
3. :meth:`Rewrite.plan`: edits planned on the view of a copy of the model, never on the
   protobuf itself;
4. the edits applied at once (:meth:`~splitops.onnx.model.ModelEdits.apply`), then
   :meth:`Rewrite.finish` for what the rewrite does to the whole copy; each node the edits
   place has a name no other node has, the model's own nodes keep theirs;
5. :meth:`Rewrite.ensures`: the contract (:func:`~splitops.onnx.rewrite._contract.check_rewrite`)
   on the result, before anyone sees it.

:func:`~splitops.convert_model` and :func:`~splitops.lower_model` are rewrites; the onnx-ir
pass (:class:`~splitops.onnx.LowerSplits`) runs the lowering.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from onnx import ModelProto

from ...core import report_progress
from ..model import ModelEdits, ModelView, ScopeKey, check_model_size, copy_model
from ._contract import check_rewrite

__all__ = ["Rewrite"]


class Rewrite(ABC):
    """One rewrite: call it on a model for the rewritten copy (see the module's
    documentation)."""

    #: What it is called in messages ("lowering", "conversion").
    what = ""
    #: The declarations (scope, once the edits are made, and name) whose shape the last
    #: model's rewrite corrected, being untrue of what the model computes (see
    #: :mod:`~splitops.onnx.rewrite._declared`): the contract lets them differ.
    corrected: set[tuple[ScopeKey, str]] = frozenset()  # type: ignore[assignment]

    def requires(self, model: ModelProto) -> None:
        """A :class:`~splitops.SplitError` unless ``model`` is one this rewrite takes."""
        check_model_size(model)

    @abstractmethod
    def types(self, model: ModelProto) -> ModelProto:
        """A copy of ``model`` with the same nodes, typed: the view reads its types."""

    @abstractmethod
    def plan(self, view: ModelView, edits: ModelEdits) -> None:
        """Plan the edits of every Split and SplitToSequence node of ``view``."""

    @abstractmethod
    def finish(self, model: ModelProto) -> None:
        """What the rewrite does to the whole copy once the edits are in it."""

    def ensures(
        self, original: ModelProto, result: ModelProto, view: ModelView, edits: ModelEdits
    ) -> None:
        """A :class:`~splitops.onnx.rewrite._contract.RewriteError` unless ``result`` keeps the
        promises of a rewrite of ``original``."""
        check_rewrite(
            original, result, self.what, before=view, edits=edits, corrected=self.corrected
        )

    def __call__(self, model: ModelProto) -> ModelProto:
        self.corrected = set()
        report_progress(f"{self.what}: checking the model against the limits")
        self.requires(model)
        report_progress(f"{self.what}: inferring the types")
        typed = self.types(model)
        result = copy_model(model)
        view = ModelView.read(result, types=typed)
        edits = ModelEdits(view)
        report_progress(f"{self.what}: planning the edits")
        self.plan(view, edits)
        report_progress(f"{self.what}: applying the edits")
        edits.apply()
        self.finish(result)
        report_progress(f"{self.what}: checking the result (onnx's full check and inference)")
        self.ensures(model, result, view, edits)
        return result
