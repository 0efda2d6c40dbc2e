"""MNIST from the four original IDX `.gz` files, checksum-verified, as numpy arrays.

Pure numpy (no TensorFlow): `tf.keras.datasets.mnist` downloads, which a pod without
internet cannot do, and a half-copied file on a shared volume must fail loudly, naming the
file, instead of training on garbage.

IDX format: a big-endian magic number whose third byte is the element type (0x08 = uint8)
and fourth the number of dimensions, then one big-endian uint32 per dimension, then the
data.
"""

from __future__ import annotations

import gzip
import hashlib
import math
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from trainer.checksums import parse_sha256sums
from trainer.errors import RunError

CHECKSUMS = "SHA256SUMS"
FILES = {
    "train_images": "train-images-idx3-ubyte.gz",
    "train_labels": "train-labels-idx1-ubyte.gz",
    "test_images": "t10k-images-idx3-ubyte.gz",
    "test_labels": "t10k-labels-idx1-ubyte.gz",
}
_UBYTE = 0x08


def idx_header_size(ndim: int) -> int:
    return 4 + 4 * ndim


class DataError(RunError):
    """A data file is missing, corrupt or inconsistent; the message names the file."""


@dataclass(frozen=True)
class Mnist:
    train_images: np.ndarray  # (n, 28, 28, 1) uint8
    train_labels: np.ndarray  # (n,) uint8, 0..9
    test_images: np.ndarray
    test_labels: np.ndarray


def load_mnist(data_dir: Path, train_examples: int = 0) -> Mnist:
    """Load and verify the data set; `train_examples` > 0 keeps only the first N."""
    expected = _read_checksums(data_dir / CHECKSUMS)
    arrays = {}
    for key, name in FILES.items():
        if name not in expected:
            raise DataError(f"{data_dir / CHECKSUMS} has no checksum for {name}")
        arrays[key] = _read_idx(data_dir / name, expected[name])
    for split in ("train", "test"):
        images, labels = arrays[f"{split}_images"], arrays[f"{split}_labels"]
        images_file, labels_file = data_dir / FILES[f"{split}_images"], FILES[f"{split}_labels"]
        if images.ndim != 3 or images.shape[1:] != (28, 28) or labels.ndim != 1:
            raise DataError(
                f"{images_file} and {labels_file} have shapes {images.shape} and "
                f"{labels.shape}; expected (n, 28, 28) images and (n,) labels"
            )
        if len(images) != len(labels):
            raise DataError(
                f"{images_file} has {len(images)} images but {labels_file} has {len(labels)} labels"
            )
        if labels.max(initial=0) > 9:
            raise DataError(f"{data_dir / labels_file} has labels above 9")
    if train_examples > len(arrays["train_images"]):
        raise DataError(
            f"asked for {train_examples} training examples; {data_dir} has only "
            f"{len(arrays['train_images'])}"
        )
    keep = slice(None, train_examples or None)
    return Mnist(
        train_images=arrays["train_images"][keep, ..., np.newaxis],
        train_labels=arrays["train_labels"][keep],
        test_images=arrays["test_images"][..., np.newaxis],
        test_labels=arrays["test_labels"],
    )


def count_train_examples(data_dir: Path, train_examples: int = 0) -> int:
    """How many examples a run trains on, from the labels file's IDX header alone.

    For processes that never load the data (ps and worker servers) but must know how long
    the run is; no checksum check, that is `load_mnist`'s job in the chief.
    """
    path = data_dir / FILES["train_labels"]
    try:
        with gzip.open(path) as labels:
            header = labels.read(idx_header_size(1))
    except (OSError, EOFError, zlib.error) as error:
        raise DataError(f"cannot read the IDX header of {path}: {error}") from None
    if len(header) < idx_header_size(1) or header[:4] != bytes((0, 0, _UBYTE, 1)):
        raise DataError(f"{path} is not an IDX file of unsigned-byte labels")
    available = int.from_bytes(header[4:8], "big")
    return min(train_examples, available) if train_examples else available


def _read_checksums(path: Path) -> dict[str, str]:
    try:
        return parse_sha256sums(path.read_text())
    except OSError as error:
        raise DataError(f"cannot read checksum file {path}: {error.strerror}") from None
    except ValueError as error:
        raise DataError(f"checksum file {path}: {error}") from None


def _read_idx(path: Path, sha256: str) -> np.ndarray:
    try:
        compressed = path.read_bytes()
    except OSError as error:
        raise DataError(f"cannot read MNIST file {path}: {error.strerror}") from None
    actual = hashlib.sha256(compressed).hexdigest()
    if actual != sha256:
        raise DataError(
            f"checksum mismatch for {path}: its SHA-256 is {actual}, {CHECKSUMS} says "
            f"{sha256}; the file is corrupt or truncated, copy it again"
        )
    try:
        raw = gzip.decompress(compressed)
    except (OSError, EOFError, zlib.error) as error:
        raise DataError(f"cannot decompress MNIST file {path}: {error}") from None
    if len(raw) < 4 or raw[0:2] != b"\0\0" or raw[2] != _UBYTE:
        raise DataError(f"{path} is not an IDX file of unsigned bytes")
    ndim = raw[3]
    header_size = idx_header_size(ndim)
    if len(raw) < header_size:
        raise DataError(f"{path} is truncated inside its IDX header")
    shape = tuple(int(size) for size in np.frombuffer(raw, ">u4", count=ndim, offset=4))
    if len(raw) != header_size + math.prod(shape):
        raise DataError(
            f"{path} is truncated or has trailing bytes: its header says shape {shape}, "
            f"it holds {len(raw) - header_size} data bytes"
        )
    return np.frombuffer(raw, np.uint8, offset=header_size).reshape(shape)
