# agentura — the commands the README promises.
GO          ?= go
BENCH_COUNT ?= 5
BENCH_PKGS  ?= ./internal/lib/filehttp ./agentcore

.PHONY: deps build run test bench bench-baseline bench-client fuzz lint run-ocr bench-ocr

## build (the default goal, `make` alone): compile every binary into bin/
build:
	$(GO) build -tags '$(GO_TAGS)' -o bin/ $(addprefix ./,$(wildcard cmd/*)) ./examples/fileagent/cmd/fileagent ./examples/a2apipeline/cmd/a2apipeline

## deps: install the Debian packages and tools the tests need (.ci/apt.d, .ci/setup.d; needs root)
deps:
	.ci/install-deps

## check: everything CI checks, on a fresh machine too: install what the tests need, lint, every test with -race,
##   then the Docker deployment tests (make e2e). .ci/run is this target.
check: deps
	$(MAKE) lint
	$(MAKE) test
	$(MAKE) fuzz-ci
	$(MAKE) e2e

## run: start the example agent on :8000 (MCP at /mcp, downloads at /files/)
run:
	$(GO) run ./examples/fileagent/cmd/fileagent

## run-ocr: start the OCR agent on :8001 (needs tesseract and pdftoppm: make deps)
run-ocr:
	$(GO) run ./cmd/ocr-agent

## test: every test, with the race detector; TEST_TIMEOUT bounds each package's test binary (go test -timeout;
##   default 30m: the slowest package takes about 8 minutes alone on two cores, more beside other work, and go
##   test's own default of 10m is too tight on such a machine). A binary killed by it takes its processes along
##   (internal/testkit/procgroup). TEST_FLAGS adds go test flags, e.g. TEST_FLAGS='-run TestX' or '-p 1'.
TEST_TIMEOUT ?= 30m
TEST_FLAGS   ?=
test:
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) $(TEST_FLAGS) ./...

## bench: run the benchmarks, print the targets table and compare with bench/baseline.txt
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count $(BENCH_COUNT) $(BENCH_PKGS) | tee bench/latest.txt
	$(GO) run ./internal/cmd/benchreport bench/latest.txt
	$(GO) tool benchstat bench/baseline.txt bench/latest.txt

## bench-nginx: the agent's /files/ beside nginx (sendfile on) on loopback, 4 KiB req/s and 256 MiB MB/s, and the
## agent's peak RSS over a 1 GiB tus upload + download (needs .ci/apt.d/bench.txt: nginx-light, wrk)
.PHONY: bench-nginx
bench-nginx:
	$(GO) build -o build/benchagent ./internal/cmd/benchagent
	bench/nginx.sh build/benchagent

## bench-ocr: the OCR agent (a PDF's pages read side by side) against the plain pdftoppm + tesseract loop on a
## 10-page PDF (speedup-vs-loop; target >= 1.8 on 2 cores), and ocr_batch on 1 vs 2 processes, best of 3 runs each
## (slow: about 5 minutes; kept out of BENCH_PKGS)
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

## bench-inline: a 50 MiB inline file sent to the built agent (MB/s, peak RSS) against `base64 -d` on the same
##   data in the same run (issue 13: ≥ 0.5×); "staged" is the file's arrival, "inspected" the whole call
.PHONY: bench-inline
bench-inline:
	$(GO) test -run '^$$' -bench Inline -benchtime 5x -count $(BENCH_COUNT) ./internal/testkit/limitstest ./agentcore

## fuzz: run each fuzz target for FUZZTIME (their seed corpora run in make test)
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzResolve$$' -fuzztime $(FUZZTIME) ./agentcore
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeArgs$$' -fuzztime $(FUZZTIME) ./agentcore
	$(GO) test -run '^$$' -fuzz '^FuzzClean$$' -fuzztime $(FUZZTIME) ./filename

## fuzz-ci: every fuzz target for FUZZ_CI_TIME each (make check runs it), each go test bounded by FUZZ_CI_TIMEOUT: the resolver, argument decoding,
##   names, download-token parsing, the composer's picture checks, Markdown limits and rendering. A failure leaves its input under the package's
##   testdata/fuzz/<Target>/: commit it, it then runs in every go test. (.ci/fuzz-ci.sh lets through, loudly, the
##   "context deadline exceeded" that Go 1.26's fuzz coordinator can report with no input found: go.dev/issue/75804.)
FUZZ_CI_TIME    ?= 20s
FUZZ_CI_TIMEOUT ?= 10m
FUZZ_CI_TARGETS ?= ./agentcore:FuzzResolve ./agentcore:FuzzDecodeArgs ./filename:FuzzClean ./signing:FuzzVerify \
	./agents/composer:FuzzImageHeader ./agents/composer:FuzzMarkdownLimits ./agents/composer:FuzzRender
.PHONY: fuzz-ci
fuzz-ci:
	GO=$(GO) FUZZ_TIMEOUT=$(FUZZ_CI_TIMEOUT) .ci/fuzz-ci.sh $(FUZZ_CI_TIME) $(FUZZ_CI_TARGETS)

## lint: gofmt and go vet must be silent, in the library and in deploy/e2e (a module of its own, tag e2e)
lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	cd deploy/e2e && $(GO) vet -tags e2e ./...

## images: build the agents' Docker images (static binaries from this Makefile, no Go image; base made locally)
IMAGE_TAG    ?= latest
IMAGE_CTX    ?= build/images
BASE_IMAGE   ?= debian:bookworm-slim
OCR_CMD      ?= ./cmd/ocr-agent
COMPOSER_CMD ?= ./cmd/composer-agent
CA_BUNDLE    ?= /etc/ssl/certs/ca-certificates.crt
# OCR_LANGS: the tesseract language packs of the OCR image (tesseract codes; chi_sim is Debian's tesseract-ocr-chi-sim)
OCR_LANGS    ?= eng deu fra spa ita por chi_sim jpn ara rus
# COMPOSER_FONTS: the fallback fonts the composer image ships in /usr/share/agentura/fonts (AGENT_FONT_DIRS there), from
# the build machine's Debian packages fonts-droid-fallback (Chinese, Japanese, Korean) and fonts-noto-core (Devanagari);
# the embedded DejaVu fonts cover Latin, Greek, Cyrillic, Arabic and Hebrew
COMPOSER_FONTS ?= /usr/share/fonts-droid-fallback/truetype/DroidSansFallback.ttf \
                  /usr/share/fonts/truetype/noto/NotoSansDevanagari-Regular.ttf
COMPOSER_FONT_LICENSES ?= /usr/share/doc/fonts-droid-fallback/copyright=fonts-droid-fallback.copyright \
                          /usr/share/doc/fonts-noto-core/copyright=fonts-noto-core.copyright
COMPOSE      ?= $(shell docker compose version >/dev/null 2>&1 && echo "docker compose" || echo docker-compose)
# STATIC_GO builds a static binary for the images: $(STATIC_GO) -o OUT PACKAGE. -trimpath keeps this machine's
# paths out, -s -w drop the symbol table and DWARF (about 10 MB an agent), and the nomsgpack tag leaves out gin's
# MessagePack codec (ugorji/go, about 6 MB an agent), which no handler here uses.
GO_TAGS      ?= nomsgpack
STATIC_GO    = CGO_ENABLED=0 $(GO) build -tags '$(GO_TAGS)' -trimpath -ldflags='-s -w'
# image-rootfs makes the image context $(1) afresh, with the rootfs/ its Dockerfile copies: data/ (0700; $(2) is a
# folder to make in it) and tmp/ (1777), as scratch images cannot make them
define image-rootfs
rm -rf $(1) && mkdir -p $(1)/rootfs/data/$(2) $(1)/rootfs/tmp
chmod 0700 $(1)/rootfs/data && chmod 1777 $(1)/rootfs/tmp
endef
.PHONY: images image-context up down e2e
image-context:
	deploy/image-deps.sh
	$(call image-rootfs,$(IMAGE_CTX))
	$(STATIC_GO) -o $(IMAGE_CTX)/ocr-agent $(OCR_CMD)
	$(STATIC_GO) -o $(IMAGE_CTX)/composer-agent $(COMPOSER_CMD)
	cp $(CA_BUNDLE) $(IMAGE_CTX)/ca-certificates.crt
	mkdir -p $(IMAGE_CTX)/fonts
	@for f in $(COMPOSER_FONTS); do test -f $$f || { echo "$$f is missing: apt-get install fonts-droid-fallback fonts-noto-core (make deps)"; exit 1; }; done
	cp $(COMPOSER_FONTS) $(IMAGE_CTX)/fonts/
	@for l in $(COMPOSER_FONT_LICENSES); do cp $${l%%=*} $(IMAGE_CTX)/fonts/$${l#*=}; done
	cp deploy/Dockerfile.ocr deploy/Dockerfile.composer $(IMAGE_CTX)/
images: image-context
	BASE_IMAGE=$(BASE_IMAGE) OCR_LANGS="$(OCR_LANGS)" deploy/make-base-image.sh
	docker build -q --build-arg BASE_IMAGE=$(BASE_IMAGE) --build-arg OCR_LANGS="$(OCR_LANGS)" \
		-t agentura/ocr-agent:$(IMAGE_TAG) -f $(IMAGE_CTX)/Dockerfile.ocr $(IMAGE_CTX)
	docker build -q -t agentura/composer-agent:$(IMAGE_TAG) -f $(IMAGE_CTX)/Dockerfile.composer $(IMAGE_CTX)
	docker image prune -f --filter label=org.opencontainers.image.vendor=agentura >/dev/null

## up: build the images and run both agents with docker compose (settings: deploy/.env); down: stop them. On a fresh
##   Debian the image build installs what it needs itself (deploy/image-deps.sh: .ci/apt.d/images.txt, as root) and
##   checks Docker and Compose. COMPOSE_PROJECT (default agentura) is the Compose project name of up and down.
COMPOSE_PROJECT ?= agentura
up: images
	$(COMPOSE) -p $(COMPOSE_PROJECT) -f deploy/docker-compose.yml up -d
	COMPOSE_PROJECT_NAME=$(COMPOSE_PROJECT) deploy/wait-healthy.sh deploy/docker-compose.yml
down:
	$(COMPOSE) -p $(COMPOSE_PROJECT) -f deploy/docker-compose.yml down

## hydra: Ory Hydra v2.3.0, the identity provider of the OAuth tests and of make up-auth, into $(go env GOPATH)/bin:
##   .ci/setup.d/40-hydra.sh builds it from the Go module proxy through the tools module deploy/hydra (cgo, sqlite
##   tags; 10-20 minutes the first time on two busy cores, skipped when that version is there)
HYDRA_BIN := $(shell $(GO) env GOPATH)/bin/hydra
.PHONY: hydra image-auth up-auth down-auth
hydra:
	.ci/setup.d/40-hydra.sh

## image-auth: the images of the sign-in demo: agentura/hydra (Hydra on the local Debian base, deploy/Dockerfile.hydra)
##   and agentura/demologin (the demo login page on scratch, deploy/Dockerfile.demologin)
AUTH_IMAGE_CTX ?= build/images-auth
image-auth: hydra
	$(call image-rootfs,$(AUTH_IMAGE_CTX))
	cp $(HYDRA_BIN) $(AUTH_IMAGE_CTX)/hydra
	$(STATIC_GO) -o $(AUTH_IMAGE_CTX)/httpprobe ./internal/cmd/httpprobe
	$(STATIC_GO) -o $(AUTH_IMAGE_CTX)/demologin ./internal/cmd/demologin
	cp deploy/hydra/start.sh deploy/hydra/clients.json deploy/Dockerfile.hydra deploy/Dockerfile.demologin $(AUTH_IMAGE_CTX)/
	BASE_IMAGE=$(BASE_IMAGE) deploy/make-base-image.sh
	docker build -q --build-arg BASE_IMAGE=$(BASE_IMAGE) -t agentura/hydra:$(IMAGE_TAG) -f $(AUTH_IMAGE_CTX)/Dockerfile.hydra $(AUTH_IMAGE_CTX)
	docker build -q -t agentura/demologin:$(IMAGE_TAG) -f $(AUTH_IMAGE_CTX)/Dockerfile.demologin $(AUTH_IMAGE_CTX)
	docker image prune -f --filter label=org.opencontainers.image.vendor=agentura >/dev/null

## up-auth: the agents as OAuth 2.1 resource servers (AGENT_AUTH=oauth) of a real identity provider:
##   deploy/docker-compose.yml with deploy/docker-compose.auth.yml, Hydra on https://localhost:4444 and the demo login
##   page (a DEMO user store: DEMO_USERS, default alice and bob) on https://localhost:4446, their certificate from a
##   local CA in build/auth-tls (Go programs trust it with SSL_CERT_FILE=build/auth-tls/ca.pem); sign in with
##   `SSL_CERT_FILE=build/auth-tls/ca.pem agentura call http://localhost:8001/mcp ... --oauth-client-id agentura-cli`;
##   down-auth: stop it
AUTH_PROJECT ?= agenturaauth
AUTH_TLS     ?= build/auth-tls
AUTH_COMPOSE  = $(COMPOSE) -p $(AUTH_PROJECT) -f deploy/docker-compose.yml -f deploy/docker-compose.auth.yml
# The compose file reads the certificates' folder from AUTH_TLS_DIR: exported, so that the commands make prints are
# the same on every machine (no absolute path of the checkout in them).
up-auth: export AUTH_TLS_DIR = $(abspath $(AUTH_TLS))
up-auth: images image-auth
	SCALE_TLS_NAMES=hydra,demologin deploy/scale-tls.sh $(AUTH_TLS)
	$(AUTH_COMPOSE) up -d
	COMPOSE_PROJECT_NAME=$(AUTH_PROJECT) deploy/wait-healthy.sh deploy/docker-compose.yml:deploy/docker-compose.auth.yml
down-auth:
	$(AUTH_COMPOSE) down

## jaeger: Jaeger v1.75.0 (the v2 all-in-one), the trace store of make up-trace, into $(go env GOPATH)/bin:
##   .ci/setup.d/50-jaeger.sh builds it static from the Go module proxy through the tools module deploy/jaeger
##   (skipped when that version is there)
JAEGER_BIN := $(shell $(GO) env GOPATH)/bin/jaeger
.PHONY: jaeger image-jaeger up-trace down-trace
jaeger:
	.ci/setup.d/50-jaeger.sh

## image-jaeger: the trace store of make up-trace: agentura/jaeger (Jaeger's static binary on scratch, deploy/Dockerfile.jaeger)
JAEGER_IMAGE_CTX ?= build/images-jaeger
image-jaeger: jaeger
	$(call image-rootfs,$(JAEGER_IMAGE_CTX))
	cp $(JAEGER_BIN) $(JAEGER_IMAGE_CTX)/jaeger
	$(STATIC_GO) -o $(JAEGER_IMAGE_CTX)/httpprobe ./internal/cmd/httpprobe
	docker build -q -t agentura/jaeger:$(IMAGE_TAG) -f deploy/Dockerfile.jaeger $(JAEGER_IMAGE_CTX)
	docker image prune -f --filter label=org.opencontainers.image.vendor=agentura >/dev/null

## up-trace: the agents exporting their traces to Jaeger (deploy/docker-compose.yml with deploy/docker-compose.trace.yml):
##   Jaeger's query API on http://localhost:16686 (JAEGER_PORT; its UI there is a placeholder page: read traces with
##   /api/traces), its OTLP/HTTP receiver on http://localhost:4318 (OTLP_PORT) for the CLI's spans
##   (OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 agentura call ...); see docs/observability.md. TRACE_PROJECT
##   (default agenturatrace) is the Compose project of up-trace and down-trace
TRACE_PROJECT ?= agenturatrace
TRACE_COMPOSE  = $(COMPOSE) -p $(TRACE_PROJECT) -f deploy/docker-compose.yml -f deploy/docker-compose.trace.yml
up-trace: images image-jaeger
	$(TRACE_COMPOSE) up -d
	COMPOSE_PROJECT_NAME=$(TRACE_PROJECT) deploy/wait-healthy.sh deploy/docker-compose.yml:deploy/docker-compose.trace.yml
down-trace:
	$(TRACE_COMPOSE) down

## e2e: build the images, then test them on the Docker engine: each image with testcontainers-go, the compose
## deployment driven from the host with the agentura CLI (deploy/e2e.sh; fails when Docker is missing);
## E2E_TIMEOUT bounds its go test (default 30m). It runs beside other deployments: E2E_PROJECT names its Compose
## projects (default agenturae2e-<random>; it refuses one that exists, and takes down only its own), and the ports it
## publishes are E2E_OCR_PORT, E2E_COMPOSER_PORT, E2E_HYDRA_PORT, E2E_LOGIN_PORT, picked free when not given
E2E_TIMEOUT ?= 30m
e2e: images image-s3 image-lb image-auth image-nginx image-jaeger
	@if [ -d cmd/agentura ]; then $(GO) build -o bin/ ./cmd/agentura; fi
	E2E_TIMEOUT=$(E2E_TIMEOUT) deploy/e2e.sh

.PHONY: bench-composer run-composer

## bench-composer: the composer's benchmark: a 20-page document with 10 pictures rendered in each format
bench-composer:
	$(GO) test -run '^$$' -bench BenchmarkCompose -benchmem -count $(BENCH_COUNT) ./agents/composer

## run-composer: start the composer agent on :8002
run-composer:
	$(GO) run ./cmd/composer-agent

## image-s3: the versitygw image of the scale-out compose (agentura/s3): a static versitygw on scratch, copied
##   from $(go env GOPATH)/bin when `make deps` put a static one there, else built once into build/versitygw/
##   (about a minute on two cores; delete the folder to rebuild)
VERSITYGW_VERSION ?= v1.8.0
S3_IMAGE_CTX      ?= build/images-s3
.PHONY: image-s3 up-scale down-scale e2e-scale
# The static versitygw that .ci/setup.d/20-versitygw.sh installs for the tests is taken when it is there.
VERSITYGW_HOST := $(shell $(GO) env GOPATH)/bin/versitygw
build/versitygw/$(VERSITYGW_VERSION)/versitygw:
	mkdir -p $(@D)
	if $(GO) version -m $(VERSITYGW_HOST) 2>/dev/null | grep -q 'CGO_ENABLED=0' && \
	   $(GO) version -m $(VERSITYGW_HOST) | grep -q 'github.com/versity/versitygw[[:space:]]*$(VERSITYGW_VERSION)'; then \
		cp $(VERSITYGW_HOST) $@; \
	else \
		CGO_ENABLED=0 GOFLAGS=-buildvcs=false GOBIN=$(abspath $(@D)) $(GO) install -trimpath -ldflags='-s -w' \
			github.com/versity/versitygw/cmd/versitygw@$(VERSITYGW_VERSION); \
	fi
image-s3: build/versitygw/$(VERSITYGW_VERSION)/versitygw
	$(call image-rootfs,$(S3_IMAGE_CTX),agentura)
	cp $< $(S3_IMAGE_CTX)/versitygw
	$(STATIC_GO) -o $(S3_IMAGE_CTX)/httpprobe ./internal/cmd/httpprobe
	docker build -q -t agentura/s3:$(IMAGE_TAG) -f deploy/Dockerfile.s3 $(S3_IMAGE_CTX)
	docker image prune -f --filter label=org.opencontainers.image.vendor=agentura >/dev/null

## image-lb: the load balancer of the scale-out compose (agentura/lb): HAProxy from Debian's package on the local
##   base image (deploy/Dockerfile.lb, deploy/lb/haproxy.cfg)
.PHONY: image-lb
image-lb:
	BASE_IMAGE=$(BASE_IMAGE) deploy/make-base-image.sh
	docker build -q --build-arg BASE_IMAGE=$(BASE_IMAGE) -t agentura/lb:$(IMAGE_TAG) -f deploy/Dockerfile.lb deploy/lb
	docker image prune -f --filter label=org.opencontainers.image.vendor=agentura >/dev/null

## image-nginx: nginx in front of an agent (agentura/nginx): nginx-light from Debian's package on the local base
##   image (deploy/Dockerfile.nginx, deploy/nginx/)
## up-nginx: the composer agent behind nginx, which sends its downloads (X-Accel-Redirect; deploy/docker-compose.nginx.yml)
##   on http://localhost:8080 (NGINX_PORT); down-nginx: stop it
.PHONY: image-nginx up-nginx down-nginx
NGINX_PROJECT ?= agenturanginx
image-nginx:
	BASE_IMAGE=$(BASE_IMAGE) deploy/make-base-image.sh
	docker build -q --build-arg BASE_IMAGE=$(BASE_IMAGE) -t agentura/nginx:$(IMAGE_TAG) -f deploy/Dockerfile.nginx deploy/nginx
	docker image prune -f --filter label=org.opencontainers.image.vendor=agentura >/dev/null
up-nginx: images image-nginx
	$(COMPOSE) -p $(NGINX_PROJECT) -f deploy/docker-compose.nginx.yml up -d
	COMPOSE_PROJECT_NAME=$(NGINX_PROJECT) deploy/wait-healthy.sh deploy/docker-compose.nginx.yml
down-nginx:
	$(COMPOSE) -p $(NGINX_PROJECT) -f deploy/docker-compose.nginx.yml down

## up-scale: the scale-out variant (deploy/docker-compose.scale.yml): versitygw, SCALE_REPLICAS (2) composer replicas and
##   SCALE_OCR_REPLICAS (1) OCR replicas (https://localhost:8444) sharing
##   one bucket and one signing key behind an HAProxy balancer on https://localhost:8443; settings in
##   deploy/.env.scale, written with fresh secrets (mode 0600) by deploy/scale-env.sh when missing; the balancer's
##   certificate from a local CA in SCALE_TLS, build/scale-tls (curl --cacert build/scale-tls/ca.pem); down-scale: stop it
##   (with or without the settings file)
SCALE_PROJECT ?= agenturascale
SCALE_ENV     ?= deploy/.env.scale
SCALE_TLS     ?= build/scale-tls
SCALE_REPLICAS ?= 2
SCALE_OCR_REPLICAS ?= 1
# The compose file reads the certificate's folder from SCALE_TLS_DIR (exported: no absolute path in what make prints).
up-scale: export SCALE_TLS_DIR = $(abspath $(SCALE_TLS))
up-scale: images image-s3 image-lb
	deploy/scale-env.sh $(SCALE_ENV)
	deploy/scale-tls.sh $(SCALE_TLS)
	$(COMPOSE) -p $(SCALE_PROJECT) -f deploy/docker-compose.scale.yml --env-file $(SCALE_ENV) up -d --scale composer=$(SCALE_REPLICAS) --scale ocr=$(SCALE_OCR_REPLICAS)
	@# wait-healthy.sh's Compose calls interpolate the file too: export the env file's lines as they are (no shell
	@# evaluation, so secrets may hold any character).
	bash -c 'while IFS= read -r l; do export "$$l"; done < <(grep -E "^[A-Z0-9_]+=" "$(SCALE_ENV)"); \
		COMPOSE_PROJECT_NAME=$(SCALE_PROJECT) deploy/wait-healthy.sh deploy/docker-compose.scale.yml'

down-scale:
	@# Without the settings file (never brought up, or removed), any value of the secrets does for down. The
	@# replicas' work folders (anonymous volumes) go with them; the bucket's volume stays.
	if [ -f $(SCALE_ENV) ]; then envf="--env-file $(SCALE_ENV)"; else export SCALE_SIGNING_KEY=x S3_ACCESS_KEY=x S3_SECRET_KEY=x; envf=; fi; \
	$(COMPOSE) -p $(SCALE_PROJECT) -f deploy/docker-compose.scale.yml $$envf rm -f -s -v composer && \
	$(COMPOSE) -p $(SCALE_PROJECT) -f deploy/docker-compose.scale.yml $$envf down

## e2e-scale: only the scale-out tests (deploy/e2e TestComposeScale, TestComposeScaleBalancer and TestScaleTasks; make
##   e2e runs them too); E2E_LOAD_DURATION sets the length of the load test through the balancer (default 20s)
e2e-scale:
	$(MAKE) e2e E2E_RUN='TestComposeScale|TestScaleTasks'
