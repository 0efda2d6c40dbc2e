"""MNIST loading from the bundled IDX files, and clear errors for broken copies."""

from __future__ import annotations

import gzip
import hashlib
import shutil
from pathlib import Path

import numpy as np
import pytest

from tests.shared_values import SHARED_SCOPE
from trainer.data import CHECKSUMS, FILES, DataError, count_train_examples, load_mnist
from trainer.settings import BUNDLED_DATA_DIR


@pytest.fixture(scope=SHARED_SCOPE)
def mnist():
    return load_mnist(BUNDLED_DATA_DIR)


@pytest.fixture
def data_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "mnist"
    shutil.copytree(BUNDLED_DATA_DIR, copy)
    return copy


def rewrite_checksum(data_dir: Path, name: str) -> None:
    """Make SHA256SUMS agree with a deliberately broken file, to reach the later checks."""
    digest = hashlib.sha256((data_dir / name).read_bytes()).hexdigest()
    lines = (data_dir / CHECKSUMS).read_text().splitlines()
    fixed = [f"{digest}  {name}" if line.endswith(name) else line for line in lines]
    (data_dir / CHECKSUMS).write_text("\n".join(fixed) + "\n")


def test_real_data_shapes_dtypes_and_labels(mnist) -> None:
    assert mnist.train_images.shape == (60000, 28, 28, 1)
    assert mnist.test_images.shape == (10000, 28, 28, 1)
    assert mnist.train_labels.shape == (60000,)
    assert mnist.test_labels.shape == (10000,)
    assert mnist.train_images.dtype == mnist.train_labels.dtype == np.uint8
    assert set(np.unique(mnist.train_labels)) == set(range(10))
    assert set(np.unique(mnist.test_labels)) == set(range(10))
    assert mnist.train_images.max() == 255
    assert list(mnist.train_labels[:5]) == [5, 0, 4, 1, 9]  # the well-known first digits


def test_first_n_training_examples(mnist) -> None:
    small = load_mnist(BUNDLED_DATA_DIR, train_examples=100)
    assert small.train_images.shape == (100, 28, 28, 1)
    np.testing.assert_array_equal(small.train_labels, mnist.train_labels[:100])
    assert small.test_images.shape == (10000, 28, 28, 1)  # always the whole test set


def test_servers_count_examples_from_the_header_alone(data_copy: Path) -> None:
    assert count_train_examples(BUNDLED_DATA_DIR) == 60000
    assert count_train_examples(BUNDLED_DATA_DIR, train_examples=8192) == 8192
    (data_copy / FILES["train_labels"]).write_bytes(gzip.compress(b"\0\0\x08\x03rest"))
    with pytest.raises(DataError, match="not an IDX file of unsigned-byte labels"):
        count_train_examples(data_copy)
    (data_copy / FILES["train_labels"]).unlink()
    with pytest.raises(DataError, match="cannot read the IDX header"):
        count_train_examples(data_copy)


def test_more_examples_than_exist(data_copy: Path) -> None:
    with pytest.raises(DataError, match="asked for 60001 training examples"):
        load_mnist(data_copy, train_examples=60001)


@pytest.mark.parametrize("name", [*FILES.values(), CHECKSUMS])
def test_missing_file_is_named(data_copy: Path, name: str) -> None:
    (data_copy / name).unlink()
    with pytest.raises(DataError, match=name):
        load_mnist(data_copy)


def test_truncated_file_fails_its_checksum(data_copy: Path) -> None:
    path = data_copy / FILES["train_images"]
    path.write_bytes(path.read_bytes()[:100_000])
    with pytest.raises(DataError, match=f"checksum mismatch for .*{path.name}.*truncated"):
        load_mnist(data_copy)


def test_wrong_checksum_is_named(data_copy: Path) -> None:
    path = data_copy / FILES["test_labels"]
    content = bytearray(path.read_bytes())
    content[-1] ^= 0xFF
    path.write_bytes(bytes(content))
    with pytest.raises(DataError, match=f"checksum mismatch for .*{path.name}"):
        load_mnist(data_copy)


def test_truncated_gzip_with_matching_checksum(data_copy: Path) -> None:
    name = FILES["test_images"]
    path = data_copy / name
    path.write_bytes(path.read_bytes()[:50_000])
    rewrite_checksum(data_copy, name)
    with pytest.raises(DataError, match=f"cannot decompress MNIST file .*{name}"):
        load_mnist(data_copy)


def test_truncated_idx_payload_with_matching_checksum(data_copy: Path) -> None:
    name = FILES["test_labels"]
    path = data_copy / name
    path.write_bytes(gzip.compress(gzip.decompress(path.read_bytes())[:-10]))
    rewrite_checksum(data_copy, name)
    with pytest.raises(DataError, match=f"{name} is truncated"):
        load_mnist(data_copy)


def test_images_and_labels_disagree(data_copy: Path) -> None:
    name = FILES["train_labels"]
    raw = bytearray(gzip.decompress((data_copy / name).read_bytes()))
    raw[4:8] = (59999).to_bytes(4, "big")  # one label fewer, consistently with the payload
    (data_copy / name).write_bytes(gzip.compress(bytes(raw[:-1])))
    rewrite_checksum(data_copy, name)
    with pytest.raises(DataError, match=r"60000 images but .*59999 labels"):
        load_mnist(data_copy)
