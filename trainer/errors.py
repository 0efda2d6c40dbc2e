"""The kinds of failure the trainer reports as one clear line instead of a traceback."""


class UsageError(ValueError):
    """A flag, env var, TF_CONFIG or the output dir is wrong; the message names it. Exit 2."""


class NoUsableCheckpoint(Exception):
    """Checkpoints exist but none of them restores. Exit code 2, like a usage error: a
    restart would fail the same way, and training from step 0 would write over them, so a
    person must look (the message names each checkpoint and what is wrong with it)."""


class RunError(Exception):
    """The run cannot go on (bad data, lost parameter server). Exit code 1."""
