"""A tiny Qwen2-shaped model and BPE tokenizer, built in code (no hub), for the demo, recipes, tests and the README.

``wai.tiny_model_and_tokenizer()`` is the public way in: a model and tokenizer that stand for yours, so every
snippet of the README (and a first try of the library) runs on a CPU in seconds; it learns nothing useful.

The tokenizer is trained on generated text and carries the Qwen2.5 chat template that ships with
TRL (``trl/chat_templates/qwen2_5.jinja``), so TRL recognises it and swaps in its training template
for ``assistant_only_loss=True`` exactly as it does for the real Qwen2.5 tokenizer. Importing this
module is cheap; torch, transformers and tokenizers load when a builder is called.
"""

from __future__ import annotations

import random
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = ["SPECIAL_TOKENS", "TEMPLATE_TOKENS", "build_tiny_model", "build_tiny_tokenizer", "qwen2_5_chat_template",
           "save_tiny", "template_tokenizer", "tiny_model_and_tokenizer"]

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

# The special tokens each chat template shipped in trl/chat_templates/ writes, as (bos, eos, pad, others), read off
# the templates themselves and the model families' published tokenizer configs. A tiny tokenizer built with them
# renders and tokenizes the template's turns the way the real one does (each marker one token).
_QWEN = (None, "<|im_end|>", "<|endoftext|>", ("<|im_start|>",))
_LLAMA3 = ("<|begin_of_text|>", "<|eot_id|>", "<|finetune_right_pad_id|>",
           ("<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>", "<|python_tag|>"))
TEMPLATE_TOKENS: dict[str, tuple[str | None, str, str, tuple[str, ...]]] = {
    "qwen2_5": _QWEN,
    "qwen3": _QWEN,
    "llama3": _LLAMA3,
    "llama3_1": _LLAMA3,
    "llama3_2": _LLAMA3,
    "gptoss": (None, "<|return|>", "<|endoftext|>",
               ("<|start|>", "<|channel|>", "<|message|>", "<|end|>", "<|call|>", "<|constrain|>")),
    "deepseekv3": ("<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<｜▁pad▁｜>",
                   ("<｜User｜>", "<｜Assistant｜>", "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>",
                    "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>", "<｜tool▁outputs▁begin｜>",
                    "<｜tool▁outputs▁end｜>", "<｜tool▁output▁begin｜>", "<｜tool▁output▁end｜>")),
    "gemma3": ("<bos>", "<end_of_turn>", "<pad>", ("<start_of_turn>", "<start_of_image>")),
    "phi3_5": (None, "<|endoftext|>", "<|placeholder1|>", ("<|system|>", "<|user|>", "<|assistant|>", "<|end|>")),
}

_WORDS = ["order", "refund", "cancel", "reservation", "customer", "account", "balance", "ticket", "status", "shipping", "address", "the", "a", "an", "is", "was", "will", "please", "thanks", "sorry", "yes", "no", "can", "cannot", "your", "my", "our", "of", "to", "for", "with", "on", "in", "tool", "call", "result", "error", "found", "not", "ok", "done", "answer", "number", "total", "price", "item", "items", "day", "days", "hello", "hi", "help", "check", "lookup", "update", "delete", "create", "send", "email", "phone", "date", "time", "today", "tomorrow", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "zero", "plus", "minus", "equals", "what", "how", "why", "when"]

_TEMPLATE_TEXT = (
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n{u}<|im_end|>\n"
    "<|im_start|>assistant\n<tool_call>\n{{\"name\": \"{tool}\", \"arguments\": {{\"order_id\": \"{oid}\"}}}}"
    "\n</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\n{r}\n</tool_response><|im_end|>\n"
    "<|im_start|>assistant\n{a}<|im_end|>\n"
)


def qwen2_5_chat_template() -> str:
    """The Qwen2.5 chat template as TRL ships it (so TRL's training-template swap recognises it)."""
    return resources.files("trl").joinpath("chat_templates/qwen2_5.jinja").read_text(encoding="utf-8")


def _corpus(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    lines = []
    for _ in range(n):
        words = lambda k: " ".join(rng.choice(_WORDS) for _ in range(k))
        lines.append(_TEMPLATE_TEXT.format(u=words(8), tool=rng.choice(["lookup", "refund", "cancel"]),
                                           oid=f"A{rng.randint(0, 99)}", r=words(6), a=words(10)))
        lines.append("0123456789 {}[]\":,._-+=*/ " + words(12))
    return lines


def build_tiny_tokenizer(vocab_size: int = 512, seed: int = 0) -> Any:
    """A byte-level BPE tokenizer trained in code, with Qwen2.5's special tokens and chat template."""
    tokenizer = _bpe_tokenizer(vocab_size, seed, bos=None, eos="<|im_end|>", pad="<|endoftext|>",
                               others=("<|im_start|>",))
    tokenizer.chat_template = qwen2_5_chat_template()
    return tokenizer


def template_tokenizer(name: str, vocab_size: int = 512, seed: int = 0) -> Any:
    """A tiny BPE tokenizer carrying the chat template TRL ships as ``trl/chat_templates/<name>.jinja`` and that
    family's special tokens (TEMPLATE_TOKENS), so TRL recognises the template exactly as it does the real one."""
    if name not in TEMPLATE_TOKENS:
        raise ValueError(f"no special tokens known for the {name!r} template; known: {sorted(TEMPLATE_TOKENS)}")
    bos, eos, pad, others = TEMPLATE_TOKENS[name]
    tokenizer = _bpe_tokenizer(vocab_size, seed, bos=bos, eos=eos, pad=pad, others=others)
    tokenizer.chat_template = resources.files("trl").joinpath(f"chat_templates/{name}.jinja").read_text(
        encoding="utf-8")
    return tokenizer


def _bpe_tokenizer(vocab_size: int, seed: int, *, bos: str | None, eos: str, pad: str,
                   others: tuple[str, ...]) -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    special = list(dict.fromkeys([pad, *([bos] if bos else []), *others, eos]))  # Qwen2.5: SPECIAL_TOKENS' order
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=special,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    backend.train_from_iterator(_corpus(400, seed), trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=backend, bos_token=bos, eos_token=eos, pad_token=pad,
                                   additional_special_tokens=list(others))


def build_tiny_model(tokenizer: Any, *, hidden_size: int = 32, layers: int = 2, seed: int = 0) -> Any:
    """A randomly initialised 2-layer Qwen2 causal LM sized to `tokenizer` (a few hundred k params)."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    config = Qwen2Config(
        vocab_size=len(tokenizer), hidden_size=hidden_size, intermediate_size=hidden_size * 2,
        num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=2,
        max_position_embeddings=2048, tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
    )
    model = Qwen2ForCausalLM(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    return model


def tiny_model_and_tokenizer(*, seed: int = 0) -> tuple[Any, Any]:
    """(model, tokenizer): a randomly initialised 2-layer Qwen2 causal LM and its BPE tokenizer with Qwen2.5's chat
    template, built in code (no download, a few seconds on a CPU). They stand in for your own model and tokenizer
    where a snippet needs one; TRL's trainers take them as they take any causal LM and tokenizer."""
    tokenizer = build_tiny_tokenizer(seed=seed)
    return build_tiny_model(tokenizer, seed=seed), tokenizer


def save_tiny(path: str | Path, *, seed: int = 0) -> Path:
    """Build both and save them to `path` (loadable with from_pretrained, e.g. by torchrun workers)."""
    target = Path(path)
    tokenizer = build_tiny_tokenizer(seed=seed)
    model = build_tiny_model(tokenizer, seed=seed)
    tokenizer.save_pretrained(target)
    model.save_pretrained(target)
    return target
