#!/usr/bin/env bash
# e2e.sh — the deployment tests (make e2e runs it after `make images`): the Go tests tagged e2e in deploy/e2e (a module of its own),
# which start the composer image with testcontainers-go and the whole docker compose project, driven from the
# host. It runs beside other deployments on the same engine and machine:
#   E2E_PROJECT  the base of this run's Compose project names (default agenturae2e-<random>, new each run): the
#                tests use it and it with the suffixes scale, tasks, auth and nginx. A run refuses to start when
#                any of them exists already, and takes down (volumes included), whatever happens, those and no other.
#   E2E_OCR_PORT / E2E_COMPOSER_PORT / E2E_HYDRA_PORT / E2E_LOGIN_PORT  the loopback ports the agents, Hydra and the
#                demo login are published on; each one not given is picked free (internal/cmd/freeport). The
#                scale-out and nginx tests pick their own free ports, and the trace test its Jaeger ports.
# E2E_RUN picks tests (go test -run); E2E_LOAD_DURATION is the length of the load test through the scale-out
# balancer (default 20s); E2E_TIMEOUT bounds the go test (default 30m).
set -euo pipefail
cd "$(dirname "$0")/.."
project=${E2E_PROJECT:-agenturae2e-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')}
# Compose's rule for project names (the suffixes keep to it).
if ! [[ $project =~ ^[a-z0-9][a-z0-9_-]*$ ]]; then
	echo "e2e: E2E_PROJECT=$project is not a Compose project name (lowercase letters, digits, - and _; a letter or digit first)" >&2
	exit 1
fi
export E2E_PROJECT=$project
projects=("$project" "${project}scale" "${project}tasks" "${project}auth" "${project}nginx" "${project}trace")
if docker compose version >/dev/null 2>&1; then compose=(docker compose); else compose=(docker-compose); fi
docker info >/dev/null 2>&1 || { echo "e2e: the Docker engine does not answer; run 'make deps' and start it" >&2; exit 1; }
# This run takes its projects down at the end, volumes included: they must be its own.
for p in "${projects[@]}"; do
	filter=label=com.docker.compose.project=$p
	if [ -n "$(docker ps -aq --filter "$filter")$(docker volume ls -q --filter "$filter")$(docker network ls -q --filter "$filter")" ]; then
		echo "e2e: the Compose project $p exists already (containers, volumes or networks); this run would take it down at its end." >&2
		echo "e2e: set E2E_PROJECT to a base name of your own (its projects: ${projects[*]})" >&2
		exit 1
	fi
done
# The ports not given: free loopback ports now (the compose files publish on BIND_ADDR, 127.0.0.1).
need=()
for v in E2E_OCR_PORT E2E_COMPOSER_PORT E2E_HYDRA_PORT E2E_LOGIN_PORT; do
	if [ -z "${!v:-}" ]; then need+=("$v"); fi
done
if [ ${#need[@]} -gt 0 ]; then
	free=$(go run ./internal/cmd/freeport ${#need[@]})
	read -r -a ports <<<"$free"
	for i in "${!need[@]}"; do export "${need[$i]}=${ports[$i]}"; done
fi
echo "e2e: projects ${projects[*]}; ports: ocr $E2E_OCR_PORT, composer $E2E_COMPOSER_PORT, hydra $E2E_HYDRA_PORT, login $E2E_LOGIN_PORT"
log=$(mktemp)
teardown() {
	"${compose[@]}" -p "$project" -f deploy/docker-compose.yml down --volumes --remove-orphans --timeout 10 >/dev/null 2>&1 || true
	# The scale-out tests' projects (TestComposeScale, TestScaleTasks); the file needs its secrets set, any value
	# does for down.
	for p in "${project}scale" "${project}tasks"; do
		SCALE_SIGNING_KEY=x S3_ACCESS_KEY=x S3_SECRET_KEY=x "${compose[@]}" -p "$p" -f deploy/docker-compose.scale.yml \
			down --volumes --remove-orphans --timeout 10 >/dev/null 2>&1 || true
	done
	# The sign-in test's project (TestComposeAuth): the agents with Hydra and the demo login.
	"${compose[@]}" -p "${project}auth" -f deploy/docker-compose.yml -f deploy/docker-compose.auth.yml \
		down --volumes --remove-orphans --timeout 10 >/dev/null 2>&1 || true
	# The nginx variant's project (TestComposeNginx).
	"${compose[@]}" -p "${project}nginx" -f deploy/docker-compose.nginx.yml down --volumes --remove-orphans --timeout 10 >/dev/null 2>&1 || true
	# The tracing test's project (TestComposeTrace): the agents with Jaeger.
	"${compose[@]}" -p "${project}trace" -f deploy/docker-compose.yml -f deploy/docker-compose.trace.yml \
		down --volumes --remove-orphans --timeout 10 >/dev/null 2>&1 || true
	rm -f "$log"
}
trap teardown EXIT INT TERM
# The tests were asked for: a missing tool (docker compose, pdftotext) fails them instead of skipping them.
export AGENTURA_REQUIRE_TOOLS=1
export TESTCONTAINERS_RYUK_DISABLED=true TESTCONTAINERS_HOST_OVERRIDE="${TESTCONTAINERS_HOST_OVERRIDE:-127.0.0.1}"
# deploy/e2e is a module of its own (its go.mod keeps testcontainers-go out of the library's): test it from there.
(cd deploy/e2e && go test -tags e2e -count=1 -timeout "${E2E_TIMEOUT:-30m}" -v -run "${E2E_RUN:-.}" .) 2>&1 | tee "$log"
# A -run that matches no test passes in go test: here it is a failure, nothing was tested.
if grep -q '^testing: warning: no tests to run' "$log"; then
	echo "e2e: no test matches E2E_RUN=${E2E_RUN:-.}: nothing was tested" >&2
	exit 1
fi
