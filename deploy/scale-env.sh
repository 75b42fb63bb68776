#!/usr/bin/env bash
# scale-env.sh — make the settings file of the scale-out deployment when it is missing (make up-scale runs it).
#
# Usage: deploy/scale-env.sh [FILE]      (FILE defaults to deploy/.env.scale)
#
# An existing FILE is left as it is. A missing one is written from deploy/.env.scale.example with the three
# secrets filled in from /dev/urandom (via openssl rand): SCALE_SIGNING_KEY (32 bytes, base64), S3_ACCESS_KEY
# (10 bytes, hex) and S3_SECRET_KEY (30 bytes, hex). It is created with mode 0600 and never printed.
set -euo pipefail
cd "$(dirname "$0")/.."
file="${1:-deploy/.env.scale}"
example=deploy/.env.scale.example
die() { echo "scale-env: $*" >&2; exit 1; }

if [ -e "$file" ]; then
	exit 0
fi
command -v openssl >/dev/null || die "openssl is needed to make the secrets of $file; install it (apt-get install openssl)"
[ -f "$example" ] || die "$example is missing; run from a checkout of the repository"
signing=$(openssl rand -base64 32)
access=$(openssl rand -hex 10)
secret=$(openssl rand -hex 30)
umask 077
tmp=$(mktemp "$file.XXXXXX")
trap 'rm -f "$tmp"' EXIT
sed -e "s|^SCALE_SIGNING_KEY=.*|SCALE_SIGNING_KEY=$signing|" \
	-e "s|^S3_ACCESS_KEY=.*|S3_ACCESS_KEY=$access|" \
	-e "s|^S3_SECRET_KEY=.*|S3_SECRET_KEY=$secret|" "$example" >"$tmp"
for v in SCALE_SIGNING_KEY S3_ACCESS_KEY S3_SECRET_KEY; do
	grep -Eq "^$v=.+" "$tmp" || die "$example has no line $v= to fill in"
done
chmod 0600 "$tmp"
mv "$tmp" "$file"
trap - EXIT
echo "scale-env: $file was missing: wrote it with a fresh signing key and S3 keys (mode 0600; keep it secret, back it up)"
