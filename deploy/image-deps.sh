#!/usr/bin/env bash
# image-deps.sh [PACKAGE...] — what building the images needs on this machine, installed when missing, so that
# `make up` works on a fresh Debian before `make deps`/`make check` ever ran. The packages are those given, or
# those of .ci/apt.d/images.txt; as root they are installed with apt-get (apt-get update first when the package
# lists are stale), otherwise the script names the command to run and fails. It then checks that the Docker engine
# and Compose (v2 or v1.27+) are there and answer, saying how to get them when not.
set -euo pipefail
cd "$(dirname "$0")/.."
die() { echo "image-deps: $*" >&2; exit 1; }

if [ $# -gt 0 ]; then
	wanted=("$@")
else
	mapfile -t wanted < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' .ci/apt.d/images.txt | grep -v '^$')
fi
missing=()
for pkg in "${wanted[@]}"; do
	dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
	command -v apt-get >/dev/null || die "the image build needs ${missing[*]} (Debian packages) and this machine has no apt-get"
	[ "$(id -u)" = 0 ] || die "the image build needs ${missing[*]}: run 'sudo apt-get install ${missing[*]}' (or 'sudo make deps'), then make again"
	echo "image-deps: apt-get install ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
		{ apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}"; }
fi
[ $# -gt 0 ] && exit 0 # a package asked for by name (make-base-image.sh): no Docker check here

command -v docker >/dev/null || die "docker is not installed: run 'make deps' as root (Debian's docker.io and docker-compose), or install Docker's own packages"
docker info >/dev/null 2>&1 || die "the Docker engine does not answer: start it (systemctl start docker, or dockerd &), or run 'make deps' as root"
docker compose version >/dev/null 2>&1 || command -v docker-compose >/dev/null ||
	die "Docker Compose is missing (neither 'docker compose' nor docker-compose): apt-get install docker-compose, or run 'make deps' as root"
