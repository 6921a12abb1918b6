"""``python -m benchmarks.conformance``: the conformance pack run on every installed runtime,
and ``conformance.md`` written from what they did (into ``benchmarks/results/latest/``;
``--out docs`` replaces the committed ``docs/conformance.md``).

The pack is written to a temporary folder (as ``splitops conformance write`` writes it) and
each runtime of :data:`splitops.onnx.RUNTIMES` that is installed runs every case in a worker
process (as ``splitops conformance run`` runs them). A result is its
:class:`~splitops.conformance.Verdict`:

- **pass**: the spec's outputs (element type, shape, values), or a refusal of a case the spec
  rejects;
- **wrong**: other outputs than the spec's;
- **refused**: an error on a case the spec computes (a missing kernel, type, or feature);
- **accepts**: outputs for a case the spec rejects;
- **crash**: the runtime's process died (a signal, such as SIGABRT) or gave no answer: never a
  pass, never a refusal;
- **reading**: the case's text is read two ways, and the runtime follows one of them.

The document also holds the evidence on onnx/onnx#5766 (what ``num_outputs`` means when the
dim does not divide): the spec's text, onnx's shape inference, and each runtime's answer::

    python -m benchmarks.conformance                 # a minute or two (TVM compiles each case)
    python -m benchmarks.conformance --runtimes onnxruntime tract --out /tmp/c

>>> kind_of(CaseResult("x", Verdict.REFUSED, "refused: no kernel"))
'refused'
"""

from __future__ import annotations

import importlib.metadata
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx

import splitops
from splitops.conformance import (
    CASES,
    CaseResult,
    Verdict,
    case_named,
    run_pack,
    summary,
    write_pack,
)
from splitops.onnx import Runtime, RuntimeCrashError, RuntimeRunError, RuntimeWorkers

from .portability import runtimes_and_out

KINDS = ("pass", "wrong", "refused", "accepts", "crash")

#: The cases that answer onnx/onnx#5766, and the numbers they cut.
ISSUE_5766 = (
    ("test_split_num_outputs_uneven_10_into_4_opset18", "10 into 4"),
    ("test_split_num_outputs_empty_last_9_into_4_opset18", "9 into 4"),
    ("test_split_num_outputs_5_into_4_rejected_opset18", "5 into 4"),
    ("test_split_num_outputs_fewer_outputs_listed_uneven_opset18", "7 into 3, 2 listed"),
)


def kind_of(result: CaseResult) -> str:
    """The verdict's name (see the module's documentation)."""
    return result.verdict.value


def run_all(runtimes: Sequence[Runtime], folder: Path) -> dict[str, list[CaseResult]]:
    """Each runtime's results on the pack in ``folder``, with a progress line per runtime."""
    results = {}
    for runtime in runtimes:
        print(f"{runtime.name} {runtime.version()}: running {len(CASES)} cases", file=sys.stderr)
        began = time.perf_counter()
        results[runtime.name] = run_pack(folder, runtime.name)
        took = time.perf_counter() - began
        print(
            f"{runtime.name}: {summary(results[runtime.name])} ({took:.1f} s)",
            file=sys.stderr,
            flush=True,
        )
    return results


def answers_5766(runtimes: Sequence[Runtime]) -> dict[str, dict[str, str]]:
    """For each case of :data:`ISSUE_5766`, by source: the part lengths along the axis, or
    the first words of the refusal."""
    table: dict[str, dict[str, str]] = defaultdict(dict)
    with RuntimeWorkers() as workers:
        for name, _ in ISSUE_5766:
            case = case_named(name)
            table[name]["spec (splitops)"] = _lengths(case.outputs) if case.valid else "rejected"
            balanced = np.array_split(case.inputs[0], _count(case))[: len(case.node.output)]
            table[name]["numpy array_split"] = ", ".join(str(len(p)) for p in balanced)
            table[name]["onnx shape inference"] = _inferred(case.model())
            feeds = dict(zip(case.node.input, case.inputs, strict=True))
            for runtime in runtimes:
                try:
                    outputs = workers.run(runtime, case.model().SerializeToString(), feeds)
                except RuntimeRunError as error:
                    said = "crashed" if isinstance(error, RuntimeCrashError) else "refused"
                    table[name][runtime.name] = f"{said} ({_short(str(error))})"
                else:
                    table[name][runtime.name] = _lengths(outputs)
    return table


def _count(case: Any) -> int:
    return next(a.i for a in case.node.attribute if a.name == "num_outputs")


def _lengths(outputs: Any) -> str:
    return ", ".join(str(np.shape(output)[0]) for output in outputs)


def _inferred(model: onnx.ModelProto) -> str:
    for output in model.graph.output:
        output.type.tensor_type.ClearField("shape")
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    except Exception as error:
        return f"error ({_short(str(error))})"
    dims = []
    for output in inferred.graph.output:
        dim = output.type.tensor_type.shape.dim[0]
        dims.append(str(dim.dim_value) if dim.HasField("dim_value") else "?")
    return ", ".join(dims)


def _short(text: str, words: int = 12) -> str:
    """The first ``words`` words of what a runtime said, past onnxruntime's preamble."""
    text = text.split("Status Message: ", 1)[-1]
    said = " ".join(text.split()[:words])
    return said + (" ..." if len(text.split()) > words else "")


def report(
    results: dict[str, list[CaseResult]],
    runtimes: Sequence[Runtime],
    answers: dict[str, dict[str, str]],
    seconds: float,
) -> str:
    versions = ", ".join(f"{r.name} {r.version()}" for r in runtimes)
    valid = sum(case.valid for case in CASES)
    rejected = sum(case.rejected for case in CASES)
    lines = [
        "# Conformance: every runtime against the Split and SplitToSequence pack",
        "",
        f"Written by `python -m benchmarks.conformance` in {seconds:.0f} s, with {versions}; "
        f"splitops {splitops.__version__}, onnx {importlib.metadata.version('onnx')}. The pack "
        f"(`splitops conformance write DIR`) holds {len(CASES)} cases: {valid} valid, "
        f"{rejected} that the spec rejects, which a runtime passes by refusing, and "
        f"{len(CASES) - valid - rejected} whose text the spec says two ways. Each case is one "
        "node; its inputs are graph inputs, as in onnx's node tests. Run one runtime with "
        "`splitops conformance run DIR --runtime NAME`; how `onnx_test_runner`, tract's suite "
        "and onnx's own loader read the folder is in [cli.md](cli.md#splitops-conformance).",
        "",
        "A result is **pass**; **wrong** (other outputs than the spec's); **refused** (an error "
        "on a case the spec computes: a missing kernel, type or feature); **accepts** (outputs "
        "for a case the spec rejects); **crash** (the runtime's process died, by a signal or "
        "an exit, or gave no answer: never a pass, never a refusal, whatever the case). Wrong, "
        "accepts and crash break a rule; refused is a gap. Where the spec's text is read two "
        "ways, the runtime **reads** it one way (or neither: wrong), neither pass nor failure "
        "([below](#readings-that-differ)).",
        "",
        "| runtime | version | pass | wrong | refused | accepts | crash | read two ways |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for runtime in runtimes:
        counts = dict.fromkeys((*KINDS, "reading"), 0)
        for result in results[runtime.name]:
            counts[kind_of(result)] += 1
        lines.append(
            f"| {runtime.name} | {runtime.version()} | "
            + " | ".join(str(counts[kind]) for kind in (*KINDS, "reading"))
            + " |"
        )
    lines += _issue_5766(runtimes, answers)
    lines += _readings(results, runtimes)
    lines += ["", "## Every case on every runtime", ""]
    names = [runtime.name for runtime in runtimes]
    lines += ["| case | op-opset | " + " | ".join(names) + " |"]
    lines += ["|---|---|" + "---|" * len(names)]
    by_name = {name: {r.name: r for r in rs} for name, rs in results.items()}
    for case in CASES:
        shown = [_cell(by_name[name][case.name]) for name in names]
        lines.append(f"| `{case.name}` | {case.op}-{case.opset} | " + " | ".join(shown) + " |")
    lines += ["", "## The rules each runtime breaks, and its gaps", ""]
    for runtime in runtimes:
        lines += _runtime_section(runtime, results[runtime.name])
    return "\n".join(lines) + "\n"


def _cell(result: CaseResult) -> str:
    if result.verdict is Verdict.PASS:
        return "pass"
    if result.verdict is Verdict.READING:
        return f"reads: {result.reading}"
    return f"**{result.verdict.value}**"


def _readings(results: dict[str, list[CaseResult]], runtimes: Sequence[Runtime]) -> list[str]:
    """The cases read two ways: each reading's reasons, and what each runtime does."""
    lines = [
        "",
        "## Readings that differ",
        "",
        "Where the spec's own words say two things, the pack holds the case with both readings "
        "(each with the words it rests on and the outputs it gives, in `cases.json` and "
        "`CASE/reading_<key>/`), and says which one a runtime follows: it neither passes nor "
        "fails. A refusal follows a reading that rejects the node only where the runtime runs "
        "the case's control, the same node without the words read two ways (a runtime that "
        "refuses both, for want of SplitToSequence or of a split given at run time, says "
        "nothing of how it reads them).",
    ]
    by_name = {name: {r.name: r for r in rs} for name, rs in results.items()}
    for case in CASES:
        if not case.readings:
            continue
        why = case.why[0].upper() + case.why[1:]
        lines += ["", f"### `{case.name}` ({case.op}-{case.opset})", "", f"{why}.", ""]
        for reading in case.readings:
            taken = (
                " **splitops reads it so** (the project's decision)." if reading.splitops else ""
            )
            gives = "rejects the node" if reading.outputs is None else "computes"
            lines.append(f"- **{reading.key}** ({gives}): {reading.why}.{taken}")
        lines += ["", "| runtime | what it does |", "|---|---|"]
        for runtime in runtimes:
            result = by_name[runtime.name][case.name]
            said = result.detail if result.verdict is not Verdict.PASS else "passed"
            lines.append(f"| {runtime.name} | {_short(said, 24)} |")
    lines += [
        "",
        "A node listing fewer outputs than `num_outputs` (`test_split_num_outputs_fewer_"
        "outputs_listed_opset18`) is not one of these: the spec's words say one thing (a "
        "node's trailing outputs may be left out, as any node's, and the parts are those "
        "`num_outputs` cuts), and onnx agrees with itself there: its shape inference and its "
        "reference both give the listed parts of the `num_outputs` plan (3, 3 for 7 into 3, 2 "
        "listed, in the table above). onnxruntime 1.32 refuses the node, for which the spec "
        "gives outputs: the pack keeps judging that refusal a gap, as it judges any other.",
    ]
    return lines


#: What a reader of a runtime's results should know about how they were obtained.
NOTES = {
    "openvino": "Its bfloat16 results are its Python API's: it reads the bits of an ml_dtypes "
    "bfloat16 array as float16 (1.0, 0x3F80, comes back as float16 1.875), so the two "
    "bfloat16 Split cases are wrong through `openvino.Core().compile_model` from Python.",
    "tvm": "The `split` input of Split-13/18 and SplitToSequence is a graph input in every "
    "case, as in onnx's node tests; TVM's importer takes only constant sizes there.",
    "tract": "tract's Python binding refuses string arrays before tract sees them.",
}


def _runtime_section(runtime: Runtime, results: list[CaseResult]) -> list[str]:
    lines = [f"### {runtime.name} {runtime.version()}", ""]
    if runtime.name in NOTES:
        lines += [NOTES[runtime.name], ""]
    broken = [r for r in results if kind_of(r) in ("wrong", "accepts", "crash")]
    if broken:
        lines += ["Rules broken (the case's `why`, then what the runtime did):", ""]
        for result in broken:
            why = case_named(result.name).why
            lines.append(f"- `{result.name}`: {why}. **{result.detail}**")
    else:
        lines.append("No rule broken: every case it runs, it runs as the spec says.")
    refused: dict[str, list[str]] = defaultdict(list)
    for result in results:
        if kind_of(result) == "refused":
            refused[_short(result.detail.removeprefix("refused: "), 14)].append(result.name)
    if refused:
        lines += ["", "Refused (valid cases it does not run), by its error:", ""]
        for said, names in sorted(refused.items(), key=lambda item: -len(item[1])):
            lines.append(f"- {len(names)}: {said} (`{'`, `'.join(names)}`)")
    return [*lines, ""]


def _issue_5766(runtimes: Sequence[Runtime], answers: dict[str, dict[str, str]]) -> list[str]:
    sources = ["spec (splitops)", "numpy array_split", "onnx shape inference"]
    sources += [runtime.name for runtime in runtimes]
    lines = [
        "",
        "## onnx/onnx#5766: what `num_outputs` means when the dim does not divide",
        "",
        "The question has been open since 2023 (TVM #18751 and OpenVINO #21175 ask it too). "
        "Split-18's text says it twice: \"If the tensor is not evenly splittable into "
        '`num_outputs`, the last chunk will be smaller", and for the attribute, "If the '
        'tensor is not evenly splittable the last chunk will be smaller." The parts are '
        '"equal sized" but the last: every other chunk has one length `c`, and the last, '
        "`d - c(n-1)`, is smaller than `c` and not negative, so `c` lies between `ceil(d/n)` "
        "and `floor(d/(n-1))`. The smallest, `ceil(d/n)`, keeps the parts as equal as they "
        "can be, and is the only one for many lengths (10 into 4 allows 3 alone). A balanced "
        "split (numpy's `array_split`) makes the first chunks larger, so that more than the "
        "last differs; `floor(d/n) + 1` leaves an empty last chunk where `d` divides (6 into "
        "3: 3, 3, 0). onnx's own worked example (7 into 4 as 2, 2, 2, 1; 8 into 3 as 3, 3, 2) "
        "agrees, though both balanced and ceil give those.",
        "",
        "**What splitops implements**: parts of `ceil(d/n)`, the rest last, which may be 0 "
        "(9 into 4 is 3, 3, 3, 0: smaller, as the text says); where the rest is negative "
        "(5 into 4: 2, 2, 2, -1) there is no answer and it raises a `SplitError` suggesting "
        "explicit sizes. A node that lists fewer outputs than `num_outputs` gets the first "
        "parts of that plan.",
        "",
        "The evidence, measured by this benchmark (part lengths along the axis):",
        "",
        "| source | " + " | ".join(label for _, label in ISSUE_5766) + " |",
        "|---|" + "---|" * len(ISSUE_5766),
    ]
    for source in sources:
        cells = [answers[name].get(source, "") for name, _ in ISSUE_5766]
        lines.append(f"| {source} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "onnx's shape inference (`strict_mode=True`) and its reference disagree with each "
        "other on 5 into 4, and each runtime gives its own answer; the pack's cases pin the "
        "one reading under which the spec's sentence holds for every length.",
    ]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    runtimes, out = runtimes_and_out(argv, "conformance", "conformance.md")
    began = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        pack = Path(folder) / "pack"
        write_pack(pack)
        print(f"wrote the pack: {len(CASES)} cases", file=sys.stderr)
        results = run_all(runtimes, pack)
    print("onnx/onnx#5766: the uneven num_outputs cases on each runtime", file=sys.stderr)
    answers = answers_5766(runtimes)
    out.write_text(report(results, runtimes, answers, time.perf_counter() - began))
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
