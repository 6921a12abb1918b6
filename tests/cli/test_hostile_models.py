"""Hostile model files through every command, under a memory and a time limit.

Each file of :mod:`tests.malformed_models` runs through ``load_model`` and the commands
``check``, ``infer``, ``convert``, ``lower``, ``check --portability``, ``run`` and ``run
--engine onnxruntime`` in a child process that limits its own address space to 4 GiB
(``resource.setrlimit``, before it imports anything). What a command may do with a hostile
file is bounded by ``splitops.limits`` (nodes, parts, elements, bytes), which the tests below
assert by the messages of those limits, not by the clock: on a machine loaded many times over
they pass alike. Every command must end with exit 0, or with a documented code and exactly
one ``splitops: error:`` line (warnings and notes aside), and never with a traceback or an
internal error.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from tests.malformed_models import CASES, write_all
from tests.processes import GUARD_SECONDS

pytest.importorskip("resource", reason="memory limits need the resource module")

ROOT = Path(__file__).resolve().parents[2]
MEMORY = 4 * 2**30
#: The CPU seconds (not wall-clock: a loaded machine lengthens the wall clock, not the work)
#: that a probe which once ran without end may take now; each takes about a second.
CPU_SECONDS = 60
COMMANDS = {
    "check": ["check"],
    "infer": ["infer"],
    "convert": ["convert", "--opset", "11", "-o", "converted.onnx"],
    "lower": ["lower", "-o", "lowered.onnx"],
    "portability": ["check", "--portability"],
    "run": ["run"],
    "onnxruntime": ["run", "--engine", "onnxruntime"],
}

#: Runs every command on one model in this process, and prints what each one left.
DRIVER = """
import contextlib, io, json, resource, sys, time, traceback
resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[3]), int(sys.argv[3])))
from splitops.cli import main
from splitops import load_model, SplitopsError
model, commands = sys.argv[1], json.loads(sys.argv[2])
results = {}
try:
    load_model(model)
    results["load_model"] = "loaded"
except (SplitopsError, MemoryError) as error:
    results["load_model"] = type(error).__name__
except Exception:
    results["load_model"] = "TRACEBACK " + traceback.format_exc()
for name, args in commands.items():
    stderr, stdout = io.StringIO(), io.StringIO()
    began = time.process_time()
    try:
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(stdout):
            code = main([*args[:1], model, *args[1:]])
    except BaseException:
        code, stderr = -1, io.StringIO(traceback.format_exc())
    results[name] = {
        "code": code,
        "stderr": stderr.getvalue()[-20000:],
        "stdout": stdout.getvalue()[-20000:],
        "seconds": time.process_time() - began,
    }
print(json.dumps(results))
"""


def attacked_file(case: str) -> str:
    """The file name of a case, as the commands name it."""
    return Path(CASES[case]().name).name


def _attack(path: Path, commands: dict[str, list[str]] = COMMANDS) -> dict[str, Any]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    env.setdefault("OMP_NUM_THREADS", "1")
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, path.name, json.dumps(commands), str(MEMORY)],
        cwd=path.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=GUARD_SECONDS,
        check=False,
    )
    assert done.returncode == 0, (path.name, done.stderr[-2000:])
    results: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return results


@pytest.fixture(scope="module")
def attacked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    files = write_all(tmp_path_factory.mktemp("hostile"))
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(files, pool.map(_attack, files.values()), strict=True))


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_hostile_model_gets_one_line_and_a_documented_exit_code(
    case: str, attacked: dict[str, dict[str, Any]]
) -> None:
    results = attacked[case]
    assert not str(results["load_model"]).startswith("TRACEBACK"), results["load_model"]
    for command in COMMANDS:
        code, stderr = results[command]["code"], results[command]["stderr"]
        assert "Traceback" not in stderr, (command, stderr)
        assert code in (0, 1, 2, 3), (command, code, stderr)
        errors = [line for line in stderr.splitlines() if line.startswith("splitops: error: ")]
        allowed = ("splitops: error: ", "splitops: warning: ", "splitops: note: ", "engine: ")
        # check's count of nodes and problems, lower's summary, the nodes not probed, and
        # the runtimes that are not installed here (probed where they are)
        summary = (f"{attacked_file(case)}: ", "lowered ", "main/", "function:")
        others = [
            line
            for line in stderr.splitlines()
            if line.strip()
            and not line.startswith((*allowed, *summary))
            and ": not probed: it is not installed; " not in line
        ]
        assert others == [], (command, stderr)
        # check and lower report problems on stdout, one line each, and exit 1: no error
        # line then.
        problems_found = command in ("check", "portability", "lower") and code == 1
        problems_found = problems_found and not errors
        assert len(errors) == (0 if code == 0 or problems_found else 1), (command, stderr)
        if problems_found:
            assert results[command]["stdout"].strip(), stderr


@pytest.mark.parametrize(
    ("case", "says"),
    [
        ("raw_data not a multiple of 8", "need 16 bytes of raw_data, and it holds 7"),
        ("dims of 2**40 over 16 bytes", "asks for 1099511627776 parts"),
        ("weight of 2**40 elements in 16 bytes", "over the max_tensor_elements limit"),
        ("short int64_data", "need 3 int64_data values, and it holds 2"),
        ("data_type 999", "its data type 999 is no ONNX element type"),
        ("data_type UNDEFINED", "its data type undefined is no ONNX element type"),
        ("string split with invalid UTF-8", "its string 0 is not UTF-8"),
        ("external data shorter than its dims", "too short"),
        ("external location is the model itself", "the model file itself"),
        ("external offset of a superscript two", "it must be a whole number >= 0"),
        ("external location not UTF-8", "not UTF-8 text"),
        ("external location holding a NUL", "a path holding a NUL character"),
        ("external location of 5,000 characters", "...(5000 chars)', which cannot be read"),
        ("node name not UTF-8", "is not UTF-8 text"),
        ("node holding a protobuf group", "holds a protobuf group"),
        ("recursive local function", "calls itself"),
        ("mutually recursive local functions", "calls itself"),
        ("duplicated local function", "is defined twice"),
        ("If holding two then_branch graphs", "gives the attribute 'then_branch' twice"),
        ("num_outputs a billion", "the max_parts limit"),
        ("SplitToSequence split of 2**22 entries", "the max_parts limit"),
        ("truncated", "truncated"),
        ("empty", "the file is empty"),
    ],
)
def test_an_unreadable_model_is_refused_as_bad_input_by_every_command(
    case: str, says: str, attacked: dict[str, dict[str, Any]]
) -> None:
    assert attacked[case]["load_model"] == "ModelLoadError"
    for command in COMMANDS:
        assert attacked[case][command]["code"] == 2, (command, attacked[case][command])
        assert says in attacked[case][command]["stderr"], (command, attacked[case][command])


@pytest.mark.parametrize(
    ("case", "command", "code", "says"),
    [
        ("SplitToSequence of a [2**31] input", "check", 1, "[limit]: SplitToSequence-11 would"),
        ("SplitToSequence of a [2**31] input", "run", 2, "max_input_elements"),
        ("SplitToSequence constant split of 0", "convert", 1, "must be >= 1; 0 was given"),
        ("num_outputs given twice", "check", 1, "gives the attribute 'num_outputs' twice"),
        ("Split-18 listing more outputs than num_outputs", "check", 1, "has 3 outputs but"),
        ("Split-18 listing more outputs than num_outputs", "convert", 1, "has 3 outputs but"),
        (
            "If nested 3 deep around a Split listing more outputs than num_outputs",
            "check",
            1,
            "has 2 outputs but num_outputs is 1",
        ),
        (
            "If branch without a type around a Split listing more outputs",
            "check",
            1,
            "main/if0.else_branch/deep (Split-18) [output-count]",
        ),
        ("Add of a [2**31] vector before a Split", "check", 0, ""),
        ("Add of a [2**31] vector before a Split", "infer", 0, ""),
        (
            "Add of a [2**31] vector before a Split",
            "convert",
            3,
            "No Adapter From Version $14 for Add",
        ),
        ("negative declared dims", "run", 2, "no tensor has a negative length"),
        ("num_outputs 40000 with one output listed", "convert", 0, ""),
        ("SplitToSequence split of an empty 8-d shape", "check", 1, "scalar or 1-d; one of shape"),
        ("SplitToSequence split of an empty 8-d shape", "infer", 1, "scalar or 1-d; one of shape"),
        ("SplitToSequence split of an empty 8-d shape", "run", 1, "scalar or 1-d; one of shape"),
    ],
)
def test_what_each_command_says_of_a_broken_node(
    case: str, command: str, code: int, says: str, attacked: dict[str, dict[str, Any]]
) -> None:
    result = attacked[case][command]
    assert result["code"] == code, result
    assert says in result["stdout" if command == "check" else "stderr"], result


_TWICE10 = "local functions calling one another twice per level, 2**10 calls"
_TWICE26 = "local functions calling one another twice per level, 2**26 calls"
_TREE = "If nested 12 deep, the If below in both branches"
_SEQUENCES = "16 SplitToSequence nodes of 2**20 parts"
_CONCAT = "one SplitToSequence of 2**20 parts read by ConcatFromSequence"
_UNREAD = "SplitToSequence of run-time sizes that nothing reads"
_FIFO_LINK = "external data a link to a FIFO outside the folder"
_HARD_LINK = "external data a hard link to a file outside the folder"
_LOWER = ["lower", "-o", "l.onnx"]
_PORTABILITY = ["check", "--portability"]
_ONNXRUNTIME = ["run", "--engine", "onnxruntime"]
_TRUSTED = ["run", "--trust-external-data"]
_CONVERT = ["convert", "--opset", "11", "-o", "c.onnx"]

#: The probes of hostile files that once ran without end, crashed, blocked or read what they
#: should not: the case, the command, the exit code it must now give, and what it must say
#: (on stdout or stderr). Each must also end within :data:`CPU_SECONDS` of CPU time.
PROBES: list[tuple[str, list[str], int, str]] = [
    (_TWICE10, ["check"], 0, "no problems"),
    (_TWICE10, _LOWER, 0, "lowered 1"),
    (_TWICE26, ["check"], 2, "the max_nodes limit"),
    (_TWICE26, _LOWER, 2, "the max_nodes limit"),
    (_TREE, ["infer"], 0, "tensor(float) [2]"),
    (_TREE, _LOWER, 0, "4096 rewritten"),
    (_TREE, _PORTABILITY, 0, "4096 node(s) probed"),
    (_TREE, _ONNXRUNTIME, 0, "output o11"),
    (_SEQUENCES, _LOWER, 2, "max_model_parts limit"),
    (_SEQUENCES, _PORTABILITY, 0, "not probed: its probes would make 1048576 parts"),
    (_SEQUENCES, ["run"], 2, "over the max_model_parts limit of 262144 for one run"),
    (_CONCAT, _LOWER, 2, "max_model_parts limit"),
    ("Split listing 2**16 named outputs", ["infer"], 0, "o65535: tensor(float) [1]"),
    ("Split of a declared [2**28] input", _PORTABILITY, 0, "max_input_elements limit"),
    ("Split of a declared [2**63-1] input", _PORTABILITY, 0, "max_input_elements limit"),
    ("Split of a declared [2**63-1] input", _LOWER, 0, "a Slice per part"),
    ("opset 10**12 and an unknown operator", _CONVERT, 3, "opset 11"),
    (_UNREAD, ["run"], 1, "split sizes must be >= 0"),
    (_UNREAD, _ONNXRUNTIME, 1, "split sizes must be >= 0"),
    ("external data in a FIFO", ["check"], 2, "not a regular file"),
    ("external data in a FIFO", _TRUSTED, 2, "not a regular file"),
    (_FIFO_LINK, ["check"], 2, "outside the model's folder"),
    (_FIFO_LINK, ["check", "--trust-external-data"], 2, "not a regular file"),
    (_HARD_LINK, ["run"], 2, "which has 2 hard links"),
    (_HARD_LINK, _TRUSTED, 0, "output a: float32 (3,)"),
    ("external data a link to /dev/zero", _TRUSTED, 2, "not a regular file"),
    ("external FLOAT4E2M1 of 6 elements in 3 bytes", ["run"], 0, "w: float4_e2m1fn (6,)"),
    (
        "external INT4 of 2**24 elements without a length",
        ["run", "--max-external-bytes", "1024"],
        2,
        "claim 8388608 bytes",
    ),
    ("external STRING tensor", ["run"], 2, "no fixed size"),
    ("external FLOAT of 3 GiB", ["run"], 2, "out of memory"),
    # A rewrite reads no weight: within the 4 GiB of address space, the 3 GiB stay on disk.
    ("external FLOAT of 3 GiB", _CONVERT, 0, "converted 1 Split/SplitToSequence node(s)"),
    ("external FLOAT of 3 GiB", _LOWER, 0, "lowered 1 Split/SplitToSequence node(s)"),
]


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    files = write_all(tmp_path_factory.mktemp("probes"))
    by_case: dict[str, dict[str, list[str]]] = {}
    for case, args, _, _ in PROBES:
        by_case.setdefault(case, {})[" ".join(args)] = args
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = {case: pool.submit(_attack, files[case], cmds) for case, cmds in by_case.items()}
        return {case: run.result() for case, run in runs.items()}


@pytest.mark.parametrize(
    ("case", "args", "code", "says"), PROBES, ids=[f"{c}: {' '.join(a)}" for c, a, _, _ in PROBES]
)
def test_a_probe_that_once_hung_or_crashed_ends_within_seconds_as_documented(
    case: str, args: list[str], code: int, says: str, probed: dict[str, dict[str, Any]]
) -> None:
    result = probed[case][" ".join(args)]
    assert result["code"] == code, result
    assert says in result["stdout"] + result["stderr"], result
    assert result["seconds"] < CPU_SECONDS, result
