"""The one shape of every lowering rule: a :class:`Form` says whether it applies to a site
(``None``) or gives a :class:`Reason` naming the nodes it is about, and builds what it
applies to; :func:`first_form` runs a target's ordered list of forms and keeps every reason
on the way, as onnxscript's rewriter keeps a ``MatchResult`` per rule.

The rules read a :class:`Context`, the part of the lowering's plan they may use (the view,
the edits, the target's forms, the builders of new nodes, the limit on parts), not the plan
itself; what they share across sites lives in objects of its own (the computed sizes of a
scope's Splits, what reads each sequence), each answering one question once.

>>> Reason("the axis length is not static", form="constant-sizes-on-static-axis").named
'constant-sizes-on-static-axis: the axis length is not static'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from ..model import ModelEdits, ModelView, Node, Scope, SplitSite

if TYPE_CHECKING:
    from ._graph_sizes import CheckForm, GraphBuilder
    from ._lower import Forms
    from ._sequence_forms import SequenceFacts
    from ._split_forms import SharedSizes

__all__ = ["Chosen", "Context", "Form", "Reason", "first_form"]

SiteT = TypeVar("SiteT")
ResultT = TypeVar("ResultT")


@dataclass(frozen=True)
class Reason:
    """Why a form does not apply: the words, the nodes they are about (the site's node
    first, then any other the form names: a reader, a Loop), and the form's name."""

    text: str
    nodes: tuple[Node, ...] = ()
    form: str = ""

    def __str__(self) -> str:
        return self.text

    @property
    def named(self) -> str:
        """The reason after its form's name, as a list of them reads."""
        return f"{self.form}: {self.text}" if self.form else self.text


class Context(Protocol):
    """What a form may read and do while it lowers a site: the plan of the lowering, seen
    through what the rules need of it."""

    @property
    def view(self) -> ModelView: ...
    @property
    def edits(self) -> ModelEdits: ...
    @property
    def target(self) -> str: ...
    @property
    def forms(self) -> Forms: ...
    #: The sizes computed in the graph, shared by a scope's Splits of one symbolic length.
    @property
    def sizes(self) -> SharedSizes: ...
    #: What reads each SplitToSequence's sequence, and why it stays.
    @property
    def sequences(self) -> SequenceFacts: ...

    def spend(self, node: Node, parts: int) -> None: ...
    def can_spend(self, parts: int) -> bool: ...
    def drop_input(self, node: Node, position: int) -> None: ...
    def scope_builder(
        self, scope: Scope, label: str, *, scalars: bool = False, check: CheckForm | None = None
    ) -> GraphBuilder: ...
    def builder(self, site: SplitSite[Scope], *, scalars: bool = False) -> GraphBuilder: ...
    def check_form(self, site: SplitSite[Scope]) -> CheckForm: ...


class Form(Generic[SiteT, ResultT]):
    """One form a site may take: :meth:`check` gives ``None`` where it applies, else the
    :class:`Reason` why not; :meth:`rewrite` makes its edits and says what it did."""

    name = ""

    def check(self, context: Context, site: SiteT) -> Reason | None:
        raise NotImplementedError

    def rewrite(self, context: Context, site: SiteT) -> ResultT:
        raise NotImplementedError

    def rewrite_after(
        self, context: Context, site: SiteT, before: Chosen[SiteT, ResultT]
    ) -> ResultT:
        """:meth:`rewrite`, for a form chosen after the forms ``before`` it (the last form
        of a list, which keeps or refuses, says the last of their reasons)."""
        return self.rewrite(context, site)


@dataclass(frozen=True)
class Chosen(Generic[SiteT, ResultT]):
    """The first form of a list that applies to a site (``None``: none does), and what each
    form before it said. A site's reasons are read only where it is refused or kept, so they
    take their form's name and the site's node when :attr:`reasons` is read."""

    form: Form[SiteT, ResultT] | None
    node: Node
    tried: tuple[tuple[Form[SiteT, ResultT], Reason], ...]

    @property
    def reasons(self) -> tuple[Reason, ...]:
        """The reason of each form before :attr:`form`, its form's name and the site's node
        first among the nodes it names."""
        node = self.node
        return tuple(
            replace(
                why,
                nodes=why.nodes if why.nodes[:1] == (node,) else (node, *why.nodes),
                form=form.name,
            )
            for form, why in self.tried
        )

    def rewrite(self, context: Context, site: SiteT) -> ResultT:
        assert self.form is not None
        return self.form.rewrite_after(context, site, self)


def first_form(
    forms: Sequence[Form[SiteT, ResultT]], context: Context, site: SiteT, node: Node
) -> Chosen[SiteT, ResultT]:
    """Run ``forms`` in order on ``site`` (of ``node``) up to the first that applies,
    keeping what each said (:attr:`Chosen.reasons`)."""
    tried: list[tuple[Form[SiteT, ResultT], Reason]] = []
    for form in forms:
        why = form.check(context, site)
        if why is None:
            return Chosen(form, node, tuple(tried))
        tried.append((form, why))
    return Chosen(None, node, tuple(tried))
