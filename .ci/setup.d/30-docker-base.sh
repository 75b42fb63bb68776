#!/usr/bin/env bash
# Make sure the Docker engine runs and the OCR agent's base image exists (deploy/make-base-image.sh; fast when
# it is already there). There is no registry here, so the image is made locally with debootstrap.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! docker info >/dev/null 2>&1; then
	echo "30-docker-base: starting the Docker engine"
	(command -v systemctl >/dev/null && systemctl start docker) 2>/dev/null || (nohup dockerd >/var/log/dockerd.log 2>&1 &)
	for _ in $(seq 1 30); do docker info >/dev/null 2>&1 && break; sleep 1; done
fi
deploy/make-base-image.sh
