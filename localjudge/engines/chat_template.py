"""Rendering localjudge's chat prompts with a model family's own chat template.

Every prompt is `[system, (example user, example answer)..., user]`. Templates differ in how
they take that, and these rules make each family see every instruction exactly once:

- **No system role** (Gemma 2 raises `System role not supported`; some templates drop it
  silently): the system text is folded into the first user turn, followed by a blank line —
  what Gemma 3's own template does with a system message. Found once per tokenizer by
  rendering a probe chat (`system_role_supported`).
- **Template switches**, passed to every template (ignored by those that do not read them):
  `enable_thinking=False` (Qwen3 would otherwise open a `<think>` block before the JSON) and
  a fixed `date_string` (Llama 3.x headers print today's date; a prompt that changes with the
  calendar would change results from one day to the next).
- **Tokens:** the rendered text is tokenized without adding special tokens, as
  `apply_chat_template(tokenize=True)` does: the template's own BOS is the only one.
- **Shared prefix:** the part of a prompt before its last user message (instructions and
  worked examples) is found by rendering the same chat with a sentinel as the last message
  and cutting the text where the sentinel starts. That holds for templates that move the
  system text next to the last user turn (Mistral v3, Mistral-Nemo) and for those that render
  earlier assistant turns differently once another user turn follows (Qwen3).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from localjudge.judge import ChatPrompt

TEMPLATE_KWARGS: dict[str, Any] = {"enable_thinking": False, "date_string": "26 Jul 2024"}
_SENTINEL = "LOCALJUDGE-SENTINEL-7d1f0c"
_PROBE = ("LOCALJUDGE-PROBE-SYSTEM", "LOCALJUDGE-PROBE-USER")


def system_role_supported(tokenizer: Any) -> bool:
    """True when the tokenizer's template renders a system message, once, without error."""
    probe = [{"role": "system", "content": _PROBE[0]}, {"role": "user", "content": _PROBE[1]}]
    try:
        text = tokenizer.apply_chat_template(probe, tokenize=False, add_generation_prompt=True, **TEMPLATE_KWARGS)
    except Exception:  # noqa: BLE001 - jinja raises TemplateError (or anything) for an unsupported role
        return False
    return isinstance(text, str) and text.count(_PROBE[0]) == 1


def fold_system(prompt: ChatPrompt) -> ChatPrompt:
    """The system text moved to the start of the first user turn (blank line between)."""
    if not prompt or prompt[0]["role"] != "system":
        return list(prompt)
    system, rest = prompt[0]["content"], [dict(m) for m in prompt[1:]]
    if rest and rest[0]["role"] == "user":
        rest[0]["content"] = f"{system}\n\n{rest[0]['content']}"
        return rest
    return [{"role": "user", "content": system}, *rest]


def render(tokenizer: Any, prompt: ChatPrompt, *, system_role: bool) -> str:
    """The prompt as the model sees it: its own template, the rules above applied."""
    chat = prompt if system_role else fold_system(prompt)
    return tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True, **TEMPLATE_KWARGS)


def _tokens(tokenizer: Any, text: str) -> list[int]:
    return list(tokenizer(text, add_special_tokens=False).input_ids)


def prompt_ids(tokenizer: Any, prompt: ChatPrompt, *, system_role: bool) -> list[int]:
    """The prompt's token ids: the rendered text with no special tokens added, as
    `apply_chat_template(tokenize=True)` gives (the template's own BOS is the only one)."""
    return _tokens(tokenizer, render(tokenizer, prompt, system_role=system_role))


def head_text(tokenizer: Any, prompt: ChatPrompt, *, system_role: bool) -> str:
    """The rendered text before the prompt's last user message ('' when it cannot be found)."""
    chat = [*prompt[:-1], {"role": "user", "content": _SENTINEL}]
    text = render(tokenizer, chat, system_role=system_role)
    cut = text.find(_SENTINEL)
    return text[:cut] if cut > 0 else ""


def head_ids(tokenizer: Any, prompt: ChatPrompt, *, system_role: bool) -> list[int]:
    """Token ids of `head_text` (a tokenizer may merge across the cut: see `common_prefix`)."""
    return _tokens(tokenizer, head_text(tokenizer, prompt, system_role=system_role))


def common_prefix(head: Sequence[int], rows: Sequence[Sequence[int]]) -> int:
    """Length of the longest start of `head` that every row begins with, leaving each row
    at least one token of its own (the cache must not hold a row's last prompt token)."""
    length = len(head)
    for row in rows:
        n = 0
        limit = min(length, len(row) - 1)
        while n < limit and row[n] == head[n]:
            n += 1
        length = n
    return length


class TemplatePrompts:
    """What an engine's judge renders with its model's own template: `render` and `prompt_ids`
    of a chat prompt, by the rules above. The judge sets `tokenizer` and `system_role`."""

    tokenizer: Any
    system_role: bool

    def render(self, prompt: ChatPrompt) -> str:
        """The prompt as the model sees it: its chat template, the rules of this module."""
        return render(self.tokenizer, prompt, system_role=self.system_role)

    def prompt_ids(self, prompt: ChatPrompt) -> list[int]:
        """The prompt's token ids (see `prompt_ids`)."""
        return prompt_ids(self.tokenizer, prompt, system_role=self.system_role)
