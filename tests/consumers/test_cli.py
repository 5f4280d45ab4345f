"""``boardd relay`` / ``boardd web`` command lines: configuration errors, password hashing."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from boardd.cli import main
from boardd.consumers.relay import config_from_args
from boardd.consumers.web.auth import verify_password


def test_hash_password_prints_a_verifiable_hash(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("s3cret pass\n"))
    assert main(["web", "--hash-password"]) == 0
    encoded = capsys.readouterr().out.strip()
    assert encoded.startswith("scrypt$") and verify_password("s3cret pass", encoded)
    monkeypatch.setattr("sys.stdin", io.StringIO("\n"))
    assert main(["web", "--hash-password"]) == 2


def test_web_refuses_a_clear_text_password(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "hall.toml"
    config.write_text('[web.users]\narbiter = "hunter2"\n')
    assert main(["web", "-c", str(config)]) == 2
    assert "not a password hash" in capsys.readouterr().err


def test_relay_config_errors_and_overrides(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "hall.toml"
    config.write_text('[[relay.boards]]\nboard = "t1"\nboard_no = "one"\n')
    assert main(["relay", "-c", str(config)]) == 2
    assert "relay.boards" in capsys.readouterr().err
    config.write_text('[mqtt]\nhost = "broker"\nprefix = "p"\n[relay]\nround = 2\nhttp_port = 9000\n'
                      '[[relay.boards]]\nboard = "t1"\nboard_no = 4\n')
    from boardd.cli import build_parser

    args = build_parser("relay").parse_args(["relay", "-c", str(config), "--port", "1999", "--round", "5", "--no-http"])
    relay = config_from_args(args)
    assert (relay.mqtt.host, relay.mqtt.port, relay.mqtt.prefix) == ("broker", 1999, "p")
    assert relay.default_round == 5 and relay.http_port is None
    assert relay.slots["t1"].board_no == 4 and relay.slots["t1"].round == 2


def test_web_runs_with_the_files_link_debounce(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``boardd web -c hall.toml --http-port 9001``: the command line overrides the address, the rest is the
    file's. The service used to be started with a configuration rebuilt from a few fields, without the
    ``[web] link_*`` keys: the hall's link debounce silently fell back to the defaults."""
    from boardd.consumers.web import app
    from boardd.consumers.web.links import LinkPolicy

    started: list[app.WebConfig] = []

    class Service:
        def __init__(self, config: app.WebConfig) -> None:
            started.append(config)

    async def nothing(*_: object) -> None:
        return None

    monkeypatch.setattr(app, "WebService", Service)
    monkeypatch.setattr(app, "run_service", nothing)
    config = tmp_path / "hall.toml"
    config.write_text('[mqtt]\nprefix = "p"\n[web]\nport = 8000\nlink_grace = 5\nlink_unstable_drops = 4\n'
                      'link_window = 30\nlink_settle = 2\n')
    assert main(["web", "-c", str(config), "--http-port", "9001", "--prefix", "q"]) == 0
    (used,) = started
    assert used.links == LinkPolicy(grace=5.0, unstable=4, window=30.0, settle=2.0)
    assert used.port == 9001 and used.mqtt.prefix == "q"


def test_web_ring_setting() -> None:
    """``[web] ring``: what rings on the tablet; info findings never (they are notes)."""
    from boardd.consumers.relay import MqttSettings
    from boardd.consumers.web.app import RINGS, web_config
    from boardd.core.errors import ConfigError

    assert web_config({}, MqttSettings()).ring == RINGS == ("illegal-move", "warning", "link")
    assert web_config({"web": {"ring": ["illegal-move"]}}, MqttSettings()).ring == ("illegal-move",)
    assert web_config({"web": {"ring": []}}, MqttSettings()).ring == ()
    for wrong in ("warning", ["info"], ["link", "link"], [1]):
        with pytest.raises(ConfigError, match="ring"):
            web_config({"web": {"ring": wrong}}, MqttSettings())
