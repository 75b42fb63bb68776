#!/usr/bin/env bash
# .ci/fuzz-ci.sh TIME PKG:Target... — each fuzz target for TIME (`make fuzz-ci`, run by `make check`); FUZZ_TIMEOUT
# (default 10m) bounds each go test, its build and seed corpus included.
#
# A target fails the run when it finds an input (go test writes it under PKG/testdata/fuzz/Target/: commit it, it
# then runs in every go test) or fails any other way. One failure is let through, loudly: Go 1.26's fuzz
# coordinator can report "context deadline exceeded" at the end of -fuzztime when a worker is slow to stop, with no
# input found (go.dev/issue/75804, fixed in Go 1.27). That is told apart by its exact output: that line as the
# failure's only reason, and no new file under testdata/fuzz.
set -uo pipefail
time=${1:?usage: .ci/fuzz-ci.sh TIME PKG:Target...}
shift
go=${GO:-go}
timeout=${FUZZ_TIMEOUT:-10m}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for t in "$@"; do
	pkg=${t%%:*} name=${t##*:}
	corpus="$pkg/testdata/fuzz/$name"
	before=$(ls "$corpus" 2>/dev/null | sort)
	echo "fuzz $pkg $name ($time)"
	if "$go" test -run '^$' -fuzz "^$name\$" -fuzztime "$time" -timeout "$timeout" -parallel 2 "$pkg" 2>&1 | tee "$out"; then
		continue
	fi
	after=$(ls "$corpus" 2>/dev/null | sort)
	reasons=$(grep -v -e '^fuzz: ' -e '^--- FAIL: ' -e '^FAIL' -e '^exit status ' -e '^ok ' "$out" | grep -v '^\s*$')
	if [ "$before" = "$after" ] && [ "$(printf '%s\n' "$reasons" | sed 's/^\s*//')" = "context deadline exceeded" ]; then
		echo "fuzz-ci: $name: Go's fuzz coordinator missed its own stop deadline (go.dev/issue/75804), no input found; not a finding" >&2
		continue
	fi
	echo "fuzz-ci: $name failed; a new input is under $corpus when it found one" >&2
	exit 1
done
