#!/usr/bin/env bash
# e2e.sh — the deployment tests (make e2e runs it after `make images`): the Go tests tagged e2e in deploy/e2e (a module of its own),
# which start the composer image with testcontainers-go and the whole docker compose project, driven from the
# host. Whatever happens, the compose project of the test is taken down again (volumes included).
# E2E_OCR_PORT / E2E_COMPOSER_PORT move the published ports (default 8001 / 8002); E2E_RUN picks tests (go test -run);
# E2E_LOAD_DURATION is the length of the load test through the scale-out balancer (default 20s); E2E_TIMEOUT bounds
# the go test (default 30m).
set -euo pipefail
cd "$(dirname "$0")/.."
project=agenturae2e
log=$(mktemp)
if docker compose version >/dev/null 2>&1; then compose=(docker compose); else compose=(docker-compose); fi
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
	rm -f "$log"
}
trap teardown EXIT INT TERM
docker info >/dev/null 2>&1 || { echo "e2e: the Docker engine does not answer; run 'make deps' and start it" >&2; exit 1; }
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
