#!/usr/bin/env bash
# make-base-image.sh — make the OCR agent's base image locally when the engine lacks it.
#
# The OCR image is built FROM a Debian bookworm root file system with tesseract and poppler already inside
# (deploy/Dockerfile.ocr, build argument BASE_IMAGE). On a machine that can pull from a registry the public
# debian:bookworm-slim works and this script is not needed. Here no registry can be reached, so the root file
# system is made with debootstrap from the machine's own apt mirror and `docker import`ed under the image name
# the Dockerfile expects. Nothing runs inside a container and no network is used but the apt mirror.
#
# Usage: deploy/make-base-image.sh [IMAGE]      (IMAGE defaults to $BASE_IMAGE, then debian:bookworm-slim)
# Environment: OCR_LANGS (tesseract codes, default those of deploy/Dockerfile.ocr) chooses the language packs put in
# with the script detection data (tesseract-ocr-osd); DEBIAN_MIRROR overrides the mirror (default: the first deb.debian.org-style URI in
# /etc/apt/sources.list*), FORCE=1 rebuilds even when the image exists. Needs root (debootstrap).
set -euo pipefail

image="${1:-${BASE_IMAGE:-debian:bookworm-slim}}"
suite=bookworm
packages=tesseract-ocr,tesseract-ocr-osd,poppler-utils,ca-certificates
for lang in ${OCR_LANGS:-eng deu fra spa ita por chi_sim jpn ara rus}; do
	packages="$packages,tesseract-ocr-$(echo "$lang" | tr '_A-Z' '-a-z')"
done

die() { echo "make-base-image: $*" >&2; exit 1; }

command -v docker >/dev/null || die "docker is not installed; run 'make deps' (as root)"
docker info >/dev/null 2>&1 || die "the Docker engine does not answer; start it (systemctl start docker or dockerd &)"

if [ "${FORCE:-0}" != 1 ] && docker image inspect "$image" >/dev/null 2>&1; then
	# An image of that name that lacks tesseract or some language packs (say, the real debian:bookworm-slim pulled
	# from a registry, or a base made before OCR_LANGS grew) still serves: Dockerfile.ocr installs what is missing.
	echo "make-base-image: $image is present"
	exit 0
fi

if ! command -v debootstrap >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	# `make up` on a fresh machine: debootstrap is the one package the base needs (.ci/apt.d/images.txt).
	"$(dirname "$0")/image-deps.sh" debootstrap
fi
if ! command -v debootstrap >/dev/null || [ "$(id -u)" != 0 ]; then
	# Where a registry is reachable, docker build pulls the public image itself.
	echo "make-base-image: $image is missing and cannot be made here (debootstrap needs root and 'make deps');" >&2
	echo "make-base-image: leaving it to docker build, which pulls it if a registry is reachable" >&2
	exit 0
fi

mirror="${DEBIAN_MIRROR:-}"
if [ -z "$mirror" ]; then
	# deb822 files (URIs: ...) and one-line files (deb URI suite ...): take the first main Debian archive.
	mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
		sed -n -e 's/^URIs:[[:space:]]*//p' -e 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]\+\).*/\2/p' |
		grep -E '/debian/?$' | grep -v security | head -n1 || true)
fi
mirror="${mirror:-http://deb.debian.org/debian}"

work=$(mktemp -d /var/tmp/agentura-rootfs.XXXXXX)
trap 'rm -rf "$work"' EXIT
echo "make-base-image: debootstrap $suite from $mirror (about a minute)"
debootstrap --variant=minbase --include="$packages" "$suite" "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 || {
	tail -n 30 "$work/debootstrap.log" >&2
	die "debootstrap failed (log above); check that $mirror is reachable (DEBIAN_MIRROR overrides it)"
}
# Slim it the way the public -slim image is: no apt lists, caches, docs or man pages.
rm -rf "$work/rootfs"/var/lib/apt/lists/* "$work/rootfs"/var/cache/apt/*.bin "$work/rootfs"/var/cache/apt/archives/*.deb \
	"$work/rootfs"/usr/share/doc/* "$work/rootfs"/usr/share/man/* "$work/rootfs"/usr/share/info/*
echo "make-base-image: importing as $image"
tar -C "$work/rootfs" --numeric-owner -c . |
	docker import --change 'CMD ["bash"]' --change 'ENV LANG=C.UTF-8' \
		--message "debootstrap --variant=minbase --include=$packages $suite" - "$image" >/dev/null
docker run --rm --network none "$image" tesseract --version 2>&1 | head -n1
echo "make-base-image: $image ready"
