#!/usr/bin/env bash
# Builds Ory Hydra v2.3.0, the OAuth 2.1 / OpenID Connect provider of the OAuth tests (internal/testkit/hydratest) and of
# `make up-auth`, from the Go module proxy. deploy/hydra is a tools module that pins it: `go install hydra@v2.3.0`
# refuses a module whose go.mod has replace directives, and a dependency's replace is ignored, so the tools module
# carries the one Hydra needs itself (its fork of gobuffalo/pop). cgo and the sqlite tags give the in-memory
# database (DSN=memory) the tests and the demo use. It lands in $(go env GOPATH)/bin, where the tests look for it.
# The first build is slow (10-20 minutes on two busy cores; about a minute once the build cache is warm), so it is
# skipped when that version, built with the sqlite tag, is already there.
set -euo pipefail
cd "$(dirname "$0")/../.."
version=v2.3.0
bin="$(go env GOPATH)/bin/hydra"
info=$(go version -m "$bin" 2>/dev/null || true)
if grep -q "[[:space:]]github.com/ory/hydra/v2[[:space:]]*$version" <<<"$info" && grep -q -- "-tags=sqlite" <<<"$info"; then
	exit 0
fi
command -v gcc >/dev/null || { echo "setup: hydra needs gcc (cgo, for SQLite): apt-get install gcc" >&2; exit 1; }
echo "setup: building hydra $version from deploy/hydra (slow the first time)"
CGO_ENABLED=1 GOFLAGS=-buildvcs=false go build -C deploy/hydra -trimpath -ldflags='-s -w' \
	-tags sqlite,sqlite_omit_load_extension -o "$bin" github.com/ory/hydra/v2
