"""The runtimes a model can be run on to see what each computes: onnxruntime, onnx.reference,
OpenVINO, tract, TVM, tinygrad and onnx2torch (whose torch module runs on torch), each where
it is installed.

A runtime may abort the process on a model it cannot run (tract panics on a Gather index out
of range; onnxruntime aborts on a Split listing more outputs than num_outputs), so each runs
in a worker process of its own (:class:`RuntimeWorkers`): a model and its feeds go in, the
outputs or the error come back, and a worker that dies is replaced and its death reported as
that run's :class:`RuntimeCrashError`, a crash, never a refusal. Workers live as long as the
:class:`RuntimeWorkers` that started them (a ``with`` block), so a hundred runs cost one
import of each runtime; :meth:`RuntimeWorkers.start` starts several at once, so that their
imports (seconds each) overlap. The models they load lie in one temporary folder, removed
with the workers however the block ends (an exception, an interrupt).

>>> [runtime.name for runtime in RUNTIMES]
['onnxruntime', 'onnx.reference', 'openvino', 'tract', 'tvm', 'tinygrad', 'onnx2torch']
>>> RUNTIMES[2].install
'pip install openvino'
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import importlib.util
import os
import pickle
import re
import secrets
import shutil
import struct
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ._ort import INSTALL as ORT_INSTALL

__all__ = [
    "RUNTIMES",
    "Runtime",
    "RuntimeCrashError",
    "RuntimeRunError",
    "RuntimeWorkers",
    "installed_runtimes",
    "runtime_named",
]

#: How long one run may take before its worker is stopped (compiling a model is most of it).
RUN_SECONDS = 60.0


@dataclass(frozen=True)
class Runtime:
    """A runtime that runs ONNX models: its name, the module that must be importable, the
    command that installs it, and the lowering target whose forms it runs as the spec says
    (``lower_model(model, target=...)``)."""

    name: str
    module: str
    install: str
    target: str
    #: The distribution that installs it, whose version is the runtime's.
    distribution: str
    #: Other modules it runs with that its distribution does not bring along (onnx2torch's
    #: module runs on torch, which may be uninstalled without it).
    needs: tuple[str, ...] = ()

    def is_installed(self) -> bool:
        modules = (self.module, *self.needs)
        return all(importlib.util.find_spec(module) is not None for module in modules)

    def version(self) -> str:
        """Its version, as its installed distribution says (nothing is imported: TVM takes
        seconds to import)."""
        return importlib.metadata.version(self.distribution)


#: onnx.reference runs every form, the checks of onnxruntime's included.
RUNTIMES: tuple[Runtime, ...] = (
    Runtime("onnxruntime", "onnxruntime", ORT_INSTALL, "onnxruntime", "onnxruntime"),
    Runtime("onnx.reference", "onnx.reference", "pip install onnx", "onnxruntime", "onnx"),
    Runtime("openvino", "openvino", "pip install openvino", "openvino", "openvino"),
    Runtime("tract", "tract", "pip install tract", "tract", "tract"),
    Runtime("tvm", "tvm", "pip install apache-tvm", "tvm", "apache-tvm"),
    Runtime("tinygrad", "tinygrad", "pip install tinygrad", "tinygrad", "tinygrad"),
    Runtime(
        "onnx2torch",
        "onnx2torch",
        # Its torchvision from PyPI fails to import beside a CPU torch (and breaks other
        # imports); the worker stands in for it.
        "pip install --no-deps onnx2torch",
        "onnx2torch",
        "onnx2torch",
        needs=("torch",),
    ),
)


def runtime_named(name: str) -> Runtime:
    """The runtime called ``name`` (a ``KeyError`` for another name)."""
    for runtime in RUNTIMES:
        if runtime.name == name:
            return runtime
    raise KeyError(name)


def installed_runtimes() -> list[Runtime]:
    """The runtimes installed here, in the order of :data:`RUNTIMES`."""
    return [runtime for runtime in RUNTIMES if runtime.is_installed()]


class RuntimeRunError(Exception):
    """What a runtime said when it refused or failed a run (its own error, in one line), or
    that its worker died or timed out (:class:`RuntimeCrashError`)."""


class RuntimeCrashError(RuntimeRunError):
    """The runtime's worker died during a run (a signal, such as SIGABRT, or an exit) or gave
    no answer in time: a crash, a failure of its own kind, not the runtime's refusal."""


# --- running a model, in the worker -------------------------------------------------------

#: A model loaded on a runtime: what it gives for one set of feeds.
_Loaded = Callable[[dict[str, Any]], list[Any]]


def _load_onnxruntime(path: str) -> _Loaded:
    import onnx

    from ._ort import make_session, needs_raw_values, run_session

    session = make_session(onnx.load(path), threads=1)
    raw = needs_raw_values(session)
    return lambda feeds: run_session(session, feeds, raw=raw)


def _load_reference(path: str) -> _Loaded:
    from onnx.reference import ReferenceEvaluator

    evaluator = ReferenceEvaluator(path)
    return lambda feeds: list(evaluator.run(None, feeds))


def _load_openvino(path: str) -> _Loaded:
    import numpy as np
    import openvino

    # On a CPU with bfloat16 units OpenVINO computes float32 models in bfloat16 unless told:
    # the spec computes in the model's own element type.
    compiled = openvino.Core().compile_model(path, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})

    def run(feeds: dict[str, Any]) -> list[Any]:
        results = compiled(feeds)
        return [np.array(results[output]) for output in compiled.outputs]

    return run


def _load_tract(path: str) -> _Loaded:
    import onnx
    import tract

    from ..model import ModelView

    names = ModelView.read(onnx.load(path, load_external_data=False)).main.input_names()
    runnable = tract.onnx().load(path).into_model().into_runnable()
    return lambda feeds: [t.to_numpy() for t in runnable.run([feeds[name] for name in names])]


def _load_tvm(path: str) -> _Loaded:
    import onnx
    import tvm
    from tvm import relax
    from tvm.relax.frontend.onnx import from_onnx

    from ..model import ModelView, SequenceType

    model = onnx.load(path)
    module = from_onnx(model, keep_params_in_input=False)
    module = relax.transform.DecomposeOpsForInference()(module)
    module = relax.transform.LegalizeOps()(module)
    machine = relax.VirtualMachine(tvm.compile(module, target="llvm"), tvm.cpu())
    main = ModelView.read(model).main
    names = main.input_names()
    # A lone sequence output comes back as a tuple of tensors: a list, as other runtimes give.
    outputs = main.output_names()
    sequence = len(outputs) == 1 and isinstance(main.declared(outputs[0]), SequenceType)

    def run(feeds: dict[str, Any]) -> list[Any]:
        found: list[Any] = []
        _flatten(machine["main"](*[tvm.runtime.tensor(feeds[name]) for name in names]), found)
        return [found] if sequence else found

    return run


def _load_tinygrad(path: str) -> _Loaded:
    from tinygrad.device import Device
    from tinygrad.helpers import DEV

    try:
        Device.DEFAULT  # noqa: B018 (its first read opens the first device that works)
    except RuntimeError:
        # tinygrad's CPU device compiles with clang, which a machine may lack; its Python
        # device runs the same graph: the ONNX frontend, which decides what a node computes,
        # is one for every device.
        DEV.value = "PYTHON"
    from tinygrad.nn.onnx import OnnxRunner  # which makes tensors on the default device

    OnnxRunner(path)  # a model tinygrad cannot read is refused here, before any run
    model = Path(path).read_bytes()

    def run(feeds: dict[str, Any]) -> list[Any]:
        # A runner remembers the lengths and the shape-derived constants of its first run
        # (it is made for one shape): a new runner for each set of feeds.
        Path(path).write_bytes(model)
        return [_as_numpy(value) for value in OnnxRunner(path)(feeds).values()]

    return run


def _load_onnx2torch(path: str) -> _Loaded:
    import onnx

    _importable_torchvision()
    import torch
    from onnx2torch import convert
    from onnx2torch.onnx_graph import OnnxGraph

    from ..model import ModelView

    model = onnx.load(path)
    module = convert(model).eval()
    main = ModelView.read(model).main
    names = main.input_names()
    graph = OnnxGraph(model.graph)
    # The module returns one value per node that writes a graph output (their tuple where
    # there are several), each node's outputs as a tuple where it has several.
    wanted = [graph.value_as_node_output(name) for name in main.output_names()]
    nodes = list(dict.fromkeys(node for node, _ in wanted))

    def run(feeds: dict[str, Any]) -> list[Any]:
        with torch.inference_mode():
            result = module(*[torch.from_numpy(feeds[name]) for name in names])
        per_node = result if len(nodes) > 1 else (result,)
        found: list[Any] = []
        for node, index in wanted:
            value = per_node[nodes.index(node)]
            if len(node.output_values) > 1:
                value = value[index]
            found.append(_as_numpy(value))
        return found

    return run


def _as_numpy(value: Any) -> Any:
    """A tinygrad or torch tensor as a numpy array, a sequence of them as a list."""
    if isinstance(value, list | tuple):
        return [item.numpy() for item in value]
    return value.numpy()


def _importable_torchvision() -> None:
    """Make ``import torchvision`` work for onnx2torch, which imports it for its
    NonMaxSuppression and RoiAlign converters only. Where torchvision is not installed, or
    fails to import (PyPI's build is made for PyPI's CUDA torch; beside a CPU torch it says
    "operator torchvision::nms does not exist"), a stand-in module takes its place, whose
    use fails."""
    import types

    try:
        import torchvision  # noqa: F401
    except (ImportError, RuntimeError, OSError) as error:
        for name in [name for name in sys.modules if name.partition(".")[0] == "torchvision"]:
            del sys.modules[name]
        why = f"torchvision cannot be imported here: {_one_line(error)}"

        def unavailable(*args: object, **kwargs: object) -> Any:
            raise RuntimeError(why)

        stand_in = types.ModuleType("torchvision")
        ops = types.ModuleType("torchvision.ops")
        ops.nms = ops.roi_align = ops.box_convert = unavailable  # type: ignore[attr-defined]
        stand_in.ops = ops  # type: ignore[attr-defined]
        sys.modules["torchvision"], sys.modules["torchvision.ops"] = stand_in, ops


def _flatten(value: Any, into: list[Any]) -> None:
    if hasattr(value, "numpy"):
        into.append(value.numpy())
    else:
        for item in value:
            _flatten(item, into)


_LOADERS: dict[str, Callable[[str], _Loaded]] = {
    "onnxruntime": _load_onnxruntime,
    "onnx.reference": _load_reference,
    "openvino": _load_openvino,
    "tract": _load_tract,
    "tvm": _load_tvm,
    "tinygrad": _load_tinygrad,
    "onnx2torch": _load_onnx2torch,
}


def _serve(name: str, folder: str) -> None:
    """The worker's loop: read (model bytes, list of feeds), write one reply per feeds,
    ("ok", outputs) or ("error", message), until its input closes. The model is written in
    ``folder`` (runtimes load a file), which the caller made and removes."""
    load = _LOADERS[name]
    # The runtime is imported before the first request, while the caller starts the others;
    # where it fails, the first load says why, as that run's error.
    with contextlib.suppress(Exception):
        importlib.import_module(runtime_named(name).module)
    # The replies go on a descriptor of their own: what a runtime prints on its standard
    # output (TVM does) goes to standard error instead of into a reply.
    stdout = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    stdin = sys.stdin.buffer
    path = os.path.join(folder, "model.onnx")
    while True:
        request = _read(stdin)
        if request is None:
            return
        model, runs = request
        Path(path).write_bytes(model)
        try:
            loaded: _Loaded | None = load(path)
            refusal = ""
        except Exception as error:  # each runtime raises its own classes
            loaded, refusal = None, _one_line(error)
        for feeds in runs:
            if loaded is None:
                _write(stdout, ("error", refusal))
                continue
            try:
                reply: tuple[str, Any] = ("ok", loaded(feeds))
            except Exception as error:
                reply = ("error", _one_line(error))
            _write(stdout, reply)


# --- the workers, seen from the caller ----------------------------------------------------


@dataclass
class RuntimeWorkers:
    """One worker process per runtime, started at its first run (or together, by
    :meth:`start`) and stopped at the end of the ``with`` block, with the temporary folder
    their models are written in."""

    seconds: float = RUN_SECONDS
    _workers: dict[str, _Worker] = field(default_factory=dict)
    #: How many worker processes were started, runtime by runtime (a worker that died and
    #: was replaced counts again).
    started: dict[str, int] = field(default_factory=dict)
    #: The folder of the workers' models: its name is kept before it is made, so that an
    #: interrupt at any moment leaves nothing that :meth:`close` does not remove.
    _folder: str | None = None
    #: Every worker process, recorded before it is started (the same reason).
    _processes: list[_Process] = field(default_factory=list)

    def start(self, runtimes: Sequence[Runtime]) -> None:
        """Start a worker for each of ``runtimes`` that has none, all at once: each imports
        its runtime while the others do."""
        for runtime in runtimes:
            self._worker(runtime)

    def _worker(self, runtime: Runtime) -> _Worker:
        worker = self._workers.get(runtime.name)
        if worker is None or not worker.alive():
            if worker is not None:
                del self._workers[runtime.name]
                self._retire(worker)
            folder = self._worker_folder(runtime.name)
            worker = _Worker.start(runtime.name, folder, self._processes)
            self._workers[runtime.name] = worker
            self.started[runtime.name] = self.started.get(runtime.name, 0) + 1
        return worker

    def _worker_folder(self, name: str) -> str:
        while self._folder is None:
            folder = os.path.join(
                tempfile.gettempdir(), f"splitops-runtime-{os.getpid()}-{secrets.token_hex(6)}"
            )
            self._folder = folder
            try:
                os.mkdir(folder, 0o700)
            except FileExistsError:
                self._folder = None
        return tempfile.mkdtemp(dir=self._folder, prefix=f"{name}-")

    def __enter__(self) -> RuntimeWorkers:
        return self

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        # Leaving by an exception (an interrupt, say), the workers are stopped at once.
        self.close(promptly=kind is not None)

    def close(self, *, promptly: bool = False) -> None:
        """Stop every worker (``promptly``: kill it, without waiting for its run to end) and
        remove the folder of their models."""
        while self._workers:
            _, worker = self._workers.popitem()
            self._retire(worker, promptly=promptly)
        while self._processes:  # one whose start an interrupt broke off
            self._processes.pop().end()
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None

    def _retire(self, worker: _Worker, *, promptly: bool = False) -> None:
        worker.stop(promptly=promptly)
        self._processes.remove(worker.process)

    def run(self, runtime: Runtime, model: bytes, feeds: dict[str, Any]) -> list[Any]:
        """The outputs of ``model`` (serialized) on ``runtime`` for ``feeds``; a
        :class:`RuntimeRunError` with the runtime's message where it refuses or fails (a
        :class:`RuntimeCrashError` where its worker dies)."""
        (outcome,) = self.run_each(runtime, model, [feeds])
        if isinstance(outcome, RuntimeRunError):
            raise outcome
        return outcome

    def run_each(
        self, runtime: Runtime, model: bytes, runs: Sequence[dict[str, Any]]
    ) -> list[list[Any] | RuntimeRunError]:
        """``model`` loaded once on ``runtime`` and run on each feeds of ``runs``: the
        outputs, or a :class:`RuntimeRunError`, for each. A run that kills the worker is that
        run's :class:`RuntimeCrashError`; the runs after it go to a new worker."""
        outcomes: list[list[Any] | RuntimeRunError] = []
        while len(outcomes) < len(runs):
            worker = self._worker(runtime)
            try:
                for status, value in worker.ask((model, list(runs[len(outcomes) :])), self.seconds):
                    outcomes.append(RuntimeRunError(value) if status == "error" else list(value))
            except _WorkerDiedError as died:
                del self._workers[runtime.name]
                self._retire(worker)
                outcomes.append(RuntimeCrashError(str(died)))
        return outcomes


class _WorkerDiedError(Exception):
    pass


class _Process(subprocess.Popen[bytes]):
    """A worker's process, recorded in ``recorded_in`` before it exists: an interrupt that
    breaks off its start (before the caller holds it) leaves it where :meth:`end` finds it,
    and one that arrives once it is forked ends it at once."""

    def __init__(self, *args: Any, recorded_in: list[_Process], **kwargs: Any) -> None:
        recorded_in.append(self)
        before = _children()
        try:
            super().__init__(*args, **kwargs)
        except BaseException:
            if getattr(self, "pid", None) is None:
                # An interrupt inside CPython's fork_exec loses the pid of the child it has
                # forked already: the child that was not there before is that one.
                for pid in _children() - before:
                    with contextlib.suppress(OSError):
                        os.kill(pid, 9)
                        os.waitpid(pid, 0)
            self.end()
            raise

    def end(self) -> None:
        """Kill it and wait for it, if it was started and runs still."""
        if getattr(self, "pid", None) and self.returncode is None:
            with contextlib.suppress(OSError):
                self.kill()
            self.wait()


def _children() -> set[int]:
    """The processes this one started that run still (Linux; elsewhere none is known)."""
    found: set[int] = set()
    with contextlib.suppress(OSError):
        for task in os.scandir("/proc/self/task"):
            with open(os.path.join(task.path, "children")) as listing:
                found.update(int(pid) for pid in listing.read().split())
    return found


@dataclass
class _Worker:
    process: _Process
    log: IO[bytes]
    #: Where the worker writes the model it loads; removed with the worker, however it ended.
    folder: str

    @classmethod
    def start(cls, name: str, folder: str, processes: list[_Process]) -> _Worker:
        """A worker for the runtime ``name`` writing its models in ``folder``; its process
        is added to ``processes`` before it starts."""
        log = tempfile.TemporaryFile()  # noqa: SIM115 (closed by stop, with the worker)
        environment = {**os.environ, "OMP_NUM_THREADS": "1", "RUST_BACKTRACE": "0"}
        try:
            process = _Process(
                [sys.executable, "-m", "splitops.onnx.run._runtimes", name, folder],
                recorded_in=processes,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                env=environment,
                # Unbuffered: a reply waits in the pipe, where select sees it, not in a buffer.
                bufsize=0,
                # A session of its own: a terminal's Ctrl-C goes to the caller, which stops
                # its workers as it leaves, not to each worker in the middle of a run.
                start_new_session=os.name == "posix",
            )
        except BaseException:
            log.close()
            raise
        return cls(process, log, folder)

    def alive(self) -> bool:
        return self.process.poll() is None

    def ask(self, request: tuple[bytes, list[Any]], seconds: float) -> Iterator[tuple[str, Any]]:
        """The replies to ``request``, one per feeds, as they come."""
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        try:
            _write(self.process.stdin, request)
        except (BrokenPipeError, OSError):
            raise _WorkerDiedError(self._death()) from None
        for _ in request[1]:
            reply = _read_within(self.process.stdout, seconds)
            if reply is _TIMED_OUT:
                self.process.kill()
                self.process.wait()
                raise _WorkerDiedError(f"no answer within {seconds:g} s")
            if reply is None:  # the pipe closed: the worker died, perhaps not yet reaped
                raise _WorkerDiedError(self._death())
            status, value = reply
            yield str(status), value

    def _death(self) -> str:
        code = self.process.wait()
        self.log.seek(0)
        said = [line.strip() for line in self.log.read().decode(errors="replace").splitlines()]
        panic = next((line for line in said if "panicked" in line or "Error" in line), "")
        # Rust names the panicking thread by its id, which differs from run to run.
        panic = re.sub(r"^(thread '[^']*') \(\d+\)", r"\1", panic)
        how = f"signal {-code}" if code < 0 else f"exit code {code}"
        return f"the runtime crashed ({how})" + (f": {panic[:200]}" if panic else "")

    def stop(self, *, promptly: bool = False) -> None:
        """End the worker: its input closed, so that it ends once its run is done (or, after
        10 s, killed), or ``promptly`` killed at once; its folder removed."""
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        if promptly:
            self.process.kill()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.log.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def _write(stream: IO[bytes], value: Any) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def _read(stream: IO[bytes]) -> Any:
    head = stream.read(8)
    if len(head) < 8:
        return None
    (size,) = struct.unpack("<Q", head)
    # The stream is this module's own pipe to a process it started: nothing else writes it.
    return pickle.loads(_read_exactly(stream, size))


def _read_exactly(stream: IO[bytes], size: int) -> bytes:
    chunks: list[bytes] = []
    while size:
        chunk = stream.read(size)
        if not chunk:
            break
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


#: What :func:`_read_within` gives when no reply came in time.
_TIMED_OUT = object()


def _read_within(stream: IO[bytes], seconds: float) -> Any:
    """One reply; ``None`` when the stream closed (the worker died), :data:`_TIMED_OUT` when
    nothing came within ``seconds``."""
    import selectors

    with selectors.DefaultSelector() as selector:
        selector.register(stream, selectors.EVENT_READ)
        if not selector.select(timeout=seconds):
            return _TIMED_OUT
    return _read(stream)


def _one_line(error: BaseException) -> str:
    """The line of an error that says what went wrong: OpenVINO's begin with where in its
    sources the exception was thrown, which says nothing to a user."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    said = [line for line in lines if not re.match(r"Exception from \S+:\d+:?$", line)]
    text = (said or lines or [type(error).__name__])[0]
    return text if len(text) <= 200 else text[:197] + "..."


if __name__ == "__main__":
    _serve(sys.argv[1], sys.argv[2])
