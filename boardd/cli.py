"""Command-line front end.

Each sub-command lives in its own module, which provides
``configure_parser(parser: argparse.ArgumentParser) -> None`` and
``run(args: argparse.Namespace) -> int``. Modules are imported lazily, so that
``boardd replay`` does not pay for aiohttp and a missing optional extra only
breaks the command that needs it.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
import textwrap
from collections.abc import Sequence

from boardd import __version__

#: sub-command -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("boardd.daemon.service", "run the daemon: board -> engine -> MQTT"),
    "demo": ("boardd.daemon.demo", "simulated board + daemon + broker, no hardware needed"),
    "check-config": ("boardd.daemon.config", "validate a configuration file"),
    "replay": ("boardd.daemon.replay", "replay an event log or a device capture; print what would be published"),
    "simulate": ("drivers.sim", "write the event log of a simulated game (PGN or random)"),
    "ports": ("drivers.ports", "list candidate board devices"),
    "record": ("drivers.record", "record raw device traffic to a capture file"),
    "relay": ("boardd.consumers.relay", "live-transmission relay: MQTT -> PGN folders, HTTP, lichess push"),
    "web": ("boardd.consumers.web.app", "broadcast screen and arbiter tablet"),
    "setup": ("boardd.daemon.setup", "set up this Pi for one board: config, user, udev, systemd unit (as root)"),
    "round": ("boardd.consumers.round", "a round from the pairing program to the boards, and its results back"),
}

TRACE = 5


def _setup_logging(verbosity: int) -> None:
    logging.addLevelName(TRACE, "TRACE")
    level = {0: logging.WARNING, 1: logging.INFO, 2: logging.DEBUG}.get(verbosity, TRACE)
    logging.basicConfig(
        level=level,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


def _chosen_command(argv: Sequence[str]) -> str | None:
    for token in argv:
        if token in COMMANDS:
            return token
        if not token.startswith("-"):
            return None
    return None


class _HelpFormatter(argparse.HelpFormatter):
    """Help text wrapped at spaces only: a name with hyphens (``released-changed``, ``--time-control``) stays whole
    on one line, so that it can be read, copied and searched for."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; only *command*'s module is imported and configured.

    A module that cannot be imported (a missing optional extra) or configured makes only its
    own sub-command unavailable, with the reason, never the whole CLI.
    """
    parser = argparse.ArgumentParser(prog="boardd", description="boardd: e-boards and clocks to the tournament hall.")
    parser.add_argument("--version", action="version", version=f"boardd {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="more logging on stderr (-v info, -vv debug, -vvv trace)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in COMMANDS.items():
        sub = subparsers.add_parser(name, help=help_text, description=help_text, formatter_class=_HelpFormatter)
        sub.set_defaults(_module=module_name)
        if name != command:
            continue
        try:
            module = importlib.import_module(module_name)
            module.configure_parser(sub)
        except Exception as exc:  # reported to the user as "unavailable"
            sub.set_defaults(_import_error=f"{type(exc).__name__}: {exc}")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``boardd`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_chosen_command(argv))
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help(sys.stderr)
        return 2
    _setup_logging(args.verbose)
    if getattr(args, "_import_error", None):
        print(f"boardd {args.command}: unavailable: {args._import_error}", file=sys.stderr)
        return 2
    module = importlib.import_module(args._module)
    try:
        result: int = module.run(args)
    except KeyboardInterrupt:
        return 130
    return result
