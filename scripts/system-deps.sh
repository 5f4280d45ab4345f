#!/usr/bin/env bash
# Install the system packages the tests need (Debian/Raspberry Pi OS), only where missing.
#   mosquitto  - the tests start their own brokers on free ports
#   chromium   - browser tests of the broadcast screen and arbiter tablet
#   openssl    - the TLS tests make a private CA at test time
#   systemd    - systemd-analyze verifies the unit files
#   strace     - the journal test that sees a committed move fsynced before it is published
# Usage: scripts/system-deps.sh [mosquitto] [chromium] [openssl] [systemd] [strace]   (default: all)
set -euo pipefail
want=("$@")
[ ${#want[@]} -gt 0 ] || want=(mosquitto chromium openssl systemd strace)
missing=()
for pkg in "${want[@]}"; do
  case "$pkg" in
    mosquitto) command -v mosquitto >/dev/null 2>&1 || [ -x /usr/sbin/mosquitto ] || missing+=(mosquitto) ;;
    chromium)  command -v chromium >/dev/null 2>&1 || missing+=(chromium) ;;
    openssl)   command -v openssl >/dev/null 2>&1 || missing+=(openssl) ;;
    systemd)   command -v systemd-analyze >/dev/null 2>&1 || missing+=(systemd) ;;
    strace)    command -v strace >/dev/null 2>&1 || missing+=(strace) ;;
    *) echo "unknown package $pkg" >&2; exit 2 ;;
  esac
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "installing system packages: ${missing[*]}" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
