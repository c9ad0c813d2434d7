"""Public chat templates of tool-calling models TRL does not ship, as text files under tests/templates/, each with a
tiny tokenizer carrying its special tokens (built in code, no hub).

Every template is the model publisher's own text, as vendored by llama.cpp (models/templates/, MIT licensed
repository) in the source distribution of llama-cpp-python 0.3.36 on PyPI
(`pip download --no-deps --no-binary :all: llama-cpp-python==0.3.36`, path
`vendor/llama.cpp/models/templates/<file>`). The template text comes from each model's tokenizer_config.json /
chat_template.jinja and is distributed under that model's license, noted per entry (tests/templates/README.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

FOLDER = Path(__file__).parents[1] / "templates"
SOURCE = "llama-cpp-python 0.3.36 (PyPI sdist), vendor/llama.cpp/models/templates/"


@dataclass(frozen=True)
class Zoo:
    """One public template: its file here, the file it was copied from (under SOURCE), the model's license, and the
    special tokens (bos, eos, pad, others) of the model's tokenizer that the template writes."""

    file: str
    source: str
    license: str
    bos: str | None
    eos: str
    pad: str
    others: tuple[str, ...]


_MISTRAL = ("[INST]", "[/INST]", "[TOOL_CALLS]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]", "[TOOL_RESULTS]",
            "[/TOOL_RESULTS]")
_GLM = ("[gMASK]", "<sop>", "<|system|>", "<|user|>", "<|assistant|>", "<|observation|>", "<think>", "</think>",
        "<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", "<tool_response>",
        "</tool_response>")
_GRANITE = ("<|start_of_role|>", "<|end_of_role|>")

ZOO: dict[str, Zoo] = {
    "mistral_nemo": Zoo("mistral_nemo.jinja", "mistralai-Mistral-Nemo-Instruct-2407.jinja", "Apache-2.0",
                        "<s>", "</s>", "<pad>", _MISTRAL),
    "mistral_small_3_2": Zoo("mistral_small_3_2.jinja", "Mistral-Small-3.2-24B-Instruct-2506.jinja", "Apache-2.0",
                             "<s>", "</s>", "<pad>",
                             (*_MISTRAL, "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[TOOL_CONTENT]", "[CALL_ID]",
                              "[ARGS]")),
    "hermes3": Zoo("hermes3.jinja", "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja",
                   "Llama 3.1 Community License", "<|begin_of_text|>", "<|im_end|>", "<|finetune_right_pad_id|>",
                   ("<|im_start|>",)),
    "qwen3_coder": Zoo("qwen3_coder.jinja", "Qwen3-Coder.jinja", "Apache-2.0",
                       None, "<|im_end|>", "<|endoftext|>", ("<|im_start|>",)),
    "granite3_3": Zoo("granite3_3.jinja", "ibm-granite-granite-3.3-2B-Instruct.jinja", "Apache-2.0",
                      None, "<|end_of_text|>", "<|pad|>", (*_GRANITE, "<|tool_call|>")),
    "granite4_0": Zoo("granite4_0.jinja", "ibm-granite-granite-4.0.jinja", "Apache-2.0",
                      None, "<|end_of_text|>", "<|pad|>", _GRANITE),
    "command_r_plus": Zoo("command_r_plus.jinja", "CohereForAI-c4ai-command-r-plus-tool_use.jinja", "CC-BY-NC-4.0",
                          "<BOS_TOKEN>", "<|END_OF_TURN_TOKEN|>", "<PAD>",
                          ("<|START_OF_TURN_TOKEN|>", "<|SYSTEM_TOKEN|>", "<|USER_TOKEN|>", "<|CHATBOT_TOKEN|>")),
    "glm4_6": Zoo("glm4_6.jinja", "GLM-4.6.jinja", "MIT", None, "<|endoftext|>", "<|pad|>", _GLM),
    "glm4_7_flash": Zoo("glm4_7_flash.jinja", "GLM-4.7-Flash.jinja", "MIT", None, "<|endoftext|>", "<|pad|>", _GLM),
    "laguna_xs2": Zoo("laguna_xs2.jinja", "poolside-Laguna-XS.2.jinja", "Apache-2.0",
                      None, "〈|EOS|〉", "<|pad|>",
                      ("<system>", "<user>", "<assistant>", "<tool_call>", "</tool_call>")),
    "smollm3": Zoo("smollm3.jinja", "HuggingFaceTB-SmolLM3-3B.jinja", "Apache-2.0",
                   None, "<|im_end|>", "<|endoftext|>", ("<|im_start|>",)),
    "kimi_k2": Zoo("kimi_k2.jinja", "Kimi-K2-Instruct.jinja", "Modified MIT",
                   None, "<|im_end|>", "[PAD]",
                   ("<|im_system|>", "<|im_user|>", "<|im_assistant|>", "<|im_middle|>", "<|tool_calls_section_begin|>",
                    "<|tool_calls_section_end|>", "<|tool_call_begin|>", "<|tool_call_argument_begin|>",
                    "<|tool_call_end|>")),
}


def zoo_template(name: str) -> str:
    return (FOLDER / ZOO[name].file).read_text(encoding="utf-8")


def zoo_tokenizer(name: str, vocab_size: int = 512, seed: int = 0) -> Any:
    """A tiny BPE tokenizer with the model's special tokens and its public chat template."""
    from whileai_train.demos.tiny import _bpe_tokenizer

    entry = ZOO[name]
    tokenizer = _bpe_tokenizer(vocab_size, seed, bos=entry.bos, eos=entry.eos, pad=entry.pad, others=entry.others)
    tokenizer.chat_template = zoo_template(name)
    return tokenizer
