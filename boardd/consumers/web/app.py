"""``boardd web``: broadcast screen (``/``) and arbiter tablet (``/arbiter``) over one MQTT link.

Theory of operation
-------------------
One aiomqtt client subscribes to the hall (``{prefix}/+/state``, ``status``, ``move``,
``clock``, ``irregularity``, ``event``, ``cmd-result``) and feeds a pure :class:`~boardd.consumers.web.hub.Hub`,
which dedupes on ``(board, session, seq)`` and renders one JSON text per audience. Browsers
connect with a WebSocket: ``/ws`` (public, broadcast screen) or ``/arbiter/ws`` (login required).
A new socket gets a snapshot of every board, then updates: the broadcast screen a board's view
(``board``), the tablet what changed of it (``delta``: the findings touched, the fields changed, the moves
appended; :mod:`boardd.consumers.web.tablet`), so that a frame does not grow with the game. Each socket has
a bounded queue; a socket that cannot keep up is closed (the page reconnects and gets a fresh snapshot).

The public socket only ever carries :meth:`Hub.public_view` texts, a whitelist without any
irregularity data (rules-spec G2/G3). The arbiter's commands are HTTP POSTs (session cookie +
CSRF header + same origin) that this service publishes to ``{prefix}/{board}/cmd/{name}`` with
a fresh ``id``; the browser never talks MQTT and never holds MQTT credentials.

Everything (scripts, styles, piece images) is served locally: the hall has no internet.

``boardd web`` runs under :func:`boardd.consumers.relay.run_service` (``systemd/boardd-web.service``,
``Type=notify``): READY=1 once the pages are served, STOPPING=1 and a clean stop on SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import getpass
import hmac
import json
import logging
import re
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiomqtt
import chess.svg
from aiohttp import WSMsgType, web

from boardd.consumers.relay import MqttSettings, consume_forever, load_config, run_service
from boardd.consumers.web.auth import LoginThrottle, Session, SessionStore, hash_password, verify_password
from boardd.consumers.web.hub import BRIDGE_TOPIC, WEB_KINDS, Audience, Hub
from boardd.consumers.web.links import LinkPolicy
from boardd.core.errors import ConfigError

__all__ = ["WebConfig", "WebService", "configure_parser", "run", "web_config"]

_LOGGER = logging.getLogger(__name__)

STATIC = Path(__file__).resolve().parent / "static"
COOKIE = "boardd_session"
#: Commands the tablet may send: name -> field -> (kind, required). The payloads of boardd.daemon.commands;
#: the daemon validates them again, this only keeps malformed input from reaching the broker.
TABLET_COMMANDS: dict[str, dict[str, tuple[str, bool]]] = {
    "ack": {"irregularity": ("id", True)},
    "resolve": {"irregularity": ("id", True), "ruling": ("text", False), "accept": ("bool", False),
                "alone": ("bool", False)},
    "reopen": {"irregularity": ("id", True)},
    "reinstate": {"ply": ("ply", True)},
    "set-result": {"result": ("result", True), "termination": ("text", False)},
    "new-game": {"white": ("text", False), "black": ("text", False), "round": ("text", False),
                 "board_no": ("board_no", False), "time_control": ("text", False)},
    "flip": {},
}
RESULTS = ("1-0", "0-1", "1/2-1/2", "*")
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")
_BOARD_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_QUEUE = 2000
#: WebSocket close code (private range) for "your session ended: log in again".
SESSION_ENDED = 4401
#: Clock readings are batched to the sockets at this period (seconds).
CLOCK_FLUSH = 0.25
_SECURITY_HEADERS = {
    "Content-Security-Policy": ("default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
                                "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",  # no-referrer would make browsers send "Origin: null"
}
_APP_KEY: web.AppKey[WebService] = web.AppKey("service")


@dataclass(frozen=True, slots=True, kw_only=True)
class WebConfig:
    """The ``[web]`` section (see docs/consumers.md)."""

    mqtt: MqttSettings = field(default_factory=MqttSettings)
    host: str = "127.0.0.1"
    port: int = 8080
    users: Mapping[str, str] = field(default_factory=dict)
    command_token: str | None = None
    cookie_secure: bool = False
    idle_timeout: float = 4 * 3600
    title: str = "boardd"
    sound: bool = True
    links: LinkPolicy = field(default_factory=LinkPolicy)
    #: What gives the tablet's attention signal (banner, beep), once per incident: see :data:`RINGS`.
    ring: tuple[str, ...] = ("illegal-move", "warning", "link")


#: The values of ``[web] ring``: incidents that need the arbiter, by severity, and a board's link trouble
#: (down for ``link_grace``, or unstable). Info findings (notes) never ring.
RINGS = ("illegal-move", "warning", "link")


def ring_setting(value: object) -> tuple[str, ...]:
    """``[web] ring`` checked: a list of distinct :data:`RINGS` (empty: nothing rings).

    Raises:
        ValueError: not a list of those.
    """
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"ring: expected a list of {', '.join(map(repr, RINGS))}, got {value!r}")
    unknown = [item for item in value if item not in RINGS]
    if unknown:
        raise ValueError(f"ring: unknown {unknown[0]!r} (expected some of {', '.join(map(repr, RINGS))}; "
                         "info findings never ring)")
    if len(set(value)) != len(value):
        raise ValueError(f"ring: {value!r} names one twice")
    return tuple(value)


def web_config(doc: Mapping[str, Any], mqtt: MqttSettings, *, path: str = "") -> WebConfig:
    """Build :class:`WebConfig` from the TOML document.

    Raises:
        ConfigError: a value has the wrong type, or a password is not a hash.
    """
    section = doc.get("web", {})
    if not isinstance(section, dict):
        raise ConfigError("must be a table", path=path, key="web")
    users = section.get("users", {})
    if not isinstance(users, dict):
        raise ConfigError("must be a table of name = hash", path=path, key="web.users")
    for name, encoded in users.items():
        if not isinstance(encoded, str) or not encoded.startswith("scrypt$"):
            raise ConfigError(f"user {name}: not a password hash (use boardd web --hash-password)",
                              path=path, key="web.users")
    token = section.get("command_token")
    if token is None and section.get("command_token_file"):
        try:
            token = Path(section["command_token_file"]).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ConfigError(f"cannot read command_token_file: {exc}", path=path, key="web") from exc
    try:
        return WebConfig(mqtt=mqtt, host=str(section.get("host", "127.0.0.1")), port=int(section.get("port", 8080)),
                         users={str(k): str(v) for k, v in users.items()}, command_token=token,
                         cookie_secure=bool(section.get("cookie_secure", False)),
                         idle_timeout=float(section.get("idle_timeout", 4 * 3600)),
                         title=str(section.get("title", "boardd")), sound=bool(section.get("sound", True)),
                         links=LinkPolicy(grace=float(section.get("link_grace", 3.0)),
                                          unstable=int(section.get("link_unstable_drops", 3)),
                                          window=float(section.get("link_window", 60.0)),
                                          settle=float(section.get("link_settle", 10.0))),
                         ring=ring_setting(section.get("ring", list(RINGS))))
    except (TypeError, ValueError) as exc:
        raise ConfigError(str(exc), path=path, key="web") from exc


def _pieces_sprite() -> str:
    defs = "".join(chess.svg.PIECES.values())
    return f'<svg xmlns="http://www.w3.org/2000/svg" style="display:none" aria-hidden="true"><defs>{defs}</defs></svg>'


@dataclass(eq=False, slots=True)
class _Client:
    audience: Audience
    queue: asyncio.Queue[str | None]  # None: close the socket
    user: str | None = None
    token: str | None = None  # the arbiter's session
    close_code: int = 1013


class WebService:
    """The web service: MQTT bridge, pages, sockets, commands."""

    def __init__(self, config: WebConfig, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self.clock = clock
        self.hub = Hub(prefix=config.mqtt.prefix, links=config.links)
        self.sessions = SessionStore(idle_timeout=config.idle_timeout)
        self.throttle = LoginThrottle()
        self.clients: set[_Client] = set()
        self.connected = asyncio.Event()
        self._client: aiomqtt.Client | None = None
        self._sprite = _pieces_sprite()
        self._templates: dict[str, str] = {}
        self.dropped_clients = 0
        self.http_port: int | None = None
        self.app = self._make_app()

    # Pages.

    def _make_app(self) -> web.Application:
        app = web.Application(middlewares=[_security_headers], client_max_size=64 * 1024)
        app[_APP_KEY] = self
        app.add_routes([
            web.get("/", self._broadcast_page),
            web.get("/ws", self._public_ws),
            web.get("/arbiter", self._arbiter_page),
            web.get("/arbiter/hall", self._hall_page),
            web.get("/arbiter/login", self._login_page),
            web.post("/arbiter/login", self._login),
            web.post("/arbiter/logout", self._logout),
            web.get("/arbiter/ws", self._arbiter_ws),
            web.post("/arbiter/api/cmd", self._command),
            web.post("/arbiter/api/round", self._round_upload),
            web.get("/healthz", self._health),
            web.static("/static", STATIC, append_version=False),
        ])
        return app

    def _page(self, name: str, **values: str) -> web.Response:
        text = self._templates.get(name)
        if text is None:
            text = self._templates[name] = (STATIC / name).read_text(encoding="utf-8")
        values = {"TITLE": _html(self.config.title), "PIECES": self._sprite, **values}
        for key, value in values.items():
            text = text.replace("{{" + key + "}}", value)
        return web.Response(text=text, content_type="text/html", headers={"Cache-Control": "no-store"})

    async def _broadcast_page(self, request: web.Request) -> web.Response:
        return self._page("broadcast.html")

    def _session(self, request: web.Request) -> Session | None:
        return self.sessions.get(request.cookies.get(COOKIE), self.clock())

    async def _arbiter_page(self, request: web.Request) -> web.Response:
        session = self._session(request)
        if session is None:
            raise web.HTTPSeeOther("/arbiter/login")
        return self._page("arbiter.html", CSRF=_html(session.csrf), USER=_html(session.user),
                          SOUND="on" if self.config.sound else "off", RING=_html(" ".join(self.config.ring)))

    async def _hall_page(self, request: web.Request) -> web.Response:
        """The hall view (hall.html): one tile per board, for 100 boards on one tablet screen."""
        session = self._session(request)
        if session is None:
            raise web.HTTPSeeOther("/arbiter/login")
        return self._page("hall.html", CSRF=_html(session.csrf))

    async def _login_page(self, request: web.Request) -> web.Response:
        error = "Wrong user name or password." if request.query.get("failed") else ""
        if request.query.get("locked"):
            error = "Too many attempts: wait a minute."
        return self._page("login.html", ERROR=_html(error))

    async def _login(self, request: web.Request) -> web.Response:
        if not _same_origin(request):
            raise web.HTTPForbidden(text="cross-origin login refused")
        address = request.remote or "?"
        now = self.clock()
        if self.throttle.is_locked(address, now):
            raise web.HTTPSeeOther("/arbiter/login?locked=1")
        form = await request.post()
        user, password = str(form.get("username", "")), str(form.get("password", ""))
        encoded = self.config.users.get(user)
        # Hash even for unknown users, so timing does not tell which names exist.
        ok = await asyncio.to_thread(verify_password, password, encoded or _DUMMY_HASH) and encoded is not None
        if not ok:
            self.throttle.failed(address, now)
            _LOGGER.warning("failed arbiter login for %r from %s", user, address)
            raise web.HTTPSeeOther("/arbiter/login?failed=1")
        self.throttle.succeeded(address)
        session = self.sessions.create(user, now)
        _LOGGER.info("arbiter %s logged in from %s", user, address)
        response = web.HTTPSeeOther("/arbiter")
        response.set_cookie(COOKIE, session.token, httponly=True, samesite="Strict", path="/arbiter",
                            secure=self.config.cookie_secure)
        raise response

    async def _logout(self, request: web.Request) -> web.Response:
        session = self._session(request)
        if session is None or not _same_origin(request):
            raise web.HTTPForbidden(text="not logged in")
        form = await request.post()
        if not _same_secret(str(form.get("csrf", "")), session.csrf):
            raise web.HTTPForbidden(text="bad CSRF token")
        self.sessions.delete(session.token)
        for client in list(self.clients):  # the tablet's other tabs lose their live view too
            if client.token == session.token:
                self.clients.discard(client)
                client.close_code = SESSION_ENDED
                with contextlib.suppress(asyncio.QueueFull):
                    client.queue.put_nowait(None)
        response = web.HTTPSeeOther("/arbiter/login")
        response.del_cookie(COOKIE, path="/arbiter")
        raise response

    async def _health(self, request: web.Request) -> web.Response:
        return web.json_response({"mqtt": self.connected.is_set(), "boards": len(self.hub.hall.boards),
                                  "clients": len(self.clients), "messages": self.hub.received,
                                  "duplicates": self.hub.hall.duplicates, "rejected": self.hub.hall.rejected})

    # Sockets.

    async def _public_ws(self, request: web.Request) -> web.StreamResponse:
        return await self._socket(request, "public", None)

    async def _arbiter_ws(self, request: web.Request) -> web.StreamResponse:
        session = self._session(request)
        if session is None:
            raise web.HTTPUnauthorized(text="login required")
        if not _same_origin(request):
            raise web.HTTPForbidden(text="cross-origin socket refused")
        return await self._socket(request, "arbiter", session.user, session.token)

    async def _socket(self, request: web.Request, audience: Audience, user: str | None,
                      token: str | None = None) -> web.StreamResponse:
        ws = web.WebSocketResponse(heartbeat=20, compress=False, max_msg_size=4096)  # pages only send "ping"
        await ws.prepare(request)
        client = _Client(audience, asyncio.Queue(maxsize=_QUEUE), user, token)
        now = self.clock()
        if audience == "arbiter":  # the tablets already connected catch up first: the deltas follow the snapshot
            for update in self.hub.sync(now):
                self.publish_to_clients(update.audience, update.text)
        client.queue.put_nowait(self.hub.snapshot(audience, now))
        self.clients.add(client)
        sender = asyncio.create_task(self._send_loop(ws, client), name=f"ws-{audience}")
        try:
            async for message in ws:  # the pages send only "ping": read to see the close
                if message.type == WSMsgType.ERROR:
                    break
                if token is not None and self.sessions.get(token, self.clock()) is None:
                    # The tablet's pings keep its session alive during a long round; once it has
                    # ended (logout, expiry), so does the socket: 4401 sends the page to the login.
                    await ws.close(code=SESSION_ENDED, message=b"session ended")
                    break
        finally:
            self.clients.discard(client)
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sender
        return ws

    async def _send_loop(self, ws: web.WebSocketResponse, client: _Client) -> None:
        try:
            while True:
                text = await client.queue.get()
                if text is None:
                    # 1013 "try again later": the page reconnects and starts from a fresh snapshot.
                    await ws.close(code=client.close_code, message=b"closed by the server")
                    return
                await ws.send_str(text)
        except (ConnectionError, RuntimeError):
            pass
        finally:
            if not ws.closed:
                await ws.close()

    def publish_to_clients(self, audience: Audience, text: str) -> None:
        """Queue ``text`` for every socket of ``audience``; close sockets that fell behind."""
        for client in list(self.clients):
            if client.audience != audience:
                continue
            try:
                client.queue.put_nowait(text)
            except asyncio.QueueFull:
                self.clients.discard(client)
                self.dropped_clients += 1
                _LOGGER.warning("a %s socket fell %d messages behind: closing it", audience, _QUEUE)
                while not client.queue.empty():
                    client.queue.get_nowait()
                client.queue.put_nowait(None)

    def take(self, topic: str, payload: bytes) -> None:
        """Feed one MQTT message to the hub and the sockets."""
        for message in self.hub.take(topic, payload, self.clock()):
            self.publish_to_clients(message.audience, message.text)

    # Commands.

    async def _command(self, request: web.Request) -> web.Response:
        session = self._session(request)
        if session is None:
            raise web.HTTPUnauthorized(text="login required")
        if not _same_origin(request) or not _same_secret(request.headers.get("X-CSRF-Token", ""), session.csrf):
            raise web.HTTPForbidden(text="bad CSRF token or origin")
        try:
            body = await request.json()
        except (ValueError, UnicodeDecodeError):
            raise web.HTTPBadRequest(text="body must be JSON") from None
        if not isinstance(body, dict):
            raise web.HTTPBadRequest(text="body must be a JSON object")
        board, name = body.get("board"), body.get("name")
        if not isinstance(board, str) or not _BOARD_RE.match(board) or board not in self.hub.hall.boards:
            raise web.HTTPBadRequest(text="unknown board")
        if name not in TABLET_COMMANDS:
            raise web.HTTPBadRequest(text=f"command must be one of {', '.join(TABLET_COMMANDS)}")
        payload: dict[str, Any] = {"id": f"web-{uuid.uuid4().hex}"}
        fields = TABLET_COMMANDS[name]
        unknown = sorted(set(body) - set(fields) - {"board", "name"})
        if unknown:
            raise web.HTTPBadRequest(text=f"{name} takes no field(s) {', '.join(map(str, unknown))}")
        for key, (kind, required) in fields.items():
            value = body.get(key)
            if value is None or value == "":
                if required:
                    raise web.HTTPBadRequest(text=f"{key} is required")
                continue
            payload[key] = _field(key, kind, value)
        if self.config.command_token:
            payload["token"] = self.config.command_token
        client = self._client
        if client is None or not self.connected.is_set():
            raise web.HTTPServiceUnavailable(text="no MQTT connection")
        topic = f"{self.config.mqtt.prefix}/{board}/cmd/{name}"
        self.hub.command_sent(board, name, payload)  # before: its answer may come while the publish is awaited
        try:
            await client.publish(topic, json.dumps(payload).encode(), qos=1, retain=False)
        except aiomqtt.MqttError as exc:
            raise web.HTTPServiceUnavailable(text=f"MQTT publish failed: {exc}") from None
        _LOGGER.info("arbiter %s sent %s to %s: %s", session.user, name, board,
                     {k: v for k, v in payload.items() if k != "token"})
        return web.json_response({"id": payload["id"], "topic": topic}, status=202)

    async def _round_upload(self, request: web.Request) -> web.Response:
        """The hall view's round upload (boardd.consumers.web.round_upload): same checks as a command."""
        session = self._session(request)
        if session is None:
            raise web.HTTPUnauthorized(text="login required")
        if not _same_origin(request) or not _same_secret(request.headers.get("X-CSRF-Token", ""), session.csrf):
            raise web.HTTPForbidden(text="bad CSRF token or origin")
        from boardd.consumers.web.round_upload import handle_round  # noqa: PLC0415

        return await handle_round(self, request, session.user)

    # MQTT.

    async def mqtt_loop(self) -> None:
        """Keep the MQTT link up (reconnect with backoff) and feed every message to :meth:`take`."""
        settings = self.config.mqtt
        client = aiomqtt.Client(settings.host, settings.port, username=settings.username, password=settings.password,
                                identifier=settings.identifier, keepalive=settings.keepalive,
                                max_queued_incoming_messages=100_000)
        client.pending_calls_threshold = 100
        topics = [*(f"{settings.prefix}/+/{kind}" for kind in WEB_KINDS), BRIDGE_TOPIC]
        await consume_forever(client, settings, topics, self.take, connected=self.connected, logger=_LOGGER,
                              name="web", on_client=self._use_client)

    def _use_client(self, client: aiomqtt.Client | None) -> None:
        """The live MQTT client commands are published with (``None`` while disconnected)."""
        self._client = client

    async def _clock_loop(self) -> None:
        while True:
            await asyncio.sleep(CLOCK_FLUSH)
            now = self.clock()
            for message in [*self.hub.flush_clocks(now), *self.hub.links_due(now)]:
                self.publish_to_clients(message.audience, message.text)

    async def serve(self, *, ready: Callable[[WebService], Awaitable[None] | None] | None = None) -> None:
        """Run the HTTP server and the MQTT link until cancelled."""
        runner = web.AppRunner(self.app, access_log=None)
        await runner.setup()
        try:
            site = web.TCPSite(runner, self.config.host, self.config.port)
            await site.start()
            sockets = getattr(site._server, "sockets", None) or []
            self.http_port = sockets[0].getsockname()[1] if sockets else self.config.port
            _LOGGER.info("web on http://%s:%s/", self.config.host, self.http_port)
            async with asyncio.TaskGroup() as group:
                group.create_task(self.mqtt_loop(), name="web-mqtt")
                group.create_task(self._clock_loop(), name="web-clocks")
                if ready is not None:
                    result = ready(self)
                    if result is not None:
                        await result
        finally:
            await runner.cleanup()


_DUMMY_HASH = "scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"


@web.middleware
async def _security_headers(request: web.Request,
                            handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
    try:
        response = await handler(request)
    except web.HTTPException as exc:
        for key, value in _SECURITY_HEADERS.items():
            exc.headers.setdefault(key, value)
        raise
    if not response.prepared:
        for key, value in _SECURITY_HEADERS.items():
            response.headers.setdefault(key, value)
    return response


def _field(key: str, kind: str, value: object) -> object:
    """A checked command field (see :data:`TABLET_COMMANDS`); raises 400 on anything else."""
    if kind in ("ply", "board_no"):
        low = 0 if kind == "ply" else 1
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= 10_000:
            raise web.HTTPBadRequest(text=f"{key} must be an integer from {low} to 10000")
        return value
    if kind == "bool":
        if not isinstance(value, bool):
            raise web.HTTPBadRequest(text=f"{key} must be true or false")
        return value
    if kind == "result":
        if value not in RESULTS:
            raise web.HTTPBadRequest(text=f"result must be one of {', '.join(RESULTS)}")
        return value
    limit = 100 if kind == "id" else 200
    if not isinstance(value, str) or len(value) > limit or _CONTROL_RE.search(value):
        raise web.HTTPBadRequest(text=f"{key} must be text of at most {limit} printable characters")
    return value


def _same_origin(request: web.Request) -> bool:
    """The ``Origin`` header, when sent, must name this host (CSRF and cross-site WebSocket hijacking)."""
    origin = request.headers.get("Origin")
    if origin is None:
        return True  # non-browser clients; the session cookie is SameSite=Strict anyway
    return origin in {f"{request.scheme}://{request.host}", f"http://{request.host}", f"https://{request.host}"}


def _same_secret(given: str, expected: str) -> bool:
    """Constant-time comparison that also accepts non-ASCII input (compare_digest on str does not)."""
    return hmac.compare_digest(given.encode("utf-8", "surrogateescape"), expected.encode())


def _html(text: str) -> str:
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
            .replace("'", "&#39;"))


# --- CLI ----------------------------------------------------------------------------------------


def configure_parser(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``boardd web``."""
    parser.add_argument("-c", "--config", type=Path, help="TOML file with [mqtt] and [web] sections")
    parser.add_argument("--host", help="MQTT broker host (overrides [mqtt] host)")
    parser.add_argument("--port", type=int, help="MQTT broker port")
    parser.add_argument("--prefix", help="topic prefix (default boardd)")
    parser.add_argument("--http-host", help="address to serve on (default 127.0.0.1; 0.0.0.0 for the hall LAN)")
    parser.add_argument("--http-port", type=int, help="port to serve on (default 8080)")
    parser.add_argument("--hash-password", action="store_true",
                        help="read a password (stdin or prompt), print its hash for [web.users], exit")


def run(args: argparse.Namespace) -> int:
    """``boardd web``."""
    if args.hash_password:
        password = getpass.getpass("password: ") if sys.stdin.isatty() else sys.stdin.readline().rstrip("\n")
        try:
            print(hash_password(password))
        except ValueError as exc:
            print(f"boardd web: {exc}", file=sys.stderr)
            return 2
        return 0
    try:
        doc, mqtt = load_config(args.config)
        config = web_config(doc, mqtt, path=str(args.config or ""))
    except ConfigError as exc:
        print(f"boardd web: {exc}", file=sys.stderr)
        return 2
    mqtt = MqttSettings(host=args.host or mqtt.host, port=args.port or mqtt.port, username=mqtt.username,
                        password=mqtt.password, prefix=args.prefix or mqtt.prefix, identifier=mqtt.identifier,
                        keepalive=mqtt.keepalive)
    # the command line overrides only these; everything else (links, ring, ...) is the file's
    config = dataclasses.replace(config, mqtt=mqtt, host=args.http_host or config.host,
                                 port=args.http_port if args.http_port is not None else config.port)
    if not config.users:
        _LOGGER.warning("no [web.users]: nobody can log in to the arbiter tablet")
    service = WebService(config)

    def describe(web_service: WebService) -> str:
        return (f"web on http://{web_service.config.host}:{web_service.http_port}/, "
                f"MQTT {web_service.config.mqtt.host}:{web_service.config.mqtt.port}")

    # READY=1 once the pages are served (the MQTT link connects by itself), STOPPING=1 on SIGTERM.
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run_service(lambda ready: service.serve(ready=ready), describe))
    return 0
