#!/usr/bin/env bash
# Make a private CA and a server certificate for the hall broker's TLS listener, with openssl.
# Good for tests and for a hall whose clients all trust this CA; a real deployment may use
# certificates from the organiser's own CA instead (README.md).
#
# Usage: make-test-ca.sh OUTDIR [SERVER_NAME [EXTRA_SAN]...] [-c CLIENT]...
#   SERVER_NAME  DNS name of the hall broker (default: hall.boardd.lan)
#   EXTRA_SAN    more subjectAltName entries, e.g. DNS:localhost IP:127.0.0.1 IP:192.168.1.10
#   -c CLIENT    also make a client certificate with CN=CLIENT (for require_certificate true)
# Writes OUTDIR/boardd-ca.crt (give it to every client: bridge_cafile / cafile),
# OUTDIR/boardd-ca.key (keep offline), OUTDIR/boardd-hall.crt + .key (certfile/keyfile),
# and OUTDIR/CLIENT.crt + .key per -c. Keys are EC P-256; validity 825 days.
set -euo pipefail

clients=()
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    -c) clients+=("$2"); shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) args+=("$1"); shift ;;
  esac
done
[ ${#args[@]} -ge 1 ] || { echo "usage: $0 OUTDIR [SERVER_NAME [EXTRA_SAN]...] [-c CLIENT]..." >&2; exit 2; }
command -v openssl >/dev/null || { echo "openssl not found: apt-get install openssl" >&2; exit 1; }
out=${args[0]}
server=${args[1]:-hall.boardd.lan}
san="DNS:$server"
for extra in "${args[@]:2}"; do san="$san,$extra"; done
days=825

umask 077
mkdir -p "$out"
cd "$out"

openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -sha256 \
  -keyout boardd-ca.key -out boardd-ca.crt -days "$days" -subj "/O=boardd/CN=boardd test CA" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null

issue() {
  local name=$1 subject=$2 ext=$3
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -sha256 \
    -keyout "$name.key" -out "$name.csr" -subj "$subject" 2>/dev/null
  openssl x509 -req -in "$name.csr" -CA boardd-ca.crt -CAkey boardd-ca.key -CAcreateserial \
    -out "$name.crt" -days "$days" -sha256 -extfile <(printf '%s\n' "$ext") 2>/dev/null
  rm -f "$name.csr"
}

issue boardd-hall "/O=boardd/CN=$server" \
  "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=$san"
for client in "${clients[@]}"; do
  issue "$client" "/O=boardd/CN=$client" \
    "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth"
done
rm -f boardd-ca.srl
# The broker (user mosquitto) and clients must read the certificates; keys stay private.
chmod 0644 ./*.crt
echo "wrote CA and certificates to $out (server $san)" >&2
