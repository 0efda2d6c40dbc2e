"""The MNIST reader (trainer.data) on tiny data sets written here from the IDX format's
definition (yann.lecun.com/exdb/mnist: a big-endian magic whose third byte is the element
type, 0x08 for unsigned bytes, and fourth the number of dimensions; one big-endian uint32 per
dimension; the data) and `sha256sum`'s line format. Every refusal in full: the message is
what a person copying data to a volume reads. The bundled files: test_trainer_data.py."""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import numpy as np
import pytest

from trainer.data import DataError, count_train_examples, load_mnist

TRAIN_IMAGES, TRAIN_LABELS = "train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"
TEST_IMAGES, TEST_LABELS = "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"


def idx(shape: tuple[int, ...], data: bytes, kind: int = 0x08) -> bytes:
    header = bytes((0, 0, kind, len(shape))) + b"".join(n.to_bytes(4, "big") for n in shape)
    return header + data


def images(n: int) -> bytes:
    return idx((n, 28, 28), b"".join(bytes([i]) * 784 for i in range(n)))  # image i: all i


def labels(values: list[int]) -> bytes:
    return idx((len(values),), bytes(values))


def write(directory: Path, files: dict[str, bytes], sums: dict[str, bytes] | None = None) -> Path:
    """The gzipped files and a SHA256SUMS of them (of `sums`' content where given)."""
    directory.mkdir(exist_ok=True)
    lines = []
    for name, content in files.items():
        packed = gzip.compress(content)
        (directory / name).write_bytes(packed)
        lines.append(f"{hashlib.sha256(packed).hexdigest()}  {name}\n")
    (directory / "SHA256SUMS").write_text("".join(lines))
    return directory


def good(**replace: bytes) -> dict[str, bytes]:
    files = {
        TRAIN_IMAGES: images(3),
        TRAIN_LABELS: labels([7, 0, 9]),
        TEST_IMAGES: images(2),
        TEST_LABELS: labels([1, 2]),
    }
    return {**files, **replace}


def refusal(data_dir: Path, train_examples: int = 0) -> str:
    with pytest.raises(DataError) as error:
        load_mnist(data_dir, train_examples)
    return str(error.value)


def test_a_small_set_loads_as_written(tmp_path: Path) -> None:
    data = load_mnist(write(tmp_path / "d", good()))
    assert data.train_images.shape == (3, 28, 28, 1)
    assert data.test_images.shape == (2, 28, 28, 1)
    assert data.train_images.dtype == np.uint8
    assert [int(image.max()) for image in data.train_images] == [0, 1, 2]
    assert data.train_labels.tolist() == [7, 0, 9]  # 9, the highest digit, is allowed
    assert data.test_labels.tolist() == [1, 2]


@pytest.mark.parametrize(("asked", "kept"), [(0, 3), (1, 1), (3, 3)])
def test_the_first_n_training_examples(tmp_path: Path, asked: int, kept: int) -> None:
    data = load_mnist(write(tmp_path / "d", good()), asked)
    assert data.train_labels.tolist() == [7, 0, 9][:kept]
    assert len(data.train_images) == kept
    assert len(data.test_labels) == 2  # the test set is never cut


def test_more_training_examples_than_the_set_has(tmp_path: Path) -> None:
    directory = write(tmp_path / "d", good())
    assert refusal(directory, 4) == f"asked for 4 training examples; {directory} has only 3"


@pytest.mark.parametrize(("asked", "counted"), [(0, 3), (2, 2), (3, 3), (5, 3)])
def test_a_server_counts_from_the_labels_header(tmp_path: Path, asked: int, counted: int) -> None:
    directory = write(tmp_path / "d", {TRAIN_LABELS: labels([7, 0, 9])})
    assert count_train_examples(directory, asked) == counted


@pytest.mark.parametrize(
    "content",
    [idx((3,), b"\x07\x00\x09", kind=0x09), idx((3, 1), b"\x07\x00\x09"), b"\0\0\x08\x01\0\0"],
    ids=["signed-bytes", "two-dimensions", "short-header"],
)
def test_a_server_refuses_what_is_no_labels_file(tmp_path: Path, content: bytes) -> None:
    directory = write(tmp_path / "d", {TRAIN_LABELS: content})
    with pytest.raises(DataError) as error:
        count_train_examples(directory)
    assert (
        str(error.value) == f"{directory / TRAIN_LABELS} is not an IDX file of unsigned-byte labels"
    )


def test_a_server_without_the_labels_file_says_which(tmp_path: Path) -> None:
    with pytest.raises(DataError) as error:
        count_train_examples(tmp_path)
    assert str(error.value).startswith(f"cannot read the IDX header of {tmp_path / TRAIN_LABELS}: ")


def test_a_missing_checksum_file(tmp_path: Path) -> None:
    assert refusal(tmp_path) == (
        f"cannot read checksum file {tmp_path / 'SHA256SUMS'}: No such file or directory"
    )


def test_a_file_without_a_checksum(tmp_path: Path) -> None:
    directory = write(tmp_path / "d", {k: v for k, v in good().items() if k != TEST_LABELS})
    (directory / TEST_LABELS).write_bytes(gzip.compress(labels([1, 2])))
    assert refusal(directory) == f"{directory / 'SHA256SUMS'} has no checksum for {TEST_LABELS}"


def test_a_malformed_checksum_line(tmp_path: Path) -> None:
    directory = write(tmp_path / "d", good())
    with (directory / "SHA256SUMS").open("a") as sums:
        sums.write("not a checksum\n")
    assert refusal(directory) == (
        f"checksum file {directory / 'SHA256SUMS'}: line 5 is not `<sha256>  <file name>`: "
        "'not a checksum'"
    )


def test_a_missing_data_file(tmp_path: Path) -> None:
    directory = write(tmp_path / "d", good())
    (directory / TRAIN_IMAGES).unlink()
    assert refusal(directory) == (
        f"cannot read MNIST file {directory / TRAIN_IMAGES}: No such file or directory"
    )


def test_a_file_that_differs_from_its_checksum(tmp_path: Path) -> None:
    directory = write(tmp_path / "d", good())
    packed = (directory / TEST_LABELS).read_bytes()
    expected = hashlib.sha256(packed).hexdigest()
    (directory / TEST_LABELS).write_bytes(packed[:-1])
    actual = hashlib.sha256(packed[:-1]).hexdigest()
    assert refusal(directory) == (
        f"checksum mismatch for {directory / TEST_LABELS}: its SHA-256 is {actual}, SHA256SUMS "
        f"says {expected}; the file is corrupt or truncated, copy it again"
    )


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (idx((2,), b"\x01\x02", kind=0x09), "is not an IDX file of unsigned bytes"),
        (b"\0\0\x08", "is not an IDX file of unsigned bytes"),
        (b"\x01\0\x08\x01\0\0\0\x02\x01\x02", "is not an IDX file of unsigned bytes"),
        (b"\0\x01\x08\x01\0\0\0\x02\x01\x02", "is not an IDX file of unsigned bytes"),
        (b"\0\0\x08\x01\0\0", "is truncated inside its IDX header"),
        (b"\0\0\x08\x01", "is truncated inside its IDX header"),  # cut after the magic
        (idx((2,), b"\x01\x02\x03"),
         "is truncated or has trailing bytes: its header says shape (2,), it holds 3 data bytes"),
        (idx((2,), b"\x01"),
         "is truncated or has trailing bytes: its header says shape (2,), it holds 1 data bytes"),
    ],
    ids=["signed-bytes", "three-bytes", "magic-byte-0", "magic-byte-1", "short-header",
         "magic-only", "trailing-byte", "truncated"],
)  # fmt: skip
def test_a_file_with_the_right_checksum_but_no_idx_data(
    tmp_path: Path, content: bytes, why: str
) -> None:
    directory = write(tmp_path / "d", good(**{TEST_LABELS: content}))
    assert refusal(directory) == f"{directory / TEST_LABELS} {why}"


def test_a_file_with_the_right_checksum_that_is_no_gzip(tmp_path: Path) -> None:
    directory = write(tmp_path / "d", good())
    (directory / TEST_LABELS).write_bytes(b"plain bytes")
    (directory / "SHA256SUMS").write_text(
        (directory / "SHA256SUMS")
        .read_text()
        .replace(
            hashlib.sha256(gzip.compress(labels([1, 2]))).hexdigest(),
            hashlib.sha256(b"plain bytes").hexdigest(),
        )
    )
    assert refusal(directory).startswith(
        f"cannot decompress MNIST file {directory / TEST_LABELS}: "
    )


@pytest.mark.parametrize(
    ("replace", "message"),
    [
        ({TRAIN_IMAGES: idx((3, 27, 28), bytes(3 * 27 * 28))},
         "{d}/" + TRAIN_IMAGES + " and " + TRAIN_LABELS + " have shapes (3, 27, 28) and (3,); "
         "expected (n, 28, 28) images and (n,) labels"),
        ({TEST_IMAGES: idx((2, 28, 27), bytes(2 * 28 * 27))},
         "{d}/" + TEST_IMAGES + " and " + TEST_LABELS + " have shapes (2, 28, 27) and (2,); "
         "expected (n, 28, 28) images and (n,) labels"),
        ({TRAIN_IMAGES: idx((3, 784), bytes(3 * 784))},
         "{d}/" + TRAIN_IMAGES + " and " + TRAIN_LABELS + " have shapes (3, 784) and (3,); "
         "expected (n, 28, 28) images and (n,) labels"),
        ({TRAIN_LABELS: idx((3, 1), bytes(3))},
         "{d}/" + TRAIN_IMAGES + " and " + TRAIN_LABELS + " have shapes (3, 28, 28) and (3, 1); "
         "expected (n, 28, 28) images and (n,) labels"),
        ({TEST_LABELS: labels([1, 2, 3])},
         "{d}/" + TEST_IMAGES + " has 2 images but " + TEST_LABELS + " has 3 labels"),
        ({TRAIN_LABELS: labels([7, 10, 9])}, "{d}/" + TRAIN_LABELS + " has labels above 9"),
        ({TEST_LABELS: labels([1, 255])}, "{d}/" + TEST_LABELS + " has labels above 9"),
    ],
    ids=["train-27-rows", "test-27-columns", "flat-images", "labels-2d", "count-mismatch",
         "train-label-10", "test-label-255"],
)  # fmt: skip
def test_files_that_do_not_fit_together(
    tmp_path: Path, replace: dict[str, bytes], message: str
) -> None:
    directory = write(tmp_path / "d", good(**replace))
    assert refusal(directory) == message.format(d=directory)


def test_an_empty_set_is_read_as_empty(tmp_path: Path) -> None:
    """Zero examples, headers alone: nothing is truncated, no label is above 9."""
    empty = {TRAIN_IMAGES: images(0), TRAIN_LABELS: labels([]), TEST_IMAGES: images(0),
             TEST_LABELS: labels([])}  # fmt: skip
    data = load_mnist(write(tmp_path / "d", empty))
    assert (data.train_images.shape, data.test_labels.shape) == ((0, 28, 28, 1), (0,))


def test_a_server_reads_all_four_bytes_of_the_count(tmp_path: Path) -> None:
    # 16,777,217 = 0x01000001: the header alone (the counter never reads the labels).
    directory = write(tmp_path / "d", {TRAIN_LABELS: bytes((0, 0, 8, 1, 1, 0, 0, 1))})
    assert count_train_examples(directory) == 16_777_217
