"""Articles are cited in the numbering of the configured edition (audit: 7.5.4 under 2014, 6.11 for a pause
under 2009/2014, Appendix A rules of unsupervised play in supervised games, Guidelines III.3.1 for blitz).

2009 and 2014 number their sub-articles with letters (``7.4 b``, ``6.12 b``); 2018 and 2023 with dotted numbers
(``7.5.5``) and have the Guidelines (``III.3.1``). Every article of the code table, and every article number
in the text and suggestion of every finding raised in the §8 scenarios run under each edition, must be of its
edition's form.
"""

from __future__ import annotations

import logging
import re

import pytest

from boardd.core.laws.codes import code_info, known_codes
from boardd.core.settings import EDITIONS
from tests.core.test_scenarios import SCENARIOS, run

_DOTTED = re.compile(r"(?<![\w.])(\d{1,2}\.\d{1,2}\.\d{1,2})(?![\w.])")
_LETTERED = re.compile(r"(?<![\w.])(\d{1,2}\.\d{1,2} [a-f])\b")


def _wrong_form(edition: int, text: str) -> list[str]:
    if edition < 2018:
        bad = _DOTTED.findall(text)
        bad += re.findall(r"\bIII\.\d(?:\.\d)*", text)
        return bad
    return _LETTERED.findall(text)


@pytest.mark.parametrize("edition", EDITIONS)
def test_the_code_table_cites_articles_of_the_edition(edition: int) -> None:
    wrong = {code: bad for code in known_codes()
             if (bad := _wrong_form(edition, " ; ".join(code_info(code, edition).articles)))}
    assert not wrong


@pytest.mark.parametrize("edition", EDITIONS)
def test_findings_cite_articles_of_the_edition(edition: int, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR)
    wrong: dict[str, list[str]] = {}
    for name, scn in SCENARIOS.items():
        if scn.xfail:
            continue
        try:
            r = run(scn, edition=edition)
        except AssertionError:
            continue  # a scenario whose set-up only holds in its own edition
        for irr in r.raised:
            text = " ; ".join((*irr.articles, irr.suggestion.text, *irr.suggestion.constraints))
            if bad := _wrong_form(edition, text):
                wrong[f"{name}:{irr.code}"] = bad
    assert not wrong


def test_the_check_finds_wrong_forms() -> None:
    assert _wrong_form(2014, "reinstate + illegal-move penalty (7.5.4, 7.5.5)") == ["7.5.4", "7.5.5"]
    assert _wrong_form(2014, "Guidelines III.3.1") == ["III.3.1"]
    assert _wrong_form(2023, "see 7.4 b") == ["7.4 b"]
    assert _wrong_form(2023, "7.5.5; A.5.3") == []
