# agentura — the commands the README promises.
GO          ?= go
BENCH_COUNT ?= 5
BENCH_PKGS  ?= ./fileserve ./agentcore

.PHONY: deps build run test bench bench-baseline fuzz lint run-ocr bench-ocr

## deps: install the Debian packages and tools the tests need (.ci/apt.d, .ci/setup.d; needs root)
deps:
	.ci/install-deps

## build: compile every binary into bin/
build:
	$(GO) build -o bin/ $(addprefix ./,$(wildcard cmd/*)) ./examples/fileagent/cmd/fileagent ./examples/a2apipeline/cmd/a2apipeline

## run: start the example agent on :8000 (MCP at /mcp, downloads at /files/)
run:
	$(GO) run ./examples/fileagent/cmd/fileagent

## run-ocr: start the OCR agent on :8001 (needs tesseract and pdftoppm: make deps)
run-ocr:
	$(GO) run ./cmd/ocr-agent

## test: every test, with the race detector
test:
	$(GO) test -race -count=1 ./...

## bench: run the benchmarks, print the targets table and compare with bench/baseline.txt
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count $(BENCH_COUNT) $(BENCH_PKGS) | tee bench/latest.txt
	$(GO) run ./internal/benchreport bench/latest.txt
	$(GO) tool benchstat bench/baseline.txt bench/latest.txt

## bench-ocr: the OCR agent against plain tesseract/pdftoppm on a 10-page PDF, and ocr_batch on 1 vs 2
## processes, best of 3 runs each (slow: about 5 minutes; kept out of BENCH_PKGS)
OCR_BENCH_COUNT ?= 1
bench-ocr:
	$(GO) test -run '^$$' -bench . -benchtime 3x -count $(OCR_BENCH_COUNT) ./agents/ocr | tee bench/ocr-latest.txt

## bench-baseline: record the current numbers as the baseline
bench-baseline:
	$(GO) test -run '^$$' -bench . -benchmem -count $(BENCH_COUNT) $(BENCH_PKGS) | tee bench/baseline.txt

## bench-s3: download throughput from S3 (versitygw) through /files/ against a presigned GET straight from S3,
##   and the heap a 64 MiB upload into S3 takes
##   (starts versitygw, hence not in BENCH_PKGS; needs `make deps`)
.PHONY: bench-s3
bench-s3:
	$(GO) test -run '^$$' -bench BenchmarkS3 -benchmem -benchtime 20x -count $(BENCH_COUNT) ./fileserve/s3bench

## bench-client: the host side's 30 MiB round trip (through /uploads and inline), MB/s and peak heap
.PHONY: bench-client
bench-client:
	$(GO) test -run '^$$' -bench RoundTrip30MiB -benchtime 5x -count $(BENCH_COUNT) ./client

## fuzz: run each fuzz target for FUZZTIME (their seed corpora run in make test)
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzResolve$$' -fuzztime $(FUZZTIME) ./agentcore
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeArgs$$' -fuzztime $(FUZZTIME) ./agentcore
	$(GO) test -run '^$$' -fuzz '^FuzzClean$$' -fuzztime $(FUZZTIME) ./filename

## lint: gofmt and go vet must be silent
lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

.PHONY: bench-composer run-composer

## bench-composer: the composer's benchmark: a 20-page document with 10 pictures rendered in each format
bench-composer:
	$(GO) test -run '^$$' -bench BenchmarkCompose -benchmem -count $(BENCH_COUNT) ./agents/composer

## run-composer: start the composer agent on :8002
run-composer:
	$(GO) run ./cmd/composer-agent
