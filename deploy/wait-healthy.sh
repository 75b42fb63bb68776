#!/usr/bin/env bash
# wait-healthy.sh COMPOSE_FILE[:COMPOSE_FILE...] [TIMEOUT_SECONDS] — wait until every container of the Compose
# project is healthy (what `docker compose up --wait` does in Compose v2; Compose v1 lacks it). A project of several
# files (make up-auth: docker-compose.yml and docker-compose.auth.yml) names them all, separated by colons as in
# Compose's own COMPOSE_FILE: Compose lists only the containers of the services the files it is given define.
# A container that stops (exited, dead, restarting) fails it at once; one that is unhealthy is waited on, as Docker
# goes on checking it. On a timeout it prints each container's health log and last log lines and fails.
set -euo pipefail
files="${1:?usage: wait-healthy.sh COMPOSE_FILE[:COMPOSE_FILE...] [TIMEOUT_SECONDS]}"
timeout="${2:-120}"
if docker compose version >/dev/null 2>&1; then compose=(docker compose); else compose=(docker-compose); fi
IFS=: read -ra list <<<"$files"
for f in "${list[@]}"; do compose+=(-f "$f"); done

mapfile -t ids < <("${compose[@]}" ps -a -q)
[ ${#ids[@]} -gt 0 ] || { echo "wait-healthy: no containers in $files; did 'up' fail?" >&2; exit 1; }
deadline=$((SECONDS + timeout))
while :; do
	pending=()
	for id in "${ids[@]}"; do
		state=$(docker inspect -f '{{.Name}} {{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}{{else}}no-healthcheck{{end}}' "$id")
		read -r name status health <<<"$state"
		case "$status/$health" in
		running/healthy) ;;
		exited/* | dead/* | restarting/*)
			echo "wait-healthy: ${name#/} is $status/$health" >&2
			docker inspect -f '{{if .State.Health}}{{range .State.Health.Log}}{{.Output}}{{end}}{{end}}' "$id" >&2 || true
			docker logs --tail 30 "$id" >&2 || true
			exit 1
			;;
		# unhealthy (its last checks failed, e.g. a slow answer on a loaded machine) is waited on: Docker goes on
		# checking, and one check that passes makes it healthy again.
		*) pending+=("${name#/}:$status/$health") ;;
		esac
	done
	[ ${#pending[@]} -eq 0 ] && { echo "wait-healthy: all ${#ids[@]} containers healthy"; exit 0; }
	if [ $SECONDS -ge $deadline ]; then
		echo "wait-healthy: still not healthy after ${timeout}s: ${pending[*]}" >&2
		for id in "${ids[@]}"; do
			docker inspect -f '{{.Name}}: {{if .State.Health}}{{range .State.Health.Log}}{{.Output}}{{end}}{{end}}' "$id" >&2 || true
			docker logs --tail 30 "$id" >&2 || true
		done
		exit 1
	fi
	sleep 1
done
