"""A ParameterServerStrategy ps or worker: a TensorFlow server that serves until stopped.

It never imports TensorFlow's Python API (`trainer.grpc_server`): a server runs what the
chief sends, and the import would cost it seconds of start-up on every (re)start.

The ps keeps the variables, a worker runs whatever closures the chief sends; neither can
tell from TensorFlow that training is over, so, like any TFJob trainer's, they `join()`
forever. The run's end is not theirs to detect: the replica supervisor around every
replica's command (`infra/lifecycle/supervise.sh`) stops them once the chief has succeeded,
and exits 0 at once if the run has already ended when they (re)start.
"""

from __future__ import annotations

from trainer.checkpoint_store import latest_saved_step
from trainer.data import DataError, count_train_examples
from trainer.grpc_server import start_server
from trainer.output_dir import OutputPaths
from trainer.preemption import Notice, exit_at_once, serve_until_saved, wait_for_sigterm
from trainer.settings import Settings
from trainer.steps import StepPlan
from trainer.tf_config import ClusterConfig


def serve(config: ClusterConfig, settings: Settings) -> int:
    task = config.task
    name = str(task)
    # Before the server starts: a SIGTERM from then on is remembered, and acted on below.
    notice = Notice(settings.output_dir).install()
    target = start_server(config.cluster, task.type, task.index)
    print(f"{name} serving at {target} until the run ends")
    # Not `server.join()`: Python runs a signal handler between bytecodes of the main thread,
    # and join() would hold it in TensorFlow until the supervisor kills the process.
    wait_for_sigterm(notice)
    if task.type == "ps":
        serve_until_saved(settings.output_dir, name, lambda: training_complete(settings))
    exit_at_once(name, lambda: training_complete(settings))


def training_complete(settings: Settings) -> bool:
    """Whether the run's final checkpoint is published. Read when asked, never at start: a
    ps needs no data to serve, and a data dir it cannot read only means "not known"."""
    try:
        examples = count_train_examples(settings.data_dir, settings.train_examples)
    except DataError:
        return False
    final_step = StepPlan.from_settings(settings, examples).final_step
    latest = latest_saved_step(OutputPaths(settings.output_dir))
    return latest is not None and latest >= final_step
