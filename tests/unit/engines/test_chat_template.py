"""The chat-template rules (`localjudge.engines.chat_template`) on stand-in tokenizers: no model, no files.

The same rules run on every real family's tokenizer in tests/families/.
"""

from __future__ import annotations

from typing import Any

import jinja2
import pytest

from localjudge.engines.chat_template import (
    TEMPLATE_KWARGS,
    common_prefix,
    fold_system,
    head_text,
    render,
    system_role_supported,
)

CHAT = [
    {"role": "system", "content": "SYS"},
    {"role": "user", "content": "U1"},
    {"role": "assistant", "content": "A1"},
    {"role": "user", "content": "U2"},
]


class TemplateTokenizer:
    """Just enough of a tokenizer: `apply_chat_template` renders a jinja template."""

    def __init__(self, template: str) -> None:
        env = jinja2.Environment()
        env.globals["raise_exception"] = self._raise
        env.globals["strftime_now"] = lambda fmt: "today"  # what transformers gives templates
        self.template = env.from_string(template)
        self.seen_kwargs: dict[str, Any] = {}

    @staticmethod
    def _raise(message: str) -> None:
        raise jinja2.TemplateError(message)

    def apply_chat_template(self, messages: list, *, tokenize: bool, add_generation_prompt: bool, **kwargs: Any) -> str:
        assert tokenize is False
        self.seen_kwargs = kwargs
        return self.template.render(messages=messages, add_generation_prompt=add_generation_prompt, **kwargs)


PLAIN = (
    "{% for m in messages %}<{{ m.role }}>{{ m.content }}</>{% endfor %}"
    "{% if add_generation_prompt %}<assistant>{% endif %}"
)
REFUSES = "{% if messages[0].role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}" + PLAIN
DROPS = "{% for m in messages if m.role != 'system' %}<{{ m.role }}>{{ m.content }}</>{% endfor %}"
# Mistral v3 / Nemo style: the system text goes into the last user turn
LAST_USER = (
    "{% set sys = messages[0].content if messages[0].role == 'system' else '' %}"
    "{% set msgs = messages[1:] if sys else messages %}"
    "{% for m in msgs %}{% if m.role == 'user' %}[INST]{{ (sys + ' ') if loop.last and sys }}{{ m.content }}[/INST]"
    "{% else %}{{ m.content }}</s>{% endif %}{% endfor %}"
)


def test_system_role_detected_per_template() -> None:
    assert system_role_supported(TemplateTokenizer(PLAIN))
    assert not system_role_supported(TemplateTokenizer(REFUSES))  # Gemma 2
    assert not system_role_supported(TemplateTokenizer(DROPS))  # silently dropped: fold it ourselves
    assert system_role_supported(TemplateTokenizer(LAST_USER))


def test_fold_puts_the_system_text_first_in_the_first_user_turn() -> None:
    folded = fold_system(CHAT)
    assert folded == [
        {"role": "user", "content": "SYS\n\nU1"},
        {"role": "assistant", "content": "A1"},
        {"role": "user", "content": "U2"},
    ]
    assert CHAT[1]["content"] == "U1", "the caller's messages are not mutated"
    assert fold_system(CHAT[1:]) == CHAT[1:]


@pytest.mark.parametrize("template", [PLAIN, REFUSES, DROPS, LAST_USER])
def test_every_instruction_is_rendered_exactly_once(template: str) -> None:
    tokenizer = TemplateTokenizer(template)
    text = render(tokenizer, CHAT, system_role=system_role_supported(tokenizer))
    for message in CHAT:
        assert text.count(message["content"]) == 1, (template, text)
    assert tokenizer.seen_kwargs == TEMPLATE_KWARGS  # thinking off, fixed date, on every call


@pytest.mark.parametrize("template", [PLAIN, REFUSES, LAST_USER])
def test_head_is_the_rendered_text_before_the_last_user_message(template: str) -> None:
    tokenizer = TemplateTokenizer(template)
    role = system_role_supported(tokenizer)
    text, head = render(tokenizer, CHAT, system_role=role), head_text(tokenizer, CHAT, system_role=role)
    assert text.startswith(head) and "SYS" in head and "A1" in head and "U2" not in head


def test_common_prefix_leaves_every_row_a_token_of_its_own() -> None:
    head = [1, 2, 3, 4]
    assert common_prefix(head, [[1, 2, 3, 4, 9], [1, 2, 3, 4, 8, 7]]) == 4
    assert common_prefix(head, [[1, 2, 3, 9], [1, 2, 3, 4, 5]]) == 3  # a merge at the boundary
    assert common_prefix(head, [[1, 2, 3, 4]]) == 3  # the row's last prompt token stays its own
    assert common_prefix(head, [[5, 1, 2]]) == 0
    assert common_prefix([], [[1, 2]]) == 0


def test_date_is_fixed_for_templates_that_print_today() -> None:
    """Llama 3.2/3.3 headers print `strftime_now` unless a `date_string` is given."""
    dated = "{% if date_string is not defined %}{% set date_string = strftime_now('%d %b %Y') %}{% endif %}" + (
        "Today Date: {{ date_string }}|" + PLAIN
    )
    text = render(TemplateTokenizer(dated), CHAT, system_role=True)
    assert text.startswith(f"Today Date: {TEMPLATE_KWARGS['date_string']}|")
