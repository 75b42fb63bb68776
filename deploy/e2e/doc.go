// Package e2e holds the deployment tests of agentura: the agents' Docker
// images started with testcontainers-go, and the whole docker compose
// deployment driven from the host with the agentura CLI. They need the Docker
// engine and the image build context, so they sit behind the build tag e2e
// and run with `make e2e`, which builds both first and sets
// AGENTURA_REQUIRE_TOOLS=1: there they fail, never skip, when Docker is
// missing (internal/testkit/requiretool). They are a Go module of their own (go.mod here, on
// the library through a replace directive), so that testcontainers-go and the
// Docker client stay out of the library's go.mod. The check that the env
// examples document the compose files needs no Docker: it is package deploy's
// test, in plain `make test`.
package e2e
