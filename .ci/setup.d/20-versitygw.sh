#!/usr/bin/env bash
# Builds versitygw, the S3-compatible server the S3 store tests and the scale-out end-to-end test start
# (fileserve/s3test). It lands in $(go env GOPATH)/bin, where the tests look for it. The build takes about
# four minutes on two cores, so it is skipped when the pinned version is already there. It is built static
# (CGO_ENABLED=0) so that `make image-s3` can put the same binary on scratch instead of building it again.
set -euo pipefail
version=v1.8.0
bin="$(go env GOPATH)/bin/versitygw"
# The binary carries no version of its own ("git"); its build info names the module version.
info=$(go version -m "$bin" 2>/dev/null || true)
if grep -q "mod[[:space:]]*github.com/versity/versitygw[[:space:]]*$version" <<<"$info" && grep -q "CGO_ENABLED=0" <<<"$info"; then
	exit 0
fi
echo "setup: go install github.com/versity/versitygw/cmd/versitygw@$version (takes a few minutes)"
CGO_ENABLED=0 GOFLAGS=-buildvcs=false go install -trimpath -ldflags='-s -w' "github.com/versity/versitygw/cmd/versitygw@$version"
