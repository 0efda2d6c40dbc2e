"""The two kinds of failure the trainer reports as one clear line instead of a traceback."""


class UsageError(ValueError):
    """A flag, env var or TF_CONFIG is wrong; the message names it. Exit code 2."""


class RunError(Exception):
    """The run cannot go on (bad data, lost parameter server). Exit code 1."""
