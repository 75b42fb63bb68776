#!/usr/bin/env bash
# Docker for the deploy tests (make e2e): the engine and Compose when missing (Debian's docker.io and
# docker-compose; a machine with Docker's own packages keeps them), the engine started, and the OCR agent's base
# image made when missing (deploy/make-base-image.sh: no registry here, so debootstrap). Fast when all is there.
set -euo pipefail
cd "$(dirname "$0")/../.."
export DEBIAN_FRONTEND=noninteractive
need=()
command -v docker >/dev/null || need+=(docker.io)
docker compose version >/dev/null 2>&1 || command -v docker-compose >/dev/null || need+=(docker-compose)
if [ ${#need[@]} -gt 0 ]; then
	echo "30-docker-base: apt-get install ${need[*]}"
	apt-get install -y -qq --no-install-recommends "${need[@]}" || { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need[@]}"; }
fi
if ! docker info >/dev/null 2>&1; then
	echo "30-docker-base: starting the Docker engine"
	(command -v systemctl >/dev/null && systemctl start docker) 2>/dev/null || (nohup dockerd >/var/log/dockerd.log 2>&1 &)
	for _ in $(seq 1 30); do docker info >/dev/null 2>&1 && break; sleep 1; done
	docker info >/dev/null 2>&1 || { echo "30-docker-base: the Docker engine did not start; see /var/log/dockerd.log" >&2; exit 1; }
fi
deploy/make-base-image.sh
