"""The tablet's findings of one board, kept incrementally; the ``delta`` message and how a page applies it. Pure.

The arbiter's sockets get a ``snapshot`` (every board's view) when they connect, then, per board, only what
changed: a ``delta`` (docs/consumers.md, "Tablet socket"). A board message costs the hub the same whatever the
length of the game: the findings it touches are derived again (their status against the state), the incidents
they belong to are folded again (:func:`boardd.consumers.web.incidents.fold` over that incident's findings
only), and the frame carries those findings and incidents, the view's fields that changed and the moves
appended. Nothing walks the game's findings or moves per message.

:class:`Findings` is that state. Its order is the arrival order the full fold used: each finding has a ``pos``
(a counter, taken again when a live ``irregularity`` moves it to the end of the list); the incidents come newest
first by ``last`` (the ``pos`` of their latest finding); the ``log`` is the ``noted`` findings in ``pos`` order.
Findings of the state's ``open_irregularities`` whose details never came (a late joiner) sort after the others.

:func:`apply_delta` is the page's ``applyDelta`` (static/board.js) in Python: the reference of the message,
what the tests and the benches' page models apply.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from boardd.consumers.web.incidents import ACTIVE, SEVERITY_RANK, finding_status, fold, incident_of, incident_root

__all__ = ["LATE", "Findings", "apply_delta", "moves_delta"]

#: ``pos`` of the first finding known only by its id (the state lists it open; its details never came)
LATE = 1_000_000_000

Title = Callable[[str, int | None], str]


@dataclass(slots=True)
class Findings:
    """One board's findings as the tablets were last sent them (flags, incidents), and what changed since."""

    flags: dict[str, dict[str, Any]] = field(default_factory=dict)   # id -> the view's flag (with ``pos``)
    #: ids whose own status asks for action (open, acknowledged) and is newer than the state: a newer state may
    #: close them (older ones take their status from the state's open list: they change only with it)
    active: set[str] = field(default_factory=set)
    open_ids: list[str] = field(default_factory=list)   # the state's open_irregularities
    roots: dict[str, str] = field(default_factory=dict)  # id -> the id of its incident (its primary's)
    groups: dict[str, set[str]] = field(default_factory=dict)  # incident id -> its findings' ids
    incidents: dict[str, dict[str, Any]] = field(default_factory=dict)  # incident id -> the view's incident
    open_rank: dict[str, int] = field(default_factory=dict)  # open incident -> its severity rank
    counter: int = 0
    late: int = LATE
    changed_flags: set[str] = field(default_factory=set)      # since the last message (dropped ones too)
    changed_incidents: set[str] = field(default_factory=set)

    def rank(self) -> int:
        """The highest severity of the open incidents (0: none)."""
        return max(self.open_rank.values(), default=0)

    def update(self, bodies: Mapping[str, dict[str, Any]], touched: Iterable[str], *, moved: Iterable[str] = (),
               state_key: tuple[int, int], open_ids: list[str] | None, dismissed: Mapping[str, object],
               edition: Any, title: Title, key: Callable[[object], tuple[int, int]],
               regroup: Iterable[str] = ()) -> None:
        """Derive again the findings ``touched`` (their body changed: ``bodies`` is the board's), those ``moved``
        to the end (a live message), and, with ``open_ids`` (a new state), every finding the state may change:
        the open ones, before and after, and those whose own status asks for action. ``regroup``: incidents of
        these ids are folded again (a dismissal told or taken back)."""
        moved = set(moved)
        order = list(touched)  # a new finding takes the next place in this order (the board's list's)
        if open_ids is not None:
            order += [*open_ids, *sorted(set(self.open_ids) | self.active)]
            self.open_ids = open_ids
        opened = set(self.open_ids)
        refold = {self.roots.get(i, i) for i in regroup}
        for ident in dict.fromkeys(order):
            body = bodies.get(ident)
            flag = None if body is None and ident not in opened else \
                _derive(ident, body, (state_key, opened), edition=edition, title=title, key=key)
            old = self.flags.get(ident)
            if body is not None and finding_status(body) in ACTIVE and key(body) >= state_key:
                self.active.add(ident)  # its own status holds until a newer state: that state may close it
            else:
                self.active.discard(ident)
            if flag is not None:
                if ident in moved or old is None or (body is not None and old["pos"] >= LATE):
                    if body is None:
                        flag["pos"], self.late = self.late, self.late + 1
                    else:
                        flag["pos"], self.counter = self.counter, self.counter + 1
                else:
                    flag["pos"] = old["pos"]
            if flag == old:
                continue
            self.changed_flags.add(ident)
            if flag is None:
                del self.flags[ident]
            else:
                self.flags[ident] = flag
            if old is None or flag is None or incident_of(old) != incident_of(flag):
                refold |= self._regroup(ident)
            else:
                refold.add(self.roots[ident])
        for root in refold:
            self._fold(root, dismissed)

    def _regroup(self, ident: str) -> set[str]:
        """``ident`` came, went or changed its incident: the findings of its incident find theirs again.

        Whoever's incident changes has ``ident`` on its way to its primary, before or after: it was in
        ``ident``'s incident. Returns the incidents to fold again."""
        old_root = self.roots.get(ident, ident)
        members = set(self.groups.get(old_root, ())) | {ident}
        touched = {old_root}
        for member in members:
            before = self.roots.pop(member, None)
            if before is not None:
                self.groups[before].discard(member)
                if not self.groups[before]:
                    del self.groups[before]
            if member not in self.flags:
                continue
            root = incident_root(member, self.flags)
            self.roots[member] = root
            self.groups.setdefault(root, set()).add(member)
            touched.add(root)
        return touched

    def _fold(self, root: str, dismissed: Mapping[str, object]) -> None:
        members = sorted(self.groups.get(root, ()), key=lambda m: self.flags[m]["pos"])
        folded, _ = fold([self.flags[m] for m in members])
        incident = folded[0] if folded else None
        if incident is not None:
            resolved = {m for m in members if self.flags[m]["status"] == "resolved"}
            ids = [incident["id"], *incident["related"]]
            incident["dismissed"] = [m for m in ids if m in dismissed and m in resolved]
            incident["last"] = self.flags[members[-1]]["pos"]
        if incident == self.incidents.get(root):
            return
        self.changed_incidents.add(root)
        self.open_rank.pop(root, None)
        if incident is None:
            self.incidents.pop(root, None)
            return
        self.incidents[root] = incident
        if incident["status"] == "open":
            self.open_rank[root] = SEVERITY_RANK.get(str(incident["severity"]), 0)

    def view(self) -> dict[str, Any]:
        """``flags``, ``incidents`` and ``log`` of the board's view, in full (a snapshot)."""
        flags = sorted(self.flags.values(), key=lambda f: int(f["pos"]))
        return {"flags": flags, "incidents": sorted(self.incidents.values(), key=lambda i: -int(i["last"])),
                "log": [str(f["id"]) for f in flags if f["status"] == "noted"]}

    def take_changes(self) -> dict[str, Any]:
        """The delta's findings since the last call (``flags``, ``flags_drop``, ``incidents``, ``incidents_drop``;
        only the keys with something in them)."""
        out: dict[str, Any] = {}
        flags = sorted((self.flags[i] for i in self.changed_flags if i in self.flags), key=lambda f: int(f["pos"]))
        incidents = sorted((self.incidents[i] for i in self.changed_incidents if i in self.incidents),
                           key=lambda i: -int(i["last"]))
        for name, value in (("flags", flags),
                            ("flags_drop", sorted(i for i in self.changed_flags if i not in self.flags)),
                            ("incidents", incidents),
                            ("incidents_drop", sorted(i for i in self.changed_incidents if i not in self.incidents))):
            if value:
                out[name] = value
        self.changed_flags.clear()
        self.changed_incidents.clear()
        return out


def _derive(ident: str, body: dict[str, Any] | None, state: tuple[tuple[int, int], set[str]], *, edition: Any,
            title: Title, key: Callable[[object], tuple[int, int]]) -> dict[str, Any]:
    """The view's flag of one finding: its status against the state (newer than the finding, it is the whole
    truth of what is open), its incident and its title; a finding known by its id only, open in the state."""
    if body is None:
        return {"id": ident, "code": None, "title": "details not received (joined late)", "severity": None,
                "status": "open", "incident": None}
    state_key, opened = state
    status = finding_status(body)
    if key(body) < state_key and status != "noted":
        if ident in opened and status == "resolved":
            status = "open"
        elif ident not in opened and status != "resolved":
            status = "resolved"
    return {**body, "status": status, "incident": incident_of(body),
            "title": title(str(body.get("code", "")), body.get("edition") or edition)}


def moves_delta(sent: list[Any], now: list[Any]) -> tuple[int, list[Any]] | None:
    """``(keep, added)``: the page keeps the first ``keep`` items of ``sent`` and appends ``added`` to have
    ``now``; None when equal. A game grows by one ply: the common prefix is compared in C (no Python walk)."""
    if len(now) >= len(sent) and now[:len(sent)] == sent:
        return None if len(now) == len(sent) else (len(sent), now[len(sent):])
    keep, limit = 0, min(len(sent), len(now))
    while keep < limit and sent[keep] == now[keep]:  # a takeback: back to where they part (rare)
        keep += 1
    return keep, now[keep:]


def apply_delta(view: dict[str, Any], delta: Mapping[str, Any]) -> dict[str, Any]:
    """The page's view of a board after a ``delta`` (the page's ``applyDelta``); ``view`` is not changed."""
    out = {**view, **delta.get("set", {})}
    state = {k: v for k, v in {**(view.get("state") or {}), **delta.get("state", {})}.items()
             if k not in delta.get("state_drop", ())}
    for name in ("moves", "san"):
        if name in delta:
            keep, added = delta[name]
            state[name] = [*list(state.get(name) or [])[:keep], *added]
    out["state"] = state
    out["flags"] = _merged(view.get("flags") or [], delta.get("flags", ()), delta.get("flags_drop", ()), "pos", 1)
    out["incidents"] = _merged(view.get("incidents") or [], delta.get("incidents", ()),
                               delta.get("incidents_drop", ()), "last", -1)
    out["log"] = [str(f["id"]) for f in out["flags"] if f["status"] == "noted"]
    return out


def _merged(items: list[dict[str, Any]], changed: Iterable[dict[str, Any]], dropped: Iterable[str], order: str,
            sign: int) -> list[dict[str, Any]]:
    gone = {*dropped, *(str(c["id"]) for c in changed)}
    return sorted([*(i for i in items if str(i["id"]) not in gone), *changed], key=lambda i: sign * int(i[order]))
