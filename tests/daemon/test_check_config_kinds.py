"""``boardd check-config`` on every kind of configuration file: daemon, relay and web.

The kind is told by the top-level tables (or ``--kind``); every example in config/ passes, and a broken
variant of each kind is refused with the file, the key and what was expected (exit 1).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from boardd import cli
from boardd.consumers.web.auth import hash_password
from tests.daemon.test_config import MINIMAL, ROOT

EXAMPLES = sorted((ROOT / "config").glob("*.toml"))
KIND_OF = {"relay.toml": "relay", "web.toml": "web"}  # every other example configures the daemon

RELAY = """
[mqtt]
host = "hall.local"
port = 1883
username = "relay"
prefix = "club"

[relay]
out_dir = "live"
http_port = 8081
round = 3
tags = { Site = "Wijk aan Zee NED" }

[[relay.boards]]
board = "t1"
board_no = 1
white_fide_id = "1503014"

[[relay.boards]]
board = "t2"
board_no = 2
round = 4

[relay.lichess]
round_id = "AbCd1234"
token = "lip_secret"
rounds = { 4 = "EfGh5678" }
"""

WEB = """
[mqtt]
host = "hall.local"
username = "web"

[web]
host = "0.0.0.0"
port = 8080
title = "Club championship"
cookie_secure = true

[web.users]
arbiter = "{hash}"
"""


def check(path: Path, *extra: str) -> tuple[int, str, str]:
    proc = subprocess.run([sys.executable, "-m", "boardd", "check-config", *extra, str(path)],
                          capture_output=True, text=True, timeout=60, check=False)
    return proc.returncode, proc.stdout, proc.stderr


def run_check(path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    code = cli.main(["check-config", *extra, str(path)])
    out = capsys.readouterr()
    return code, out.out, out.err


def write(tmp_path: Path, text: str, name: str = "service.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def web_text() -> str:
    return WEB.replace("{hash}", hash_password("correct horse battery"))


def test_there_are_examples_of_every_kind() -> None:
    kinds = {KIND_OF.get(p.name, "daemon") for p in EXAMPLES}
    assert kinds == {"daemon", "relay", "web"}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_example_passes_as_its_kind(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_check(path, capsys)
    kind = KIND_OF.get(path.name, "daemon")
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == f"OK {path} ({kind} configuration)"
    assert out.splitlines()[1].startswith(("mqtt: mqtt://", "mqtt: mqtts://"))
    if kind == "daemon":
        assert "board " in out and "topics " in out
    else:
        assert "subscribes: boardd/+/state" in out


def test_relay_summary_names_broker_topics_outputs_and_boards(tmp_path: Path) -> None:
    code, out, err = check(write(tmp_path, RELAY))
    assert (code, err) == (0, "")
    assert out.splitlines()[1:] == [
        "mqtt: mqtt://hall.local:1883 (user relay, keepalive 30s, prefix 'club')",
        "subscribes: club/+/state, club/+/move, club/+/pgn, club/+/status",
        "relay: folder live; PGN over HTTP on 127.0.0.1:8081; lichess push to https://lichess.org rounds "
        "3=AbCd1234, 4=EfGh5678 (token set); default round 3",
        "board t1: round 3 board 1",
        "board t2: round 4 board 2",
    ]


def test_web_summary_names_broker_topics_and_service(tmp_path: Path, web_text: str) -> None:
    code, out, err = check(write(tmp_path, web_text))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].endswith("(web configuration)")
    assert lines[1] == "mqtt: mqtt://hall.local:1883 (user web, keepalive 30s, prefix 'boardd')"
    assert lines[2].startswith("subscribes: boardd/+/state, ") and "$SYS/broker/connection/+/state" in lines[2]
    assert lines[3] == "publishes: boardd/<board>/cmd/<command> (arbiter tablet)"
    assert lines[4] == "web: http://0.0.0.0:8080/ title 'Club championship', 1 arbiter account(s)"
    assert lines[5] == ("tablet: link trouble after 3 s down or 3 drops in 60 s, over after 10 s up; "
                        "rings once per incident for illegal-move, warning, link")
    code, out, err = check(write(tmp_path, web_text.replace("cookie_secure = true", 'cookie_secure = true\nring = []')))
    assert (code, err) == (0, "") and out.splitlines()[5].endswith("rings once per incident for nothing")


RELAY_BROKEN = [
    ('out_dir = "live"', 'out_dri = "live"', "[relay.out_dri]", "unknown key 'out_dri'; did you mean 'out_dir'?"),
    ("http_port = 8081", 'http_port = "8081"', "[relay.http_port]", "expected an integer, got str '8081'"),
    ("round = 3\n", "round = 0\n", "[relay.round]", "expected an integer in 1..10000, got 0"),
    ("board_no = 2\n", "", "[relay.boards[1].board_no]", "required key is missing"),
    ('board = "t1"', 'board = "t 1"', "[relay.boards[0].board]", "expected a board id"),
    ('white_fide_id = "1503014"', "white_fide_id = [1]", "[relay.boards[0].white_fide_id]", "expected a FIDE id"),
    ('Site = "Wijk aan Zee NED"', "Site = 1", "[relay.tags.Site]", "expected a string, got int 1"),
    ('rounds = { 4 = "EfGh5678" }', 'rounds = { four = "EfGh5678" }', "[relay.lichess.rounds.four]",
     "expected round number"),
    ('token = "lip_secret"', 'token_file = "/nonexistent/lichess.token"', "[relay.lichess]",
     "cannot read token_file"),  # the relay's own loader
    ("port = 1883", "port = 188300", "[mqtt.port]", "expected an integer in 1..65535"),
    ('username = "relay"', 'password_file = "/etc/boardd/mqtt.pass"', "[mqtt.password_file]",
     "unknown key 'password_file'"),  # the daemon's key: the consumers have no password file
]


def assert_broken(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
                  case: tuple[str, str, str, str]) -> None:
    """*text* with *case*'s ``old`` replaced by ``new`` fails check-config (exit 1, nothing on stdout)
    with an error naming the file, the ``key`` and the ``expected`` words."""
    old, new, key, expected = case
    assert old in text
    path = write(tmp_path, text.replace(old, new, 1))
    code, out, err = run_check(path, capsys)
    assert (code, out) == (1, "")
    assert err.startswith(f"error: {path}: {key} ") and expected in err, err


@pytest.mark.parametrize("case", RELAY_BROKEN, ids=[case[2] for case in RELAY_BROKEN])
def test_broken_relay_configs_name_file_key_and_expectation(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           case: tuple[str, str, str, str]) -> None:
    assert_broken(tmp_path, capsys, RELAY, case)


WEB_BROKEN = [
    ('port = 8080', 'port = "8080"', "[web.port]", "expected an integer"),
    ("cookie_secure = true", 'cookie_secure = "yes"', "[web.cookie_secure]", "expected true or false"),
    ('title = "Club championship"', 'titel = "x"', "[web.titel]", "did you mean 'title'?"),
    ("arbiter = ", "arbiter = \"plain-password\"\nold = ", "[web.users.arbiter]", "expected a password hash"),
    ('host = "hall.local"', 'host = "hall.local"\nprefix = "a/+"', "[mqtt.prefix]", "without wildcards"),
    ("cookie_secure = true", "cookie_secure = true\nlink_window = 0", "[web.link_window]", "expected seconds > 0"),
    ("cookie_secure = true", "cookie_secure = true\nlink_grace = -1", "[web.link_grace]", "expected seconds >= 0"),
    ("cookie_secure = true", "cookie_secure = true\nlink_unstable_drops = 1", "[web.link_unstable_drops]",
     "expected an integer >= 2, got 1"),
    ("cookie_secure = true", 'cookie_secure = true\nlink_settle = "10 s"', "[web.link_settle]", "expected a number"),
    ("cookie_secure = true", 'cookie_secure = true\nring = "warning"', "[web.ring]", "expected a list of"),
    ("cookie_secure = true", 'cookie_secure = true\nring = ["warning", "info"]', "[web.ring[1]]",
     "expected one of illegal-move, warning, link, got 'info' (info findings are notes: they never ring)"),
    ("cookie_secure = true", 'cookie_secure = true\nring = ["link", "link"]', "[web.ring[1]]", "named twice"),
]


@pytest.mark.parametrize("case", WEB_BROKEN, ids=[case[2] for case in WEB_BROKEN])
def test_broken_web_configs_name_file_key_and_expectation(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         web_text: str, case: tuple[str, str, str, str]) -> None:
    assert_broken(tmp_path, capsys, web_text, case)


DAEMON_BROKEN = [
    ('kind = "sim"', 'kind = "dgt"\nport = "rfc2217://ser2net.local"', "[board.t1.driver.port]",
     "expected rfc2217://HOST:PORT"),
    ('kind = "sim"', 'kind = "dgt"\nport = "socket://ser2net.local:4000?baud=9600"', "[board.t1.driver.port]",
     "unknown option 'baud'"),
    ('host = "localhost"', 'hots = "x"', "[mqtt.hots]", "did you mean 'host'"),
]


@pytest.mark.parametrize("case", DAEMON_BROKEN, ids=[case[1] for case in DAEMON_BROKEN])
def test_broken_daemon_configs_name_file_key_and_expectation(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            case: tuple[str, str, str, str]) -> None:
    assert_broken(tmp_path, capsys, MINIMAL, case)


def test_the_kind_is_told_by_the_tables_or_given(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 web_text: str) -> None:
    only_mqtt = write(tmp_path, '[mqtt]\nhost = "x"\n', "mqtt.toml")
    code, _out, err = run_check(only_mqtt, capsys)
    assert code == 1 and f"{only_mqtt}: cannot tell what this file configures" in err and "--kind" in err

    typo = write(tmp_path, '[mqtt]\nhost = "x"\n[[boards]]\nid = "t1"\n', "typo.toml")
    code, _out, err = run_check(typo, capsys)
    assert code == 1 and f"{typo}: [boards] unknown table 'boards'; did you mean 'board'?" in err

    both = write(tmp_path, RELAY + web_text.split("[web]", 1)[1].join(["[web]", ""]), "both.toml")
    code, _out, err = run_check(both, capsys)
    assert code == 1 and "mixes the tables of the relay and the web configurations" in err

    code, _out, err = run_check(both, capsys, "--kind", "relay")  # given: then [web] is a key too many
    assert code == 1 and f"{both}: [web] unknown key 'web'" in err

    code, out, _err = run_check(only_mqtt, capsys, "--kind", "web")  # [web] is optional: all defaults
    assert code == 0 and "(web configuration)" in out

    code, _out, err = run_check(ROOT / "config" / "relay.toml", capsys, "--kind", "daemon")
    assert code == 1 and "[relay] unknown key 'relay'" in err


def test_exit_codes(tmp_path: Path) -> None:
    assert check(ROOT / "config" / "web.toml")[0] == 0
    code, out, err = check(tmp_path / "missing.toml")
    assert (code, out) == (1, "") and f"{tmp_path / 'missing.toml'}: file not found" in err
    code, _out, err = check(write(tmp_path, "[relay\n"))
    assert code == 1 and "not valid TOML" in err
    code, _out, err = check(ROOT / "config" / "web.toml", "--kind", "proxy")  # a usage error
    assert code == 2 and "invalid choice: 'proxy'" in err
