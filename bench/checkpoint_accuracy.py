"""Test accuracy of every checkpoint a trainer run kept, and when each was written.

The trainer evaluates the test set once, at the end; its checkpoints (every
`checkpointSteps`, the latest three kept) are the only record of the model part-way, so
this turns them into an accuracy-over-time curve after the fact, without touching the
timed run. `bench.time_to_accuracy` runs it in a subprocess once all timed runs are over:
TensorFlow then never loads in the benchmark's own process, and evaluating never competes
with a run for the two cores.

    .venv/bin/python -m bench.checkpoint_accuracy OUTPUT_DIR [OUTPUT_DIR ...]

Prints one JSON object per output dir:
`{"output_dir": ..., "checkpoints": [{"step": 1000, "written": <epoch s>, "accuracy": 0.99}]}`
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import tensorflow as tf

from trainer.data import Mnist, load_mnist
from trainer.model import build_model, test_accuracy
from trainer.output_dir import OutputPaths
from trainer.outputs import restore_model
from trainer.settings import BUNDLED_DATA_DIR


def written_at(prefix: str) -> float:
    """When a checkpoint was complete: the newest mtime among its files (data, index)."""
    files = list(Path(prefix).parent.glob(Path(prefix).name + ".*"))
    if not files:
        raise FileNotFoundError(f"no files for checkpoint {prefix}")
    return max(path.stat().st_mtime for path in files)


def curve(output_dir: Path, data: Mnist) -> list[dict[str, Any]]:
    state = tf.train.get_checkpoint_state(str(OutputPaths(output_dir).checkpoints))
    if state is None:
        return []
    model = build_model()
    points = []
    for prefix in state.all_model_checkpoint_paths:
        step = restore_model(model, prefix)
        points.append(
            {
                "step": step,
                "written": written_at(prefix),
                "accuracy": test_accuracy(model, data.test_images, data.test_labels),
            }
        )
    return sorted(points, key=lambda point: point["step"])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output_dirs", type=Path, nargs="+")
    parser.add_argument("--data-dir", type=Path, default=BUNDLED_DATA_DIR)
    args = parser.parse_args(argv)
    data = load_mnist(args.data_dir)
    for output_dir in args.output_dirs:
        record = {"output_dir": str(output_dir), "checkpoints": curve(output_dir, data)}
        print(json.dumps(record), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
