#!/usr/bin/env bash
# Builds Jaeger v1.75.0 (the v2 all-in-one collector and query service, `cmd/jaeger`), the trace store and
# query API of `make up-trace` and its end-to-end test (deploy/e2e TestComposeTrace), from the Go module proxy.
# deploy/jaeger is a tools module that pins it, as deploy/hydra pins Hydra. It is built static (CGO_ENABLED=0:
# its storage here is the in-memory one) so that `make image-jaeger` puts it on scratch. The module embeds only
# Jaeger's placeholder UI page (the real UI is built with npm): the traces are read through the query API.
# It lands in $(go env GOPATH)/bin. The first build is slow (19.5 minutes on two cores busy with Hydra's first build
# and other work; 81 MiB), a rebuild with a warm build cache about 15 s; it is skipped when that version, built
# static, is already there.
set -euo pipefail
cd "$(dirname "$0")/../.."
version=v1.75.0
bin="$(go env GOPATH)/bin/jaeger"
info=$(go version -m "$bin" 2>/dev/null || true)
if grep -q "[[:space:]]github.com/jaegertracing/jaeger[[:space:]]*$version" <<<"$info" && grep -q "CGO_ENABLED=0" <<<"$info"; then
	exit 0
fi
echo "setup: building jaeger $version from deploy/jaeger (slow the first time)"
# The version its log and `jaeger version` print is set at link time, as Jaeger's own release build does.
CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build -C deploy/jaeger -trimpath \
	-ldflags="-s -w -X github.com/jaegertracing/jaeger/internal/version.latestVersion=$version" \
	-o "$bin" github.com/jaegertracing/jaeger/cmd/jaeger
