// Package e2e holds the deployment tests of agentura: the agents' Docker
// images started with testcontainers-go, and the whole docker compose
// deployment driven from the host. They need the Docker engine and the image
// build context, so they sit behind the build tag e2e and run with
// `make e2e`, which builds both first; they fail, never skip, when Docker is
// missing.
package e2e
