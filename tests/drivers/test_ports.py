"""``boardd ports``: candidates with by-id links and family guesses; the stateless DGT probe."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from pathlib import Path

import pytest
from serial.tools import list_ports
from serial.tools.list_ports_common import ListPortInfo

from drivers import ports
from drivers.dgt.emulator import DgtEmulator
from tests.drivers.test_capture import emulator_process

__all__ = ["emulator_process"]  # the fixture, shared with test_capture


def fake_port(device: str, vid: int | None = None, pid: int | None = None, serial: str | None = None) -> ListPortInfo:
    info = ListPortInfo(device, skip_link_detection=True)
    info.vid, info.pid, info.serial_number = vid, pid, serial
    info.description = "USB device" if vid else "n/a"
    return info


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def test_candidates_with_guesses_and_by_id_links(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    devices = tmp_path / "dev"
    devices.mkdir()
    for name in ("ttyUSB0", "ttyUSB1", "rfcomm0", "ttyACM0"):
        (devices / name).touch()
    by_id = tmp_path / "by-id"
    by_id.mkdir()
    (by_id / "usb-FTDI_FT232R_USB_UART_A1B2C3-if00-port0").symlink_to(devices / "ttyUSB0")
    fakes = [
        fake_port(str(devices / "ttyUSB0"), 0x0403, 0x6001, "A1B2C3"),
        fake_port(str(devices / "ttyUSB1"), 0x10C4, 0xEA60),
        fake_port(str(devices / "rfcomm0")),
        fake_port(str(devices / "ttyACM0"), 0x1234, 0x5678),
    ]
    monkeypatch.setattr(list_ports, "comports", lambda: fakes)
    found = {Path(c.device).name: c for c in ports.candidates(by_id_dir=by_id)}
    assert found["ttyUSB0"].guess == "dgt" and found["ttyUSB0"].usb_id == "0403:6001"
    assert found["ttyUSB0"].by_id == (str(by_id / "usb-FTDI_FT232R_USB_UART_A1B2C3-if00-port0"),)
    assert found["ttyUSB1"].guess == "certabo"
    assert found["rfcomm0"].guess == "dgt" and "Bluetooth" in found["rfcomm0"].guess_text
    assert found["ttyACM0"].guess is None and found["ttyACM0"].by_id == ()


async def test_probe_finds_the_emulated_board_and_leaves_nothing_open() -> None:
    async with DgtEmulator(scan_interval=0.02) as emu:
        before = open_fds()
        result = await ports.probe_dgt(emu.path, wait=5.0)
        assert result == ports.ProbeResult(protocol="dgt", version="3.10", serial="3.10A12345")
        assert open_fds() == before
        assert emu.mode == "idle"  # read-only requests: the board's mode is untouched


async def test_probe_of_a_silent_or_missing_port_is_none_and_closes(tmp_path: Path) -> None:
    async with DgtEmulator(scan_interval=0.02) as emu:
        emu.hung = True
        before = open_fds()
        assert await ports.probe_dgt(emu.path, wait=0.2) is None
        assert open_fds() == before
    assert await ports.probe_dgt(str(tmp_path / "ttyNONE"), wait=0.2) is None
    assert await ports.probe_dgt("bogus://x", wait=0.2) is None


def test_run_prints_json(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(list_ports, "comports", list)
    parser = argparse.ArgumentParser()
    ports.configure_parser(parser)
    assert ports.run(parser.parse_args(["--json"])) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_run_probes_extra_ports(emulator_process: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(list_ports, "comports", list)
    parser = argparse.ArgumentParser()
    ports.configure_parser(parser)
    missing = str(tmp_path / "ttyGONE")
    assert ports.run(parser.parse_args(["--probe", "--timeout", "5", emulator_process, missing])) == 0
    header, *out = capsys.readouterr().out.splitlines()
    assert header.split() == ["DEVICE", "USB", "ID", "GUESS", "DESCRIPTION"]
    assert out[0].startswith(emulator_process)
    assert out[1].strip() == "probe: DGT board, version 3.10, serial 3.10A12345"
    assert out[2].startswith(missing) and out[3].strip() == "probe: no DGT answer"
    assert len(out) == 4  # a board answered: no "no board found" line


def test_run_table_has_a_header_and_says_when_no_board_is_found(monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A Pi's built-in UART alone (``/dev/ttyS0``, no USB id) is not a board: the table says so."""
    monkeypatch.setattr(list_ports, "comports", lambda: [fake_port("/dev/ttyS0")])
    monkeypatch.setattr(ports, "hid_candidates", list)
    parser = argparse.ArgumentParser()
    ports.configure_parser(parser)
    assert ports.run(parser.parse_args([])) == 0
    header, row, verdict = capsys.readouterr().out.splitlines()
    assert header.split() == ["DEVICE", "USB", "ID", "GUESS", "DESCRIPTION"]
    assert row.split() == ["/dev/ttyS0", "-", "-", "n/a"]
    assert row.index("-") == header.index("USB ID") and row.rindex("-") == header.index("GUESS")  # aligned
    assert verdict.startswith("no board found") and "--probe" in verdict
    monkeypatch.setattr(list_ports, "comports", lambda: [fake_port("/dev/ttyUSB0", 0x0403, 0x6001)])
    assert ports.run(parser.parse_args([])) == 0
    assert "no board found" not in capsys.readouterr().out  # an FTDI adapter: DGT's chip


async def test_probe_of_an_older_board_without_long_serial_does_not_wait_out_the_timeout() -> None:
    async with DgtEmulator(scan_interval=0.02, long_serial=None, serial="01025") as emu:
        loop = asyncio.get_running_loop()
        start = loop.time()
        result = await ports.probe_dgt(emu.path, wait=5.0)
        assert result == ports.ProbeResult(protocol="dgt", version="3.10", serial="01025")
        assert loop.time() - start < 2.0


# --- the USB id table against the ids protocols.md names ----------------------------------------------

#: (vid, pid) -> family, as protocols.md names them: §1.1 (DGT's FTDI), §5.1 (Certabo's CP210x), §6.4 (Chessnut
#: HID: 8001/8002 in the web drivers, the SDK's pid & 0xff00 in 8000..8600).
DOCUMENTED_USB_IDS = {
    (0x0403, 0x6001): "dgt",
    (0x10C4, 0xEA60): "certabo",
    (0x2D80, 0x8001): "chessnut", (0x2D80, 0x8002): "chessnut",
    **{(0x2D80, family | low): "chessnut" for family in range(0x8000, 0x8700, 0x100) for low in (0x00, 0xFF)},
}


@pytest.mark.parametrize(("vid", "pid"), sorted(DOCUMENTED_USB_IDS), ids=lambda v: f"{v:04x}")
def test_every_documented_usb_id_names_its_family(vid: int, pid: int) -> None:
    kind, label = ports._guess(vid, pid, "/dev/ttyUSB0")
    assert kind == DOCUMENTED_USB_IDS[vid, pid]
    chip = {"dgt": "FTDI", "certabo": "CP210x", "chessnut": "HID"}[kind]
    assert chip in label  # the label says what the id identifies: the adapter chip, or the HID board


@pytest.mark.parametrize(("vid", "pid"), [(0x0403, 0x6015), (0x0403, 0x6010), (0x10C4, 0xEA70), (0x2D80, 0x8700),
                                          (0x2D80, 0x7FFF), (0x2D80, 0x0001), (0x1A86, 0x7523), (0x2D80, None)])
def test_ids_the_docs_do_not_name_get_no_guess(vid: int, pid: int | None) -> None:
    assert ports._guess(vid, pid, "/dev/ttyUSB0") == (None, "")


def test_the_table_holds_only_documented_ids() -> None:
    for known in ports.KNOWN_USB_IDS:
        assert all((known.vid, pid) in DOCUMENTED_USB_IDS for pid in (known.pids[0], known.pids[-1]))
        assert known.source.startswith("protocols.md §")


async def test_chessnut_boards_on_usb_are_listed_with_their_driver_port(monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from drivers.chessnut.emulator import ChessnutUsbEmulator

    async with ChessnutUsbEmulator(pid=0x8001, serial="CN0042") as emu:
        [found] = ports.hid_candidates(backend=emu.backend)
        assert (found.device, found.usb_id, found.guess, found.serial_number) == ("usb:CN0042", "2d80:8001",
                                                                                   "chessnut", "CN0042")
        monkeypatch.setattr(list_ports, "comports", list)
        monkeypatch.setattr(ports, "hid_candidates", lambda: [found])
        parser = argparse.ArgumentParser()
        ports.configure_parser(parser)
        assert ports.run(parser.parse_args(["--probe", "--timeout", "0.1"])) == 0
        _header, line = capsys.readouterr().out.splitlines()  # listed, and not probed with DGT requests
        assert line.split()[:3] == ["usb:CN0042", "2d80:8001", "chessnut"] and "not a serial port" in line
        assert emu.received == []
