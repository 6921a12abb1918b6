"""The one shape of the lowering's rules: each form's check gives a reason naming the nodes
it is about, the runner of a target's list keeps every reason on the way, and the last form
of a list says the reasons it was given instead of asking the forms before it again."""

from __future__ import annotations

from typing import Any

import pytest
from harness.portability import computed_chunk_model, sequence_model

import splitops
from splitops.onnx.model import ModelEdits, ModelView, Node, SplitSite
from splitops.onnx.rewrite._forms import Context, Form, Reason, first_form
from splitops.onnx.rewrite._lower import FORMS, Lower, Plan


def _plan(model: Any, target: str) -> tuple[Plan, SplitSite[Any]]:
    view = ModelView.read(model, types=Lower(target).types(model))  # type: ignore[arg-type]
    site = SplitSite.read(next(view.split_nodes()))
    return Plan(view, target, ModelEdits(view)), site  # type: ignore[arg-type]


class _Counted(Form[SplitSite[Any], str]):
    """A form that never applies, counting how often it is asked."""

    def __init__(self, name: str) -> None:
        self.name, self.asked = name, 0

    def check(self, context: Context, site: SplitSite[Any]) -> Reason | None:
        self.asked += 1
        return Reason(f"{self.name} does not apply")


class _Last(Form[SplitSite[Any], str]):
    name = "last"

    def check(self, context: Context, site: SplitSite[Any]) -> Reason | None:
        return None

    def rewrite_after(self, context: Context, site: SplitSite[Any], before: Any) -> str:
        return " / ".join(why.named for why in before.reasons)


def test_the_runner_keeps_every_reason_with_its_form_and_the_site_s_node_first() -> None:
    plan, site = _plan(computed_chunk_model(["at0"])("N"), "portable")
    first, second = _Counted("a"), _Counted("b")
    chosen = first_form([first, second, _Last()], plan, site, site.node)
    assert chosen.form is not None
    assert chosen.form.name == "last"
    assert [why.named for why in chosen.reasons] == ["a: a does not apply", "b: b does not apply"]
    assert all(why.nodes == (site.node,) for why in chosen.reasons)
    # The last form is given the reasons: no form is asked twice.
    assert chosen.rewrite(plan, site) == "a: a does not apply / b: b does not apply"
    assert (first.asked, second.asked) == (1, 1)


def test_no_form_applying_gives_none_and_every_reason() -> None:
    plan, site = _plan(computed_chunk_model(["at0"])("N"), "portable")
    chosen = first_form([_Counted("a")], plan, site, site.node)
    assert chosen.form is None
    assert [why.form for why in chosen.reasons] == ["a"]


def test_a_reason_names_the_reader_it_is_about() -> None:
    """A SequenceAt past the parts keeps the sequence: the reason names that reader after the
    SplitToSequence, and the refusal says it."""
    model = sequence_model(["at5"], split=2)(6)
    plan, site = _plan(model, "tract")
    chosen = first_form(FORMS["tract"].sequence, plan, site, site.node)
    by_split = next(why for why in chosen.reasons if why.form == "by-split")
    reader = next(n for n in plan.view.main.nodes if n.op_type == "SequenceAt")
    assert by_split.nodes == (site.node, reader)
    assert "reads part 5 of 3" in by_split.text
    with pytest.raises(splitops.SplitError, match="reads part 5 of 3"):
        splitops.lower_model(model, target="tract")


def test_the_last_form_says_the_last_reason_before_it() -> None:
    """Where nothing in the model keeps the sequence, the refusal gives why the last form
    before it does not apply, as the runner found it."""
    model = computed_chunk_model(["at0", "len"])("N")
    plan, site = _plan(model, "tract")
    chosen = first_form(FORMS["tract"].sequence, plan, site, site.node)
    assert chosen.form is not None
    assert chosen.form.name == "refused"
    assert plan.sequences.why_kept(site) is None
    last = chosen.reasons[-1]
    assert last.form == "by-position"
    assert isinstance(last.nodes[1], Node)
    assert last.nodes[1].op_type == "SequenceLength"
    with pytest.raises(splitops.SplitError) as refused:
        chosen.rewrite(plan, site)
    assert last.text in str(refused.value)


def test_what_reads_a_sequence_is_found_once_for_all_the_forms() -> None:
    plan, site = _plan(computed_chunk_model(["at0", "len"])("N"), "portable")
    readers, why = plan.sequences.readers(site)
    assert why is None
    assert {r.node.op_type for r in readers} == {"SequenceAt", "SequenceLength"}
    assert plan.sequences.readers(site)[0] is readers
