"""The round upload of the hall view: ``boardd round import`` from the arbiter's tablet.

``POST /arbiter/api/round`` (session, CSRF token and same origin as every tablet POST), a JSON body::

    {"file": "<base64 of the TRF / pairing-engine output / CSV>", "players": "<base64 TRF>"?,
     "round": 3, "board_id": "t{n}"?, "map": {"12": "t40"}?, "send": false, "event": "..."?,
     "chess960": "518" | "<FEN>"?}

reads the file exactly as the command does (:mod:`boardd.core.tournament`, all or nothing) and answers
the plan: one entry per game (board number, board id, players, ratings, FIDE ids; ``known``: whether
the hall has seen the board), the byes, the format, the board rule and the round's Chess960 start (``chess960``:
its number and X-FEN, as ``boardd round import --chess960 N|FEN``: every game from that array, sent with
``variant: chess960``; empty or absent: the boards' own variant). A bad file is a 400 whose text
names the line and the column. With ``"send": true`` (after the arbiter saw the plan, and with the
boards reassigned in ``map``), every board must be known to the hall (else 409, nothing sent); then
the roster goes out retained on ``{prefix}/_round/{N}`` and ``new-game`` to every board; the answers
arrive on the tablet's socket as ``cmd-result`` messages, matched on the returned command ids.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import aiomqtt
import chess
from aiohttp import web

from boardd.consumers.round import BoardsMap, chess960_start, plan_round, roster_payload, roster_topic
from boardd.core.errors import BoarddError, ConfigError
from boardd.core.tournament import Player, read_round

if TYPE_CHECKING:
    from boardd.consumers.web.app import WebService

__all__ = ["MAX_UPLOAD", "handle_round"]

_LOGGER = logging.getLogger(__name__)

#: The largest upload (the tablet's other requests are limited to 64 KiB; a 500-player TRF is ~120 KiB).
MAX_UPLOAD = 2 * 1024 * 1024


def _player(p: Player) -> dict[str, Any]:
    return {"name": p.name, "rank": p.rank or None, "rating": p.rating, "fide_id": p.fide_id or None}


def _bytes(body: Mapping[str, Any], key: str, *, required: bool) -> bytes | None:
    value = body.get(key)
    if value is None or value == "":
        if required:
            raise web.HTTPBadRequest(text=f"{key} is required (the file, base64)")
        return None
    if not isinstance(value, str):
        raise web.HTTPBadRequest(text=f"{key} must be base64 text")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise web.HTTPBadRequest(text=f"{key} is not base64") from None


async def _read_json(request: web.Request) -> dict[str, Any]:
    chunks: list[bytes] = []
    size = 0
    while chunk := await request.content.read(65536):
        size += len(chunk)
        if size > MAX_UPLOAD * 4 // 3 + 4096:
            raise web.HTTPRequestEntityTooLarge(max_size=MAX_UPLOAD, actual_size=size)
        chunks.append(chunk)
    try:
        body = json.loads(b"".join(chunks))
    except (ValueError, UnicodeDecodeError):
        raise web.HTTPBadRequest(text="body must be JSON") from None
    if not isinstance(body, dict):
        raise web.HTTPBadRequest(text="body must be a JSON object")
    return body


async def handle_round(service: WebService, request: web.Request, user: str) -> web.Response:
    """The plan of an uploaded round file, or (``send``) the round sent to the boards."""
    body = await _read_json(request)
    data = _bytes(body, "file", required=True)
    assert data is not None
    players = _bytes(body, "players", required=False)
    round_no = body.get("round")
    if isinstance(round_no, bool) or not isinstance(round_no, int) or not 1 <= round_no <= 99:
        raise web.HTTPBadRequest(text="round must be a number 1..99")
    template = body.get("board_id") or "t{n}"
    mapping = body.get("map") or {}
    event = body.get("event") or ""
    chess960 = body.get("chess960") or ""
    if not isinstance(template, str) or not isinstance(mapping, dict) or not isinstance(event, str) \
            or not isinstance(chess960, str | int) or isinstance(chess960, bool):
        raise web.HTTPBadRequest(text="board_id must be text, map an object {board_no: board id}, chess960 a "
                                      "start number or a FEN")
    try:
        start_fen = chess960_start(str(chess960)) if str(chess960).strip() else ""
    except ConfigError as exc:
        raise web.HTTPBadRequest(text=f"Chess960 start: {str(exc).removeprefix('--chess960: ')}") from None
    try:
        boards = BoardsMap.parse(template, [f"{k}={v}" for k, v in mapping.items()])
        round_file = read_round(data, round_no, players_trf=players, source=str(body.get("name") or "upload")[:80])
        event = event or round_file.event
        plans = plan_round(round_file, boards, event=event, token=service.config.command_token or "",
                           stamp=f"web{uuid.uuid4().hex[:10]}", start_fen=start_fen)
    except BoarddError as exc:
        raise web.HTTPBadRequest(text=str(exc)) from None
    known = set(service.hub.hall.boards)
    games = [{"board_no": p.pairing.board_no, "board": p.board, "known": p.board in known, "line": p.pairing.line,
              "white": _player(p.pairing.white), "black": _player(p.pairing.black), "id": p.command["id"]}
             for p in plans]
    answer: dict[str, Any] = {"round": round_no, "format": round_file.format, "board_rule": round_file.board_rule,
                              "event": event or None, "games": games,
                              "byes": [{"player": _player(b.player), "kind": b.kind} for b in round_file.byes],
                              "sent": False, "chess960": None}
    if start_fen:
        answer["chess960"] = {"position": chess.Board(start_fen, chess960=True).chess960_pos(), "fen": start_fen}
    if body.get("send") is not True:
        return web.json_response(answer)
    unknown = [g["board"] for g in games if not g["known"]]
    if unknown:
        raise web.HTTPConflict(text=f"nothing sent: board(s) {', '.join(unknown)} unknown to the hall "
                                    "(no message seen): reassign them or start them")
    client = service._client
    if client is None or not service.connected.is_set():
        raise web.HTTPServiceUnavailable(text="no MQTT connection: nothing sent")
    prefix = service.config.mqtt.prefix
    try:
        await client.publish(roster_topic(prefix, round_no), json.dumps(roster_payload(round_file, plans,
                                                                                        event=event)).encode(),
                             qos=1, retain=True)
        for plan in plans:
            await client.publish(f"{prefix}/{plan.board}/cmd/new-game", json.dumps(plan.command).encode(), qos=1)
    except aiomqtt.MqttError as exc:
        raise web.HTTPServiceUnavailable(text=f"MQTT publish failed: {exc}") from None
    _LOGGER.info("arbiter %s sent round %d to %d board(s)", user, round_no, len(plans))
    answer["sent"] = True
    return web.json_response(answer, status=202)
