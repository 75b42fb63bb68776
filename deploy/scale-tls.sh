#!/usr/bin/env bash
# scale-tls.sh — the certificate of the scale-out deployment's load balancer, from a local CA (make up-scale runs it).
#
# Usage: deploy/scale-tls.sh [DIR]      (DIR defaults to build/scale-tls)
#
# Makes, when missing, in DIR (mode 0700): ca.pem and ca.key (a local CA, 10 years; the key stays 0600) and
# lb.pem, the balancer's certificate for localhost, 127.0.0.1 and ::1 (825 days) followed by its key, as HAProxy
# reads it. lb.pem is mode 0644 so that the balancer's unprivileged user reads it through the bind mount; DIR's
# 0700 keeps other users of this machine out. Trust the CA for a client with `curl --cacert DIR/ca.pem`.
# SCALE_TLS_NAMES adds host names (comma-separated) to the certificate.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build/scale-tls}"
die() { echo "scale-tls: $*" >&2; exit 1; }
command -v openssl >/dev/null || die "openssl is needed to make the balancer's certificate; install it (apt-get install openssl)"
mkdir -p "$dir"
chmod 0700 "$dir"
umask 077
if [ ! -f "$dir/ca.pem" ] || [ ! -f "$dir/ca.key" ]; then
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 -subj "/CN=agentura local CA" \
		-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
		-keyout "$dir/ca.key" -out "$dir/ca.pem" 2>/dev/null
	chmod 0644 "$dir/ca.pem"
	rm -f "$dir/lb.pem"
	echo "scale-tls: made a local CA: $dir/ca.pem (use it with curl --cacert $dir/ca.pem)"
fi
if [ ! -f "$dir/lb.pem" ]; then
	san="DNS:localhost,IP:127.0.0.1,IP:::1"
	IFS=, read -ra extra <<<"${SCALE_TLS_NAMES:-}"
	for n in "${extra[@]}"; do [ -n "$n" ] && san="$san,DNS:$n"; done
	tmp=$(mktemp -d "$dir/.lb.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=localhost" \
		-keyout "$tmp/key.pem" -out "$tmp/req.pem" 2>/dev/null
	printf 'subjectAltName=%s\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n' "$san" >"$tmp/ext.cnf"
	openssl x509 -req -in "$tmp/req.pem" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial -days 825 \
		-extfile "$tmp/ext.cnf" -out "$tmp/cert.pem" 2>/dev/null
	cat "$tmp/cert.pem" "$tmp/key.pem" >"$tmp/lb.pem"
	chmod 0644 "$tmp/lb.pem"
	mv "$tmp/lb.pem" "$dir/lb.pem"
	echo "scale-tls: made the balancer's certificate for $san: $dir/lb.pem"
fi
echo "scale-tls: clients trust https://localhost with the CA $(cd "$dir" && pwd)/ca.pem"
