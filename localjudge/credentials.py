"""One rule for secrets: an API key, a store URL's password or token, wherever a message may show one.

- **A credential with a control character is refused** (`check_credential`), in one line that
  does not show it: a key read whole from a file or a container secret ends in a newline, which
  an HTTP header refuses in an error quoting the header (the key with it).
- **Every form a credential takes in a message is redacted** (`redact`): its raw text, its
  escaped repr (``'sk-...\\n'``, ``b'Bearer sk-...'``), JSON's escaping and its URL-encoded
  forms (``%2B``, ``+`` for a space) are each replaced by ``***``.
- **A URL is shown without its secrets** (`shown_url`): the userinfo (``user:password@``) and
  the value of every query parameter that names a secret (``password``, ``sslpassword``, any
  ``*token*``, ``*secret*``, ``*key*``...) become ``***``, wherever the URL lies in a text.
  `url_secrets` gives those values, so that a driver's message quoting one alone is redacted too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from urllib.parse import parse_qsl, quote, quote_plus, unquote, unquote_plus, urlsplit

REDACTED = "***"
# Query parameters whose value is a secret (libpq's password and sslpassword, tokens, keys...).
SECRET_PARAM = re.compile(r"pass|pwd|secret|token|key|auth|credential|signature", re.IGNORECASE)
_URL = re.compile(r"[A-Za-z][\w+.-]*://[^\s'\"<>]+")
_PARAM = re.compile(r"(?P<name>[\w.-]+)=(?P<value>[^&#\s'\"]*)")


class CredentialError(ValueError):
    """A credential localjudge will not send: it holds a control character (shown nowhere)."""


def check_credential(value: str, where: str) -> str:
    """`value` unchanged, or a `CredentialError` naming `where` (never the value) when it holds a
    control character: a newline or carriage return (a key read whole from a file), a NUL..."""
    bad = next((c for c in value if ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0), None)
    if bad is not None:
        raise CredentialError(f"{where}: the credential holds a control character ({bad!r}; a key read whole "
                              "from a file ends in a newline): strip it and try again (the value is not shown)")
    return value


def forms(secret: str) -> list[str]:
    """Every way `secret` may be written in a message, longest first: raw, repr- and JSON-escaped
    (of the text and of its UTF-8 bytes), URL-encoded (``quote`` and ``quote_plus``) and decoded."""
    if not secret:
        return []
    found = {secret, repr(secret)[1:-1], ascii(secret)[1:-1], json.dumps(secret)[1:-1],
             json.dumps(secret, ensure_ascii=False)[1:-1], repr(secret.encode("utf-8", "replace"))[2:-1],
             quote(secret, safe=""), quote(secret), quote_plus(secret), unquote(secret), unquote_plus(secret)}
    return sorted((f for f in found if f), key=lambda f: (-len(f), f))


def redact(text: str, secrets: Iterable[str | None], *, urls: bool = True) -> str:
    """`text` with every form (`forms`) of each secret replaced by ``***``; with `urls`, every URL
    in it shown without its secrets too (`shown_url`: for messages, not for a judge's answers)."""
    for form in sorted({f for s in secrets if s for f in forms(s)}, key=lambda f: (-len(f), f)):
        text = text.replace(form, REDACTED)
    return _URL.sub(lambda m: shown_url(m.group(0)), text) if urls else text


def url_secrets(url: str) -> list[str]:
    """The secrets written in `url`: its userinfo's password (or a user name alone: a token), and
    the value of each query parameter that names a secret; each as written and decoded."""
    found: list[str] = []
    try:
        parts = urlsplit(url)
        netloc, query = parts.netloc, parts.query
    except ValueError:
        netloc, query = "", ""
    userinfo = netloc.rpartition("@")[0] if "@" in netloc else ""
    if userinfo:
        user, colon, password = userinfo.partition(":")
        found += [password] if colon else [user]
    for match in _PARAM.finditer(query):
        if SECRET_PARAM.search(match["name"]):
            found.append(match["value"])
    try:
        found += [value for name, value in parse_qsl(query, keep_blank_values=True) if SECRET_PARAM.search(name)]
    except ValueError:
        pass
    return [s for s in dict.fromkeys(found) if s]


def shown_url(url: str) -> str:
    """`url` as a message may show it: its userinfo (``user:password@``) as ``user:***@`` (a user
    alone, which may be a token, as ``***@``), each secret query parameter's value as ``***``."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return _params_shown(url)
    cut = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    host, tail = rest[:cut], rest[cut:]
    if "@" in host:
        userinfo, _, where = host.rpartition("@")
        user, colon, _ = userinfo.partition(":")
        host = f"{user}:{REDACTED}@{where}" if colon else f"{REDACTED}@{where}"
    return f"{scheme}{sep}{host}{_params_shown(tail)}"


def _params_shown(text: str) -> str:
    return _PARAM.sub(lambda m: f"{m['name']}={REDACTED}" if SECRET_PARAM.search(m["name"]) and m["value"]
                      else m.group(0), text)


__all__ = ["REDACTED", "CredentialError", "check_credential", "forms", "redact", "shown_url", "url_secrets"]
