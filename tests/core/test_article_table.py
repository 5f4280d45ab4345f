"""docs/architecture.md "From article to code": every rules-spec §5.2 code once, pointing at code that exists.

The §5.2 codes come from ``../shared/docs/rules-spec.md`` when it is there, else from the code table
(:func:`boardd.core.laws.codes.irregularity_codes`); the two must agree when both are present.
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections import Counter
from pathlib import Path

import pytest

from boardd.core.laws.codes import code_info, irregularity_codes

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
SPEC = ROOT.parent / "shared" / "docs" / "rules-spec.md"
#: A code whose name only the recogniser gives (PositionIndex._partial_code): the named engine function passes it on.
FROM_RECOGNISER = {"EN_PASSANT_INCOMPLETE_AT_PRESS"}
ROW = re.compile(r"^\| `(?P<code>[^`]+)` \| (?P<arts>[^|]*) \| `(?P<module>[^`]+)` \| `(?P<function>[^`]+)` \|", re.M)


def _spec_codes() -> list[str]:
    if not SPEC.exists():
        return list(irregularity_codes())
    text = SPEC.read_text(encoding="utf-8")
    section = text[text.index("### 5.2 Irregularity codes"):text.index("### 5.3")]
    return re.findall(r"^\| `([^`]+)` \|", section, re.M)


def _rows() -> list[re.Match[str]]:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## From article to code"):]
    section = section[:section.index("\n## ")] if "\n## " in section else section
    return list(ROW.finditer(section))


def test_the_spec_and_the_code_table_agree_on_the_codes() -> None:
    assert _spec_codes() == list(irregularity_codes())


def test_every_code_of_5_2_appears_exactly_once() -> None:
    codes = _spec_codes()
    assert len(codes) == 45
    counts = Counter(m["code"] for m in _rows())
    assert sorted(counts) == sorted(codes)
    assert all(n == 1 for n in counts.values()), [c for c, n in counts.items() if n > 1]


@pytest.mark.parametrize("row", _rows(), ids=lambda m: m["code"])
def test_the_named_module_and_function_exist_and_judge_the_code(row: re.Match[str]) -> None:
    code = row["code"].removesuffix("/<subtype>")
    path = ROOT / row["module"]
    assert path.is_file(), path
    module = importlib.import_module(".".join(path.relative_to(ROOT).with_suffix("").parts))
    owner: object = module
    for part in row["function"].split("."):
        owner = getattr(owner, part)
    assert callable(owner)
    source = inspect.getsource(owner)  # type: ignore[arg-type]
    if code in FROM_RECOGNISER:
        recognizer = importlib.import_module("boardd.core.recognizer")
        assert f'"{code}"' in inspect.getsource(recognizer.PositionIndex._partial_code)
    else:
        assert f'"{code}"' in source, (code, row["function"])
    arts = ", ".join(code_info(code, 2023).articles) or "—"
    assert row["arts"].strip() == arts
