"""Article numbers across the editions of the Laws: the texts of findings cite the configured edition's.

The engine's texts name articles in the 2018/2023 numbering (dotted: ``7.5.1``); 2009 and 2014 number
sub-articles with letters (``7.4 a``, ``7.5 a``) and have no Guidelines. :func:`cite` gives the article of
the configured edition, and :func:`cite_all` rewrites every 2018-style article in a text.
"""

from __future__ import annotations

import re

#: 2018/2023 article -> (2014, 2009); None where the edition has no such provision
_EARLIER: dict[str, tuple[str | None, str | None]] = {
    "3.7.5.1": ("3.7 e", "3.7 e"),
    "4.3.1": ("4.3 a", "4.3 a"),
    "4.3.2": ("4.3 b", "4.3 b"),
    "4.3.3": ("4.3 c", "4.3 c"),
    "4.4.2": ("4.4 b", "4.4 b"),
    "4.4.4": ("4.4 d", "4.4 d"),
    "4.7.1": ("4.7 a", "4.6 a"),
    "4.7.2": ("4.7 b", "4.6 b"),
    "4.7.3": ("4.7 c", "4.6 c"),
    "6.2.1": ("6.2 a", "6.7 a"),
    "6.2.1.2": ("6.2 a", "6.7 a"),
    "6.2.2": ("6.2 a", "6.7 a"),
    "6.2.3": ("6.2 b", "6.7 b"),
    "6.2.4": ("6.2 c", "6.7 c"),
    "6.2.5": ("6.2 d", "4.2"),
    "6.10.2": ("6.10 b", "6.10 b"),
    "6.11.2": ("6.12 b", "6.12 b"),
    "7.2.1": ("7.2", "7.1"),
    "7.2.2": ("7.3", "7.2"),
    "7.5.1": ("7.5 a", "7.4 a"),
    "7.5.2": ("7.5 a", "7.4 a"),
    "7.5.3": ("6.2 c", "6.7 c"),
    "7.5.4": ("4.1", "4.1"),
    "7.5.5": ("7.5 b", "7.4 b"),
    "7.6": ("7.6", "7.5"),
    "7.1": ("7.1", "6.13"),
}

_ARTICLE = re.compile(r"(?<![\w.])(\d{1,2}\.\d{1,2}(?:\.\d{1,2}){0,2})(?![\w.])")


def cite(article: str, edition: int) -> str:
    """*article* (2018/2023 numbering) in *edition*'s numbering (itself when unknown or from 2018)."""
    if edition >= 2018:
        return article
    earlier = _EARLIER.get(article)
    if earlier is None:
        return article
    found = earlier[0] if edition == 2014 else earlier[1]
    return found if found is not None else article


def cite_all(text: str, edition: int) -> str:
    """Every 2018-style article number in *text* in *edition*'s numbering (mapped ones only)."""
    if edition >= 2018:
        return text
    return _ARTICLE.sub(lambda m: cite(m.group(1), edition) if m.group(1) in _EARLIER else m.group(1), text)
