"""docs/architecture.md: a room reaches another room only through the façade (``self.e.<room>``), and then only
through its interface: no room calls (or reads) a private helper of another (``self.e.<room>._name``).

Before branch noclock: ``WhoseChange`` (``moved_twice``, ``enter_twice``) called ``Recognition``'s
``_reply_started``, ``_index_after``, ``_not_completed_yet`` and ``_reply_segment``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import boardd.core.engine as engine_package

ENGINE = Path(engine_package.__file__).parent


def _private_reaches(path: Path) -> list[str]:
    """``self.e.<room>._<name>`` in *path*, as ``line: room._name``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")):
            continue
        room = node.value
        if isinstance(room, ast.Attribute) and isinstance(room.value, ast.Attribute) and room.value.attr == "e" \
                and isinstance(room.value.value, ast.Name) and room.value.value.id == "self":
            found.append(f"{path.name}:{node.lineno}: {room.attr}.{node.attr}")
    return found


def test_no_room_reaches_into_another_rooms_private_helpers() -> None:
    modules = sorted(ENGINE.glob("*.py"))
    assert any(p.name == "whose_change.py" for p in modules)
    assert [reach for path in modules for reach in _private_reaches(path)] == []


def test_the_check_sees_a_private_reach(tmp_path: Path) -> None:
    """The check itself: the form it looks for is found (a guard against a check that can never fail)."""
    module = tmp_path / "room.py"
    module.write_text("class R:\n    def f(self):\n        return self.e.recognition._index_after(1, 2)\n",
                      encoding="utf-8")
    assert _private_reaches(module) == ["room.py:3: recognition._index_after"]
