"""Training, for the processes that train: the single process, every MultiWorkerMirrored
worker, and the ParameterServerStrategy chief (which schedules; the workers compute).

Top to bottom: load the data; build the strategy, model and optimizer; resume from the
latest checkpoint (or, for a new fine-tuning run, take the weights of the init checkpoint);
run fused steps up to each boundary (a progress line, a checkpoint, the
end); then evaluate and export. A run whose latest checkpoint is already at the final
step (a restart after the last save) skips the training part.

The global step is counted here, in Python, and saved in the checkpoint. Under
ParameterServerStrategy the optimizer's own counter is not exact (two workers increment it
on the ps concurrently) and only the chief knows how many steps it has scheduled.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

import keras
import tensorflow as tf

from trainer.checkpoint_store import latest_saved_step
from trainer.data import Mnist
from trainer.distribution import Executor, make_executor, make_strategy, make_train_steps
from trainer.errors import RunError
from trainer.model import build_model, build_optimizer, local_copy, test_accuracy
from trainer.output_dir import OutputPaths
from trainer.outputs import (
    Checkpoints,
    export_saved_model,
    resume_model,
    write_metrics,
)
from trainer.plan import Plan
from trainer.preemption import Notice, Preempted
from trainer.process_exit import keep_until_exit
from trainer.progress import Progress
from trainer.settings import Settings, SettingsError
from trainer.startup import StartupClock
from trainer.steps import StepPlan
from trainer.tf_config import ClusterConfig
from trainer.watchdog import Watchdog


class ParameterServerLost(RunError):
    """The ps went away: this run cannot go on, but a restarted one resumes."""


@dataclass(frozen=True)
class Trained:
    model: keras.Model  # a local copy of the final weights
    step: int
    steps_run: int  # by this run, after any resume
    seconds: float


def run(
    settings: Settings, plan: Plan, config: ClusterConfig | None, data: Mnist, clock: StartupClock
) -> int:
    paths = OutputPaths(settings.output_dir)
    notice = Notice(paths.root).install()
    if plan.is_writer:
        notice.acknowledge()  # a request no chief served
    steps = StepPlan.from_settings(settings, len(data.train_labels))
    trained = restore_finished(paths, steps.final_step, plan)
    if trained is None:
        try:
            trained = train(settings, plan, config, data, paths, steps, notice, clock)
        except tf.errors.UnavailableError as error:
            # Under ParameterServerStrategy the coordinator retries a lost worker's steps on
            # another, but every step needs the ps: without it the run cannot go on.
            if plan.strategy != "parameter_server":
                raise
            raise ParameterServerLost(_lost_message(error, latest_saved_step(paths))) from None
    if not plan.is_writer:
        print(f"Training finished at step {trained.step}; the chief or worker 0 saves the model")
        return 0
    accuracy = test_accuracy(trained.model, data.test_images, data.test_labels)
    print(f"Test-Accuracy: {accuracy:.4f}")
    with tf.summary.create_file_writer(str(paths.eval)).as_default(step=trained.step):
        tf.summary.scalar("test_accuracy", accuracy)
    export_saved_model(trained.model, paths.saved_model)
    write_metrics(paths.metrics, {"test_accuracy": round(accuracy, 4), "global_step": trained.step})
    if trained.steps_run:
        print(f"Examples/sec: {trained.steps_run * settings.batch_size / trained.seconds:.1f}")
    print(f"Total Time: {clock.elapsed():.1f}s")
    return 0


def restore_finished(paths: OutputPaths, final_step: int, plan: Plan) -> Trained | None:
    """The final weights if training already reached `final_step`, else None.

    Then there is nothing to train: a chief restarted after its last checkpoint only
    evaluates and exports, and does so without the cluster, whose ps and workers may be
    gone already.
    """
    if latest_saved_step(paths) != final_step:
        return None
    model = build_model()
    step = resume_model(model, paths, may_change=plan.is_writer)
    if step != final_step:
        return None  # the final checkpoint is damaged (and set aside): train from an earlier one
    latest = paths.checkpoints / f"ckpt-{step}"
    print(f"Resumed from checkpoint {latest} at step {step}: training is complete")
    return Trained(model, step, steps_run=0, seconds=0.0)


def train(
    settings: Settings,
    plan: Plan,
    config: ClusterConfig | None,
    data: Mnist,
    paths: OutputPaths,
    steps: StepPlan,
    notice: Notice,
    clock: StartupClock,
) -> Trained:
    name = str(config.task) if config else "single process"
    # From here, where a peer that never answers first shows (MWMS waits for every worker
    # to connect), to the last step.
    watchdog = Watchdog(name, settings.stall_seconds, waits_on(config)).start()
    try:
        return train_with(settings, plan, config, data, paths, steps, notice, clock, watchdog)
    finally:
        watchdog.stop()


def train_with(
    settings: Settings,
    plan: Plan,
    config: ClusterConfig | None,
    data: Mnist,
    paths: OutputPaths,
    steps: StepPlan,
    notice: Notice,
    clock: StartupClock,
    watchdog: Watchdog,
) -> Trained:
    strategy = make_strategy(plan, config)
    # Again: MultiWorkerMirroredStrategy's coordination service installs TensorFlow's own
    # SIGTERM handler (its C++ `SigtermNotifier`), which replaced ours, so the SIGTERM
    # reached a worker and it trained on (seen with sigaction before and after).
    notice.install()
    clock.lap("cluster")
    if settings.batch_size % strategy.num_replicas_in_sync:
        raise SettingsError(
            f"--batch-size / TFTRAIN_BATCH_SIZE {settings.batch_size} must divide evenly "
            f"among the {strategy.num_replicas_in_sync} replicas"
        )
    model, optimizer, checkpoints = build_state(settings, plan, strategy, paths, steps)
    first_step = checkpoints.restore_latest()
    if first_step == 0 and settings.init_checkpoint is not None:
        checkpoints.warm_start(settings.init_checkpoint)
    clock.lap("model and checkpoint")
    train_steps = make_train_steps(strategy, model, optimizer, settings.batch_size)
    executor = make_executor(plan, config, strategy, train_steps, settings, len(data.train_labels))
    clock.lap("input pipeline")
    print(clock.summary())
    writer = (
        tf.summary.create_file_writer(str(paths.train))
        if plan.is_writer
        else tf.summary.create_noop_writer()
    )
    progress = Progress(executor, steps, settings.batch_size, writer, echo=plan.is_writer)
    watchdog.beat(f"step {first_step}")
    started = time.perf_counter()
    step = train_to_end(executor, progress, steps, first_step, notice, checkpoints, watchdog)
    seconds = time.perf_counter() - started
    writer.close()
    keep_until_exit(executor)  # its input pipeline: see trainer.process_exit
    checkpoints.discard_private_copies()
    return Trained(local_copy(model), step, step - first_step, seconds)


def build_state(
    settings: Settings,
    plan: Plan,
    strategy: tf.distribute.Strategy,
    paths: OutputPaths,
    steps: StepPlan,
) -> tuple[keras.Model, keras.optimizers.Optimizer, Checkpoints]:
    """The model, its optimizer and their checkpoints, not yet restored."""
    keras.utils.set_random_seed(settings.seed)
    with strategy.scope():
        model = build_model()
        optimizer = build_optimizer(settings.learning_rate, steps.final_step)
        # Create the optimizer's slots now, so a restore fills them instead of deferring.
        optimizer.build(model.trainable_variables)
    return model, optimizer, Checkpoints(model, optimizer, plan, paths, settings.keep_checkpoints)


def train_to_end(
    executor: Executor,
    progress: Progress,
    steps: StepPlan,
    step: int,
    notice: Notice,
    checkpoints: Checkpoints,
    watchdog: Watchdog,
) -> int:
    """Fused steps from `step` to the final one, with progress lines and checkpoints."""
    while step < steps.final_step:
        chunk = steps.next_chunk(step)
        # Returns once earlier steps are done (Progress waits for them to keep a bounded
        # queue): a loop that stops turning is a run that stopped training.
        progress.add(executor.run(chunk), chunk, step + chunk)
        watchdog.beat(f"step {step}")
        step += chunk
        reason = notice.reason()
        # Every replica must stop at the same step (MWMS saves collectively): they agree.
        stop = executor.any_replica(reason is not None)
        if stop or steps.is_checkpoint_boundary(step):
            executor.join()
            progress.drain()
            checkpoints.save(step)
        if stop:
            notice.saved(step)
            raise Preempted(step, reason or "another worker's SIGTERM")
    return step


def waits_on(config: ClusterConfig | None) -> str:
    """The tasks a training process waits on, for the watchdog's line."""
    if config is None:
        return "nothing but its own TensorFlow runtime"
    return ", ".join(config.peers()) or "no other task"


def _lost_message(error: tf.errors.UnavailableError, saved_step: int | None) -> str:
    resume = (
        f"it resumes from the latest checkpoint at step {saved_step}"
        if saved_step is not None
        else "no checkpoint was saved yet, so it starts from step 0"
    )
    return (
        f"Parameter server unreachable (UNAVAILABLE: {_cause(error.message)}): restart the ps "
        f"and this chief (Kubernetes and the local launcher do, up to job.backoffLimit times); "
        f"{resume}"
    )


def _cause(message: str) -> str:
    """The line of TensorFlow's message that says why (it often starts "Graph execution
    error:", and the gRPC status is further on, or is the first line itself)."""
    status = re.search(r"UNAVAILABLE:\s*(.+)", message)
    if status:
        return status.group(1).strip()
    lines = [line.strip() for line in message.splitlines()]
    return next((line for line in lines if line and not line.endswith("error:")), "no details")
