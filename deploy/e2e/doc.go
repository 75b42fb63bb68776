// Package e2e holds the deployment tests of agentura: the agents' Docker
// images started with testcontainers-go, and the whole docker compose
// deployment driven from the host with the agentura CLI. They need the Docker
// engine and the image build context, so they sit behind the build tag e2e
// and run with `make e2e`, which builds both first; they fail, never skip,
// when Docker is missing. Only the check that deploy/.env.example documents
// every variable of the compose file runs in plain `make test`.
package e2e
