"""Remove secrets from text before it is sent to a language model.

Applied to everything a prompt carries (intention, context, answers, repository summary): API
keys of the common providers, AWS keys, JWTs, bearer tokens, private key blocks, URLs with
credentials, `password=…`-style assignments, and long opaque tokens.
"""

from __future__ import annotations

import re

__all__ = ["redact"]

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, flags), replacement)
    for pattern, flags, replacement in (
        (
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----",
            re.DOTALL,
            "[REDACTED_PRIVATE_KEY]",
        ),
        (r"sk-ant-[A-Za-z0-9_\-]{20,}", 0, "[REDACTED_API_KEY]"),
        (r"sk-(?:proj-|or-v1-)?[A-Za-z0-9_\-]{20,}", 0, "[REDACTED_API_KEY]"),
        (r"gh[pousr]_[A-Za-z0-9]{30,}", 0, "[REDACTED_TOKEN]"),
        (r"xox[abprs]-[A-Za-z0-9-]{10,}", 0, "[REDACTED_TOKEN]"),
        (r"AKIA[0-9A-Z]{16}", 0, "[REDACTED_AWS_KEY]"),
        (r"eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+", 0, "[REDACTED_JWT]"),
        (r"(?i)bearer\s+[A-Za-z0-9\-_.=~+/]+", 0, "Bearer [REDACTED]"),
        (r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s:@]+:[^/\s@]+@", 0, r"\1[REDACTED]@"),
        (
            r"(?i)\b([A-Za-z0-9_]*(?:password|passwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key)"
            r"[A-Za-z0-9_]*)(\s*[:=]\s*)(\"[^\"]*\"|'[^']*'|[^\s,;]+)",
            0,
            r"\1\2[REDACTED]",
        ),
        (r"(?<![A-Za-z0-9/+=_-])[A-Za-z0-9_\-]{40,}(?![A-Za-z0-9/+=_-])", 0, "[REDACTED_TOKEN]"),
    )
)


def redact(text: str) -> str:
    """Return `text` with secrets replaced by `[REDACTED…]` markers."""
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text
