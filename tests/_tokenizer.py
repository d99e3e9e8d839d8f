"""A small byte-level BPE tokenizer trained locally on the repository's own code.

No model hub is reachable from the test machines, yet several tests (token-exact
rollouts, char->token mapping, the TRL end-to-end run) need a real tokenizer whose
tokens cross word boundaries, carry leading spaces (``Ġ``) and split multibyte UTF-8
characters the way production byte-level BPE tokenizers (GPT-2, Qwen, Llama-3) do.
This module trains one with the ``tokenizers`` library:

- corpus: the text of ``tasks/**/*.yaml`` and ``codegym/*.py`` (sorted, so the corpus
  and therefore the merges are deterministic for a given tree), plus a fixed snippet
  with emoji/CJK so that a few multibyte merges exist;
- byte-level pre-tokenizer and decoder, ~2000 tokens, special tokens
  ``<|pad|>``, ``<|bos|>``, ``<|eos|>`` (ids 0, 1, 2);
- cached on disk under ``~/.cache/codegym-test-tokenizer/<hash>/tokenizer.json`` where the
  hash covers the corpus, the training parameters and the ``tokenizers`` version, so a
  second call costs a file read. ``CODEGYM_TEST_TOKENIZER_CACHE`` overrides the folder.

Public helpers: :func:`code_tokenizer` (a ``tokenizers.Tokenizer``) and
:func:`hf_code_tokenizer` (a ``transformers.PreTrainedTokenizerFast`` wrapper with a
simple chat template; skips the calling test when transformers is absent).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
VOCAB_SIZE = 2000
SPECIAL_TOKENS = ["<|pad|>", "<|bos|>", "<|eos|>"]
# Bounded so that training stays well under a second or two on a loaded machine.
MAX_CORPUS_CHARS = 1_500_000
KEEP_CACHED = 4  # cache entries (one per corpus version) kept on disk

# Multibyte text so that merges inside UTF-8 sequences exist (the char->token mapping
# tests need tokens that end in the middle of a character).
_EXTRA = (
    "# 注释: 计算两数之和 🚀🚀 emoji ✓ café naïve Ω ≤ ≥ → ←\n"
    "print('你好, 世界')  # 🐍 python\n"
    "s = \"日本語のテキスト\"  # 😀😀😀\n"
) * 20

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "<|bos|>{{ message['role'] }}\n{{ message['content'] }}<|eos|>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|bos|>assistant\n{% endif %}"
)


def _corpus_files() -> list[Path]:
    files = sorted((REPO / "tasks").glob("**/*.yaml")) + sorted((REPO / "codegym").glob("*.py"))
    return [p for p in files if p.is_file()]


def _corpus() -> list[str]:
    texts: list[str] = []
    total = 0
    for path in _corpus_files():
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if total + len(text) > MAX_CORPUS_CHARS:
            text = text[: MAX_CORPUS_CHARS - total]
        texts.append(text)
        total += len(text)
        if total >= MAX_CORPUS_CHARS:
            break
    texts.append(_EXTRA)
    return texts


def _cache_root(cache_dir: str | os.PathLike[str] | None) -> Path:
    if cache_dir is not None:
        return Path(cache_dir)
    env = os.environ.get("CODEGYM_TEST_TOKENIZER_CACHE")
    if env:
        return Path(env)
    return Path.home() / ".cache" / "codegym-test-tokenizer"


def _train(texts: list[str]) -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    # trim_offsets=False keeps the leading space inside a token's offsets.
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        min_frequency=2,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer=trainer, length=len(texts))
    return tok


_MEMO: dict[Path, Any] = {}


def code_tokenizer(cache_dir: str | os.PathLike[str] | None = None) -> Any:
    """Return the locally trained byte-level BPE ``tokenizers.Tokenizer`` (cached on disk)."""
    import tokenizers
    from tokenizers import Tokenizer

    texts = _corpus()
    h = hashlib.sha256()
    h.update(f"v1|{VOCAB_SIZE}|{SPECIAL_TOKENS}|{tokenizers.__version__}".encode())
    for t in texts:
        h.update(hashlib.sha256(t.encode("utf-8")).digest())
    folder = _cache_root(cache_dir) / h.hexdigest()[:20]
    path = folder / "tokenizer.json"
    if path in _MEMO:
        return _MEMO[path]
    if path.exists():
        try:
            tok = Tokenizer.from_file(str(path))
            _MEMO[path] = tok
            return tok
        except Exception:  # corrupt cache entry: retrain below
            pass
    tok = _train(texts)
    folder.mkdir(parents=True, exist_ok=True)
    # Atomic write: several pytest processes may train concurrently.
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
    os.close(fd)
    tok.save(tmp)
    os.replace(tmp, path)
    _MEMO[path] = tok
    _prune(folder.parent, keep=KEEP_CACHED)
    return tok


def _prune(root: Path, keep: int) -> None:
    """Drop all but the ``keep`` newest cache entries: the corpus changes with the tree,
    so old entries would pile up during development."""
    import shutil

    try:
        entries = sorted((p for p in root.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return
    for old in entries[keep:]:
        shutil.rmtree(old, ignore_errors=True)


def hf_code_tokenizer(cache_dir: str | os.PathLike[str] | None = None) -> Any:
    """``transformers.PreTrainedTokenizerFast`` around :func:`code_tokenizer`, with a chat template.

    Skips the calling test (``pytest.skip``) when transformers cannot be imported.
    """
    try:
        from transformers import PreTrainedTokenizerFast
    except Exception as exc:  # pragma: no cover - depends on the environment
        import pytest

        pytest.skip(f"transformers not importable: {exc}")
    tok = code_tokenizer(cache_dir)
    hf = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<|bos|>",
        eos_token="<|eos|>",
        pad_token="<|pad|>",
        padding_side="left",
    )
    hf.chat_template = CHAT_TEMPLATE
    return hf
