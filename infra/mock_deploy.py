"""Run the Pulumi program in-process under recording mocks: no engine, no cloud, no credentials.

One harness, two users:
- the offline render (`python -m infra.render`) runs it as an *offline preview*: every input is
  known; ids are readable references (`<network-vpc.id>`), so a reviewer sees what is wired to
  what; everything else only the cloud can tell (addresses, lookups) stays unknown, as in
  `pulumi preview`; and secrets are redacted as they are recorded, so none can reach the output;
- the tests (`tests/pulumi_mocks.py`) run it as a *mock deployment*: `CloudAnswers` supplies
  plausible computed values, so outputs resolve and can be asserted on.

A run stack's `StackReference` is answered from `stack_references` (the other stack's outputs:
placeholders offline, a mock-deployed platform's outputs in the tests).

Per DESIGN.md: a fresh monitor, config and root stack per run (`build()` registers afresh every
time), run as the engine runs it (`as_the_engine_runs_it`: in Pulumi.yaml's `main` folder, config
handed over as the language host hands it, `infra.config.stack_file.engine_config`); numbers
come back as floats and are normalised to ints when whole.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import threading
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import pulumi
from pulumi.output import Unknown
from pulumi.runtime import config as runtime_config
from pulumi.runtime import settings
from pulumi.runtime.mocks import MockMonitor
from pulumi.runtime.proto import resource_pb2
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from infra.config import PROJECT
from infra.program_dir import PROJECT_DIR, program_dir

# How the Pulumi SDK marks a secret value on the wire (rpc._special_sig_key / secret sig).
_SIG_KEY = "4dabf18193072939515e22adb298388d"
_SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"

# What an offline preview records in place of values it does not have or must not show.
COMPUTED = "<computed>"
SECRET = "<secret>"


# The type a `pulumi.StackReference` reads: the engine answers it, with another stack's outputs.
STACK_REFERENCE = "pulumi:pulumi:StackReference"
# The root of every stack's tree; the engine leaves it out of its children's URNs.
ROOT_STACK = "pulumi:pulumi:Stack"


@dataclass(frozen=True)
class StackOutputs:
    """A referenced stack's outputs, as the engine hands them to a StackReference."""

    values: Mapping[str, Any]
    secret: frozenset[str] = frozenset()

    def as_state(self, name: str) -> dict[str, Any]:
        outputs = {
            key: {_SIG_KEY: _SECRET_SIG, "value": value} if key in self.secret else value
            for key, value in self.values.items()
        }
        return {"name": name, "outputs": outputs, "secretOutputNames": sorted(self.secret)}


def preview_id(name: str) -> str:
    """The id an offline preview gives resource `name`: a readable reference, not a value."""
    return f"<{name}.id>"


class CloudAnswers(Protocol):
    """What a cloud provider would compute, for a mock deployment (the tests' fake cloud)."""

    def outputs(
        self, type_token: str, resource_id: str, inputs: Mapping[str, Any]
    ) -> dict[str, Any]: ...

    def call(self, token: str, args: Mapping[str, Any]) -> dict[str, Any]: ...


def _normalise(value: Any, path: str, secret_paths: set[str], redact: bool) -> Any:
    """Unwrap (or redact) secrets, remembering where they were; whole floats back to ints."""
    if isinstance(value, dict):
        if value.get(_SIG_KEY) == _SECRET_SIG:
            secret_paths.add(path)
            return SECRET if redact else _normalise(value.get("value"), path, secret_paths, redact)
        return {
            k: _normalise(v, f"{path}.{k}" if path else k, secret_paths, redact)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_normalise(v, f"{path}[{i}]", secret_paths, redact) for i, v in enumerate(value)]
    if isinstance(value, Unknown):
        return COMPUTED
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


@dataclass(frozen=True)
class Registration:
    type: str
    name: str
    inputs: dict[str, Any]
    secret_paths: frozenset[str]
    provider: str
    custom: bool = True  # False for ComponentResources
    urn: str = ""
    parent: str = ""  # the parent's URN; the root Stack's for top-level resources
    ignore_changes: tuple[str, ...] = ()  # the resource option, as the engine receives it
    replace_on_changes: tuple[str, ...] = ()  # the resource option: these inputs replace it
    import_id: str = ""  # the `import_` resource option: adopt this existing resource
    # The URNs the engine orders it after: its `depends_on` and the resources its inputs
    # came from (what `pulumi up` creates first and `destroy` deletes last).
    dependencies: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Placement:
    """Where the engine would put a resource, and the options it received with it."""

    urn: str
    parent: str
    dependencies: tuple[str, ...]
    options: dict[str, Any]  # Registration's option fields: ignore_changes, import_id, ...


@dataclass
class Recorded:
    resources: list[Registration]
    calls: list[tuple[str, dict[str, Any]]]
    outputs: dict[str, Any] = field(default_factory=dict)
    secret_outputs: set[str] = field(default_factory=set)
    error: BaseException | None = None

    def of_type(self, type_token: str) -> list[Registration]:
        return [r for r in self.resources if r.type == type_token]

    def kube_objects(self) -> list[dict[str, Any]]:
        """The Kubernetes objects as registered (the provider is `pulumi:providers:kubernetes`)."""
        return [r.inputs for r in self.resources if r.type.startswith("kubernetes:")]

    def objects_of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [obj for obj in self.kube_objects() if obj.get("kind") == kind]


class RecordingMocks(pulumi.runtime.Mocks):
    """Echoes inputs as outputs (as providers do), plus what `answers` computes, if given.
    With `redact`, secret values are recorded as SECRET, never as themselves."""

    def __init__(
        self,
        answers: CloudAnswers | None,
        redact: bool,
        stack_references: Mapping[str, StackOutputs] | None = None,
    ) -> None:
        self.answers = answers
        self.redact = redact
        self.stack_references = stack_references or {}
        self.resources: list[Registration] = []
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()  # the mock monitor calls in from executor threads

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        secret_paths: set[str] = set()
        inputs = _normalise(args.inputs, "", secret_paths, self.redact)
        registration = Registration(
            args.typ,
            args.name,
            inputs,
            frozenset(secret_paths),
            args.provider or "",
            custom=bool(args.custom),
        )
        with self._lock:
            self.resources.append(registration)
        if args.typ == STACK_REFERENCE:
            # An unknown stack has no outputs here (the engine would fail to read it).
            referenced = self.stack_references.get(inputs["name"], StackOutputs({}))
            return inputs["name"], referenced.as_state(inputs["name"])
        if self.answers is None:
            # Offline preview: whatever is not echoed stays unknown (the SDK's preview rule).
            return preview_id(args.name), dict(args.inputs)
        resource_id = f"{args.name.replace('/', '-')}-id"
        # Echo the raw inputs: secret inputs stay secret outputs, as with real providers.
        return resource_id, {**args.inputs, **self.answers.outputs(args.typ, resource_id, inputs)}

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict[str, Any]:
        secret_paths: set[str] = set()
        arguments = _normalise(args.args, "", secret_paths, self.redact)
        with self._lock:
            self.calls.append((args.token, arguments))
        return {} if self.answers is None else self.answers.call(args.token, arguments)


class _RecordingMonitor(MockMonitor):
    """The SDK's mock monitor, plus two things its Mocks interface cannot express:
    where each resource sits in the component tree (its URN and parent), and, for an offline
    preview, lookups whose result is unknown (the real engine would ask the cloud)."""

    def __init__(self, mocks: RecordingMocks) -> None:
        super().__init__(mocks)
        self.recording = mocks
        # (type, name) → where it sits and the options the engine received with it
        self.tree: dict[tuple[str, str], _Placement] = {}
        # A cloud resource read by id (`Resource.get`): a lookup, not something the stack owns.
        self.reads: dict[tuple[str, str], str] = {}
        self._lock = threading.Lock()

    def RegisterResource(self, request: Any) -> Any:
        self._place(
            request,
            ignore_changes=tuple(request.ignoreChanges),
            replace_on_changes=tuple(request.replaceOnChanges),
            import_id=request.importId,
        )
        return super().RegisterResource(request)

    def ReadResource(self, request: Any) -> Any:  # a StackReference is read, not registered
        self._place(request)
        # A Kubernetes object read by name stays with the objects (the render shows it there).
        if request.type != STACK_REFERENCE and not request.type.startswith("kubernetes:"):
            with self._lock:
                self.reads[(request.type, request.name)] = request.id
        return super().ReadResource(request)

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        """The URN the engine gives (pulumi/sdk/go/common/resource/urn.go `NewURN`): the
        parent's whole qualified type before the resource's own, unless the parent is the
        root stack. The SDK's mock keeps only the parent's last type, the root's included, so
        a top-level resource's URN would not be the one `pulumi up` writes to the state."""
        qualified = type_
        if parent:
            parent_type = parent.split("::")[2]
            if parent_type != ROOT_STACK:
                qualified = f"{parent_type}${type_}"
        return f"urn:pulumi:{pulumi.get_stack()}::{pulumi.get_project()}::{qualified}::{name}"

    def _place(self, request: Any, **options: Any) -> None:
        urn = self.make_urn(request.parent, request.type, request.name)
        placement = _Placement(urn, request.parent, tuple(request.dependencies), options)
        with self._lock:
            self.tree[(request.type, request.name)] = placement

    def placed(self, registration: Registration) -> Registration:
        # Every registration came through RegisterResource or ReadResource first.
        placement = self.tree[(registration.type, registration.name)]
        return replace(
            registration,
            urn=placement.urn,
            parent=placement.parent,
            dependencies=placement.dependencies,
            **placement.options,
        )

    def settle(self, recorded: Recorded) -> None:
        """Place every registration in the tree; a resource read by id becomes a lookup
        (`<type>.get`, with its id), since the stack neither creates nor owns it."""
        owned = [r for r in recorded.resources if (r.type, r.name) not in self.reads]
        recorded.resources[:] = [self.placed(r) for r in owned]
        for (type_token, _), resource_id in sorted(self.reads.items()):
            recorded.calls.append((f"{type_token}.get", {"id": resource_id}))

    def Invoke(self, request: Any) -> Any:
        response = super().Invoke(request)  # records the call through the mocks
        if self.recording.answers is None and request.tok != "pulumi:pulumi:getResource":
            return resource_pb2.ResourceInvokeResponse(unknown=True)
        return response


class ProviderError(Exception):
    """A fake cloud's refusal of a resource (what a provider's failed create is to the
    program): recorded as `Recorded.error`, like the program's own refusal."""


def _unless_the_programs_refusal(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """Report what asyncio reports, except the program's own refusal (a RunError, recorded as
    `Recorded.error`) or a provider's (ProviderError) once more for every future that carried
    it (a run stack's failed platform check reaches each object's registration): hundreds of
    copies of one message."""
    if isinstance(context.get("exception"), (pulumi.RunError, ProviderError)):
        return
    loop.default_exception_handler(context)


_frozen: list[bool] = []


def _freeze_imports_once() -> None:
    """Exclude what exists before the first run (the SDKs' modules, hundreds of thousands of
    objects) from every later collection: the full collection after each run then scans only
    what runs made, 10-20 % of a render's time otherwise."""
    if not _frozen:
        gc.collect()
        gc.freeze()
        _frozen.append(True)


@contextmanager
def _private_event_loop() -> Iterator[None]:
    """A fresh event loop for one run, closed after it, with it the loops of its executor's
    threads. The SDK calls the monitor from executor threads, and each thread makes itself a
    loop that nothing closes; left to interpreter teardown, their finalizers can print
    "Exception ignored ... Invalid file descriptor" to stderr."""
    loops = [asyncio.new_event_loop()]
    loops[0].set_exception_handler(_unless_the_programs_refusal)

    def own_loop() -> None:  # runs first in each executor thread
        loop = asyncio.new_event_loop()
        loop.set_exception_handler(_unless_the_programs_refusal)
        asyncio.set_event_loop(loop)
        loops.append(loop)

    _freeze_imports_once()
    executor = ThreadPoolExecutor(thread_name_prefix="pulumi-mock", initializer=own_loop)
    loops[0].set_default_executor(executor)
    asyncio.set_event_loop(loops[0])
    try:
        yield
    finally:
        executor.shutdown(wait=True)
        gc.collect()  # finalise this run's futures while its handler is still in place
        for loop in loops:
            loop.close()
        asyncio.set_event_loop(None)  # the next user gets a loop of its own


# What the Python language host adds to the program's environment (pulumi/pulumi
# sdk/python/cmd/pulumi-language-python/main.go `Run`: pulumiConfigVar, pulumiConfigSecretKeysVar);
# everything else reaches its exec script as arguments, which become the runtime's settings.
ENGINE_ENV = ("PULUMI_CONFIG", "PULUMI_CONFIG_SECRET_KEYS")


@contextmanager
def as_the_engine_runs_it(config: Mapping[str, str], secret_keys: Iterable[str]) -> Iterator[None]:
    """The program's process as the engine starts it: working directory Pulumi.yaml's `main`
    (where every provider starts too, so a relative `source` is opened from there), the config
    and its secret keys as JSON in the language host's variables, read back the way its exec
    script reads them (`set_all_config(get_config_env(), get_config_secret_keys_env())`).
    Both are restored afterwards: the process is the caller's."""
    saved_env = {name: os.environ.get(name) for name in ENGINE_ENV}
    saved_cwd = os.getcwd()
    os.environ["PULUMI_CONFIG"] = json.dumps(dict(config))
    os.environ["PULUMI_CONFIG_SECRET_KEYS"] = json.dumps(list(secret_keys))
    os.chdir(program_dir())
    try:
        runtime_config.set_all_config(
            runtime_config.get_config_env(), runtime_config.get_config_secret_keys_env()
        )
        yield
    finally:
        os.chdir(saved_cwd)
        for name, value in saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def run_program(
    config: Mapping[str, str],
    *,
    stack: str,
    secret_keys: Iterable[str] = (),
    answers: CloudAnswers | None = None,
    redact_secrets: bool = False,
    raise_errors: bool = True,
    stack_references: Mapping[str, StackOutputs] | None = None,
) -> Recorded:
    """Run `infra.program.build()` once for `config` (`infra.config.stack_file.engine_config`);
    record it.

    Without `answers` this is an offline preview (see the module docstring); with them, a mock
    deployment. `redact_secrets` records every secret value as SECRET (for output that people
    read); otherwise they are unwrapped and their paths kept in `secret_paths` (for asserts).
    With `raise_errors=False` the program's own error is kept in `Recorded.error`.
    `stack_references`: the outputs of the stacks a run stack reads, by fully qualified name.
    """
    from infra.program import build  # Pulumi-only imports stay out of the render's YAML path

    mocks = RecordingMocks(answers, redact_secrets, stack_references)
    monitor = _RecordingMonitor(mocks)
    recorded = Recorded(resources=mocks.resources, calls=mocks.calls)

    # Set up inside the loop: set_mocks makes the root Stack, whose outputs live on it.
    with _private_event_loop(), as_the_engine_runs_it(config, secret_keys):
        settings.ROOT.set(None)  # a new root Stack per run, or exports pile up across runs
        pulumi.runtime.set_mocks(
            mocks, project=PROJECT, stack=stack, preview=answers is None, monitor=monitor
        )
        settings.SETTINGS.root_directory = str(PROJECT_DIR)  # the exec script's --root_directory
        settings.SETTINGS.rpc_manager.clear()
        settings.SETTINGS.outputs.clear()

        async def program() -> None:
            build()
            root = settings.get_root_resource()
            for key, value in getattr(root, "outputs", {}).items():
                output = pulumi.Output.from_input(value)
                recorded.outputs[key] = await output.future()
                if await output.is_secret():
                    recorded.secret_outputs.add(key)

        try:
            _sync_await(run_pulumi_func(program))
        except Exception as error:  # the program's own error, e.g. a rejected config
            recorded.error = error
            if raise_errors:
                raise
        finally:
            monitor.settle(recorded)
    return recorded
