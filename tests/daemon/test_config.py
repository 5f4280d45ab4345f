"""Configuration: examples pass, broken files name the file and the key."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from boardd.core.errors import ConfigError
from boardd.core.settings import Category, Regime
from boardd.daemon.config import load_config

ROOT = Path(__file__).resolve().parents[2]
#: the daemon's examples; relay.toml and web.toml configure the hall-server consumers and are loaded by
#: their own loaders in tests/systemd/test_consumer_units.py
CONSUMER_CONFIGS = {"relay.toml", "web.toml"}
EXAMPLES = [p for p in sorted((ROOT / "config").glob("*.toml")) if p.name not in CONSUMER_CONFIGS]

MINIMAL = """
[mqtt]
host = "localhost"

[[board]]
id = "t1"
[board.driver]
kind = "sim"
"""


def write(tmp_path: Path, text: str, name: str = "boardd.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_there_are_examples() -> None:
    names = {p.name for p in EXAMPLES}
    assert {"single-board.toml", "multi-board.toml", "tls.toml", "rapid.toml", "blitz.toml",
            "candidates.toml", "olympiad.toml"} <= names


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples_pass_check_config(path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "boardd", "check-config", str(path)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("OK ")
    assert "board " in proc.stdout


def test_example_values() -> None:
    multi = load_config(ROOT / "config" / "multi-board.toml")
    assert [b.id for b in multi.boards] == ["t1", "t2", "t3"]
    assert multi.boards[1].rules.white_clock_side.value == "right"
    assert multi.boards[2].rules.clock_expected is False
    assert multi.boards[0].journal.path == Path("/var/lib/boardd/t1.sqlite")
    blitz = load_config(ROOT / "config" / "blitz.toml").boards[0]
    assert blitz.rules.category is Category.BLITZ and blitz.rules.regime is Regime.OTHERWISE
    assert blitz.game.time_control == "180+2"
    cand = load_config(ROOT / "config" / "candidates.toml").boards[0]
    assert cand.game.time_control == "40/7200:20/1800:900+30"
    tls = load_config(ROOT / "config" / "tls.toml")
    assert tls.mqtt.tls is not None and tls.mqtt.port == 8883
    assert tls.commands.role_of("change-me-arbiter-secret") == "arbiter"
    assert tls.commands.role_of("wrong") is None


def test_minimal_defaults(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, MINIMAL))
    board = cfg.boards[0]
    assert cfg.mqtt.port == 1883 and cfg.mqtt.prefix == "boardd" and cfg.mqtt.keepalive == 15
    assert board.game.edition == 2023
    assert board.journal.path == Path("/var/lib/boardd/t1.sqlite")
    cid = cfg.mqtt.client_id_for("t1")
    assert cid.startswith("boardd-t1-") and cid == cfg.mqtt.client_id_for("t1")


def test_password_file_and_relative_paths(tmp_path: Path) -> None:
    (tmp_path / "secret").write_text("s3cret\n")
    text = MINIMAL.replace('host = "localhost"', 'host = "localhost"\nusername = "u"\npassword_file = "secret"')
    text = "[journal]\ndirectory = \"state\"\n" + text
    cfg = load_config(write(tmp_path, text))
    assert cfg.mqtt.password == "s3cret"
    assert cfg.boards[0].journal.path == tmp_path / "state" / "t1.sqlite"


def expect_error(tmp_path: Path, text: str, key: str | None, fragment: str) -> ConfigError:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    err = info.value
    assert err.path == str(path)
    assert str(path) in str(err)
    assert err.key == key
    assert fragment in str(err)
    return err


def test_bad_toml(tmp_path: Path) -> None:
    expect_error(tmp_path, "[mqtt\nhost=1", None, "not valid TOML")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path / "nope.toml")
    assert info.value.path == str(tmp_path / "nope.toml") and "not found" in str(info.value)


def test_unknown_key_with_hint(tmp_path: Path) -> None:
    err = expect_error(tmp_path, MINIMAL.replace('host = "localhost"', 'host = "x"\nkeepalvie = 10'),
                       "mqtt.keepalvie", "did you mean 'keepalive'")
    assert "unknown key" in str(err)


def test_unknown_key_in_board_rules(tmp_path: Path) -> None:
    expect_error(tmp_path, MINIMAL + "[board.rules]\neditoin = 2018\n", "board.t1.rules.editoin",
                 "did you mean 'edition'")


def test_unknown_top_level(tmp_path: Path) -> None:
    expect_error(tmp_path, MINIMAL + "[bords]\n", "bords", "did you mean 'board'")


def test_wrong_type(tmp_path: Path) -> None:
    expect_error(tmp_path, MINIMAL.replace('host = "localhost"', 'port = "1883"'), "mqtt.port", "expected an integer")
    expect_error(tmp_path, MINIMAL.replace('host = "localhost"', "port = 70000"), "mqtt.port", "1..65535")
    expect_error(tmp_path, MINIMAL + "[board.rules]\nresult_gesture = 1\n", "board.t1.rules.result_gesture",
                 "true or false")
    expect_error(tmp_path, MINIMAL + "[board.rules]\nedition = 2017\n", "board.t1.rules.edition", "2023")
    expect_error(tmp_path, MINIMAL + "[board.rules.timing]\nt_settle = 99\n", "board.t1.rules.timing.t_settle",
                 "0..60")


def test_bad_board_id(tmp_path: Path) -> None:
    expect_error(tmp_path, MINIMAL.replace('id = "t1"', 'id = "t 1/#"'), "board[0].id", "[A-Za-z0-9_-]")
    expect_error(tmp_path, MINIMAL.replace('id = "t1"', 'id = "_round"'), "board[0].id", "reserved")


def test_missing_board_and_driver(tmp_path: Path) -> None:
    expect_error(tmp_path, "[mqtt]\n", "board", "no board configured")
    expect_error(tmp_path, MINIMAL.replace('kind = "sim"', 'kind = "dgtt"'), "board.t1.driver.kind",
                 "did you mean 'dgt'")
    expect_error(tmp_path, "[[board]]\nid = \"x\"\n", "board.x.driver", "required")


def test_duplicate_board(tmp_path: Path) -> None:
    expect_error(tmp_path, MINIMAL + '[[board]]\nid = "t1"\n[board.driver]\nkind = "sim"\n', "board.t1.id", "twice")


def test_bad_time_control_and_fen(tmp_path: Path) -> None:
    expect_error(tmp_path, MINIMAL + '[board.game]\ntime_control = "ninety minutes"\n',
                 "board.t1.game.time_control", "TimeControl")
    expect_error(tmp_path, MINIMAL + '[board.game]\nstart_fen = "not a fen"\n', "board.t1.game.start_fen", "FEN")


def test_short_token_and_missing_secret_file(tmp_path: Path) -> None:
    expect_error(tmp_path, MINIMAL + '[commands.tokens]\narbiter = "short"\n', "commands.tokens.arbiter",
                 "at least 8")
    expect_error(tmp_path, MINIMAL.replace('host = "localhost"', 'password_file = "/nonexistent/pw"'),
                 "mqtt.password_file", "cannot read")


def test_check_config_cli_reports_error(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL.replace('host = "localhost"', 'hots = "x"'))
    proc = subprocess.run([sys.executable, "-m", "boardd", "check-config", str(path)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 1
    assert str(path) in proc.stderr and "[mqtt.hots]" in proc.stderr and "did you mean 'host'" in proc.stderr


def test_environment_warnings(tmp_path: Path) -> None:
    from boardd.daemon.config import environment_warnings

    ca = tmp_path / "ca.crt"
    text = MINIMAL.replace('host = "localhost"', f'host = "localhost"\n[mqtt.tls]\nca = "{ca}"\ninsecure = true')
    text = text.replace('kind = "sim"', 'kind = "external"\nfactory = "x.y:z"\nport = "/dev/nonexistent-board"')
    cfg = load_config(write(tmp_path, text))
    found = environment_warnings(cfg)
    assert any("mqtt.tls.ca" in w and "does not exist" in w for w in found)
    assert any("insecure" in w for w in found)
    assert any("/dev/nonexistent-board" in w for w in found)
    ca.write_text("x")
    assert not any("mqtt.tls.ca" in w for w in environment_warnings(cfg))


def test_external_driver_needs_a_factory(tmp_path: Path) -> None:
    expect_error(tmp_path, MINIMAL.replace('kind = "sim"', 'kind = "external"'), "board.t1.driver.factory",
                 "package.module:callable")


def test_auto_new_game_is_off_unless_asked(tmp_path: Path) -> None:
    assert load_config(write(tmp_path, MINIMAL)).boards[0].auto_new_game is False
    on = load_config(write(tmp_path, MINIMAL + '[board.game]\nauto_new_game = true\nevent = "Club"\n'))
    assert on.boards[0].auto_new_game is True and on.boards[0].game.event == "Club"
    with pytest.raises(ConfigError, match=r"auto_new_game.*true or false"):
        load_config(write(tmp_path, MINIMAL + '[board.game]\nauto_new_game = "yes"\n'))


@pytest.mark.parametrize(("variant", "chess960"), [("standard", False), ("chess960", True), ("auto", False)])
def test_the_boards_variant(tmp_path: Path, variant: str, chess960: bool) -> None:
    cfg = load_config(write(tmp_path, MINIMAL + f'[board.game]\nvariant = "{variant}"\n'))
    game = cfg.boards[0].game
    assert (game.variant, game.chess960, game.effective_variant) == (variant, chess960, variant)


def test_an_unknown_variant_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"variant.*expected one of standard, chess960, auto, got 'fischer'"):
        load_config(write(tmp_path, MINIMAL + '[board.game]\nvariant = "fischer"\n'))
