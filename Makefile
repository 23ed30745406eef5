# wattsched — make targets. Everything a fresh machine needs is fetched here:
# Go itself ships with the machine image (/usr/local/go); modules come from
# the Go module proxy at the exact versions pinned in go.mod/go.sum.
GO ?= go
export PATH := $(PATH):/usr/local/go/bin

# HiGHS (MIT) for package solver: the static library and headers of the module
# below, folder external/<os>-<arch>, found by cgo through build/pkgconfig/highs.pc
# (github.com/lanl/highs asks pkg-config for "highs"). Only the library files
# are used; the module's own Go package is never imported. The module's hash is
# checked against HIGHS_SUM. Without pkg-config on the machine, a small script
# written next to highs.pc answers cgo's two questions instead.
HIGHS_MOD := github.com/nextmv-io/go-highs
HIGHS_VERSION := v1.5.1
HIGHS_SUM := h1:qzU+6/ccD+lC0ZCWImFHk9XHJ7tCaWnO5ucmtIPfoso=
HIGHS_PC := $(CURDIR)/build/pkgconfig
export PKG_CONFIG_PATH := $(HIGHS_PC)$(if $(PKG_CONFIG_PATH),:$(PKG_CONFIG_PATH))
# The HiGHS backend of package solver is built only with the highs tag, so
# that plain `go build` and `go install` work without the library (their
# binaries say so when a command needs HiGHS); every make target sets it.
export GOFLAGS += -tags=highs
ifeq ($(shell command -v pkg-config),)
export PKG_CONFIG := $(HIGHS_PC)/pkg-config
endif

.PHONY: all setup highs env build kube-scheduler shadow replay-k8s nvml-agent images images-test demo test race bench bench-k8s bench-k8s-perf fuzz clean prometheus gavel-compare chromium zsh

all: build

setup:
	@command -v $(GO) >/dev/null || { echo "Go toolchain not found (expected /usr/local/go/bin/go)"; exit 1; }
	$(GO) mod download
	cd k8s && $(GO) mod download
	cd k8s && for m in $(K8S_OLDER); do $(GO) mod download -modfile=go.k8s$$(echo $$m | tr -d .).mod || exit 1; done
	cd nvmlagent && $(GO) mod download
	@$(MAKE) --no-print-directory highs

highs:
	@set -e; \
	  info=$$($(GO) mod download -json $(HIGHS_MOD)@$(HIGHS_VERSION)); \
	  sum=$$(printf '%s\n' "$$info" | sed -n 's/^[[:space:]]*"Sum": "\(.*\)",*$$/\1/p'); \
	  dir=$$(printf '%s\n' "$$info" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$$/\1/p'); \
	  if [ "$$sum" != "$(HIGHS_SUM)" ]; then echo "$(HIGHS_MOD)@$(HIGHS_VERSION): hash $$sum, want $(HIGHS_SUM)"; exit 1; fi; \
	  lib="$$dir/external/$$($(GO) env GOOS)-$$($(GO) env GOARCH)"; \
	  if [ ! -f "$$lib/lib/libhighs.a" ]; then echo "no HiGHS library for this platform in $$lib"; exit 1; fi; \
	  mkdir -p $(HIGHS_PC); \
	  printf '%s\n' "prefix=$$lib" "Name: highs" "Description: HiGHS (MIT) from $(HIGHS_MOD)@$(HIGHS_VERSION) external/" \
	    "Version: 1.3.1" 'Cflags: -I$${prefix}/include/highs' 'Libs: -L$${prefix}/lib -lhighs -lstdc++ -lm -ldl -lpthread' \
	    > $(HIGHS_PC)/highs.pc.tmp; \
	  mv $(HIGHS_PC)/highs.pc.tmp $(HIGHS_PC)/highs.pc; \
	  printf '%s\n' '#!/bin/sh' '# Written by make highs: answers cgo for highs.pc where pkg-config is missing.' \
	    'case "$$1" in --cflags) echo "-I@LIB@/include/highs" ;; --libs) echo "-L@LIB@/lib -lhighs -lstdc++ -lm -ldl -lpthread" ;; *) exit 1 ;; esac' \
	    | sed "s|@LIB@|$$lib|g" > $(HIGHS_PC)/pkg-config; \
	  chmod +x $(HIGHS_PC)/pkg-config

# Prints the environment that lets plain go commands (go build, go test) find
# HiGHS after make setup: eval "$$(make -s env)".
env:
	@echo 'export PKG_CONFIG_PATH=$(PKG_CONFIG_PATH)'
	@echo 'export GOFLAGS="$(GOFLAGS)"'
	@$(if $(PKG_CONFIG),echo 'export PKG_CONFIG=$(PKG_CONFIG)')

# Kubernetes minors (docs/kubernetes.md#supported-kubernetes-minors). The
# newest, the development target, is k8s/go.mod; each older one has a module
# file of its own, k8s/go.k8s1NN.mod and .sum, used with -modfile, and a
# build tag k8s1NN that selects the plugins' adapters where the scheduler
# framework's API differs (k8s/plugins/*_k8s1NN.go). K8S_FLAGS_<minor> are
# the go flags of a minor (none for the newest).
K8S_NEWEST := 1.37
K8S_OLDER := 1.35 1.36
K8S_MINORS := $(K8S_OLDER) $(K8S_NEWEST)
k8s_tag = k8s$(subst .,,$(1))
k8s_modfile = $(if $(filter $(K8S_NEWEST),$(1)),go.mod,go.$(call k8s_tag,$(1)).mod)
k8s_flags = $(if $(filter $(K8S_NEWEST),$(1)),,-modfile=$(call k8s_modfile,$(1)) -tags=highs,$(call k8s_tag,$(1)))
# The integration smoke test each older minor runs on a real API server of
# that minor: kube-scheduler with wattsched's plugins places 300 openb pods
# exactly as the core's Placer (PWR+FGD) does.
K8S_SMOKE := ^TestParity$$/^0.2\*PWR\+0.8\*FGD$$

# Version stamps. VERSION is internal/cli's Version (what every result
# records and `wattsched version` prints); COMMIT the commit; REVISION it, with -dirty
# when the work tree has changes; BUILD_DATE the commit's time in UTC (not the
# clock, so that two builds of one commit are identical); K8S_VERSION the
# k8s.io/kubernetes version k8s/go.mod pins (the newest minor's), and
# k8s_version of a minor the one its module file pins. The binaries below
# are the ones the images carry: -trimpath, static where they can be.
VERSION := $(shell sed -n 's/^[[:space:]]*\(const[[:space:]]\{1,\}\)\{0,1\}Version[[:space:]]*=[[:space:]]*"\([^"]*\)".*/\2/p' internal/cli/*.go | head -n 1)
COMMIT := $(shell git rev-parse HEAD 2>/dev/null)
REVISION := $(COMMIT)$(shell [ -z "$$(git status --porcelain 2>/dev/null)" ] || echo -dirty)
BUILD_DATE := $(shell TZ=UTC git log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd 2>/dev/null)
k8s_version = $(shell sed -n 's/^[[:space:]]*k8s.io\/kubernetes[[:space:]]\{1,\}\(v[0-9][^[:space:]]*\).*/\1/p' k8s/$(call k8s_modfile,$(1)) | head -n 1)
K8S_VERSION := $(call k8s_version,$(K8S_NEWEST))
KV := k8s.io/component-base/version
VERSION_LDFLAGS := -X main.version=$(VERSION) -X main.revision=$(REVISION)
# kube-scheduler's stamps for minor $(1): its k8s.io/kubernetes version.
k8s_ldflags = $(VERSION_LDFLAGS) -X $(KV).gitVersion=$(call k8s_version,$(1)) -X $(KV).gitMajor=$(word 1,$(subst ., ,$(1))) \
  -X $(KV).gitMinor=$(word 2,$(subst ., ,$(1))) -X $(KV).gitCommit=$(COMMIT) \
  -X $(KV).gitTreeState=$(if $(findstring -dirty,$(REVISION)),dirty,clean) -X $(KV).buildDate=$(BUILD_DATE)

# wattsched links HiGHS (C++) through cgo: linked statically (glibc's static
# libc, Go's own DNS resolver and user lookup), it runs on any Linux and in
# an image with no libc. Its version is internal/cli's Version constant;
# -buildvcs=true puts the commit in its build information, which
# `wattsched version` prints (where Go finds the repository: not in a git
# worktree).
build: setup
	$(GO) build -trimpath -buildvcs=true -tags highs,netgo,osusergo -ldflags '-s -w -linkmode external -extldflags "-static"' \
	  -o bin/wattsched ./cmd/wattsched

# kube-scheduler with wattsched's plugins (module k8s/), without cgo (static
# binaries), one per supported minor: bin/kube-scheduler-k8s1.NN, and
# bin/kube-scheduler, the newest minor's.
kube-scheduler: setup
	$(foreach m,$(K8S_MINORS),(cd k8s && CGO_ENABLED=0 $(GO) build $(call k8s_flags,$(m)) -trimpath \
	  -ldflags '-s -w $(call k8s_ldflags,$(m))' -o ../bin/kube-scheduler-k8s$(m) ./cmd/kube-scheduler) && ) true
	cp bin/kube-scheduler-k8s$(K8S_NEWEST) bin/kube-scheduler

# wattsched-shadow (module k8s/): wattsched's profiles in shadow mode beside
# a cluster's own scheduler, binding nothing (docs/kubernetes.md#try-it-first-in-shadow-mode).
shadow: setup
	cd k8s && CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w $(VERSION_LDFLAGS)' -o ../bin/wattsched-shadow ./cmd/wattsched-shadow

# A replay scenario through the real kube-scheduler on kwok nodes, against the
# simulator's run of it (docs/kubernetes.md#replay-through-kube-scheduler):
#   make replay-k8s SCENARIO=examples/replay-kwok-openb.yaml OUT=out/replay-k8s FACTOR=20000
SCENARIO ?= k8s/replay/testdata/small.yaml
OUT ?= out/replay-k8s
FACTOR ?= 100
replay-k8s: setup
	cd k8s && $(GO) build -o ../bin/wattsched-replay-k8s ./cmd/wattsched-replay-k8s
	./bin/wattsched-replay-k8s -c $(SCENARIO) -o $(OUT) -factor $(FACTOR)

# NVML node agent (module nvmlagent/, cgo): GPU power in the DCGM exporter's
# names, for nodes without the DCGM exporter. Runs where the NVIDIA driver is.
# Linked dynamically: go-nvml dlopens the driver's libnvidia-ml.so.1, which
# a static glibc binary cannot do; its image carries the C libraries it needs.
NVML_CGO := CGO_CFLAGS="$(CGO_CFLAGS) -Wno-deprecated-declarations"
nvml-agent: setup
	cd nvmlagent && $(NVML_CGO) $(GO) build -trimpath -ldflags '-s -w $(VERSION_LDFLAGS)' -o ../bin/wattsched-nvml-agent ./cmd/wattsched-nvml-agent

# OCI images of the four binaries, built without a container engine by
# tools/imagebuild (go-containerregistry) on a base layer made here: an OCI
# layout per image (build/images/NAME/) and a tarball (build/images/NAME.tar)
# that `docker load` and `crane push` read. Names: $(REGISTRY)/NAME:v$(VERSION),
# kube-scheduler one per minor: $(REGISTRY)/kube-scheduler:v$(VERSION)-k8s1.NN
# (build/images/kube-scheduler-k8s1.NN/).
# docs/kubernetes.md#images-and-releases says what is in them and how to push.
REGISTRY ?= ghcr.io/wattsched
SOURCE_URL ?= https://github.com/wattsched/wattsched
CA_CERTS ?= /etc/ssl/certs/ca-certificates.crt
images: build kube-scheduler nvml-agent shadow
	@set -e; \
	  highs=$$($(GO) mod download -json $(HIGHS_MOD)@$(HIGHS_VERSION) | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$$/\1/p'); \
	  cd tools/imagebuild && $(GO) run . -o ../../build/images -registry $(REGISTRY) -version $(VERSION) \
	    -revision $(REVISION) -created $(BUILD_DATE) -source $(SOURCE_URL) -ca-certs $(CA_CERTS) \
	    -license ../../LICENSE -highs-license "$$highs/external/LICENSE" \
	    -wattsched ../../bin/wattsched $(foreach m,$(K8S_MINORS),-kube-scheduler $(m)=../../bin/kube-scheduler-k8s$(m)) \
	    -nvml-agent ../../bin/wattsched-nvml-agent -shadow ../../bin/wattsched-shadow

# The images' test: unpacks each image of build/images, checks its
# configuration and files, and runs the binary it carries.
images-test: images
	cd tools/imagebuild && $(GO) vet ./... && $(GO) test -count=1 ./...

# Main job on the embedded default scenario: the PWR paper's comparison on the
# openb Default trace (3 seeds), results in out/demo.
demo: build
	./bin/wattsched run -o out/demo --force

# The table of docs/reproduce-eaco.md#gavel-compatibility: Gavel's traces through
# `wattsched run` (timing gavel-rounds) against Gavel's own simulator.
gavel-compare: build
	scripts/gavel-compare ./bin/wattsched

# Every test: vet, formatting, unit/property/golden tests, full-trace
# reproductions and fuzz seeds; then the Kubernetes module's unit tests and
# its integration tests against a real kube-apiserver (embedded etcd) on the
# newest minor, and for each older minor the module vetted (every package
# and test built against it) and the integration smoke test on an API
# server of that minor; then
# the NVML agent's (its real-GPU test skips without an NVIDIA driver); then
# the three binaries and their images are built and the images tested.
test: setup prometheus chromium zsh
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) test -count=1 ./...
	cd k8s && $(GO) vet ./... && $(GO) test -count=1 ./...
	$(foreach m,$(K8S_OLDER),(cd k8s && $(GO) vet $(call k8s_flags,$(m)) ./... && \
	  $(GO) test $(call k8s_flags,$(m)) -count=1 -run '$(K8S_SMOKE)' ./test/integration/) && ) true
	cd nvmlagent && $(NVML_CGO) $(GO) vet ./... && $(NVML_CGO) $(GO) test -count=1 ./...
	@$(MAKE) --no-print-directory images-test

# The race detector over the core module's packages (-short skips the
# full-trace reproductions, which the race detector would slow past use).
race: setup prometheus
	$(GO) test -race -short -count=1 -timeout 60m ./...

bench: build
	$(GO) test -run '^$$' -bench . -benchtime 3x ./experiment/tasks/ ./policy/...
	$(GO) test -run '^$$' -bench HiGHS -benchtime 1x ./solver/
	./bin/wattsched bench

# Scheduling throughput of the wattsched profile vs kube-scheduler's default
# profile on an in-process cluster (500 nodes, 2,000 pods).
bench-k8s: setup
	cd k8s && $(GO) test -run '^$$' -bench Throughput -benchtime 3x ./test/integration/

# kube-scheduler's own benchmark harness, scheduler_perf, with the wattsched
# plugins registered out of tree (k8s/test/perf): GPU-share pods at 500 and
# 5,000 nodes for the default profile and the wattsched profiles (PWR+FGD;
# with PowerBudget estimated; measured), one process per profile and size,
# alternating, PERF_ROUNDS rounds (default 2), and a table of medians.
# PERF_LABELS=500Nodes (or 5000Nodes, or smoke: 5 nodes) runs one size.
# See scripts/bench-k8s-perf and docs/performance.md.
bench-k8s-perf: setup
	GO=$(GO) scripts/bench-k8s-perf

# Each fuzz target for FUZZTIME (default 30 s): make fuzz FUZZTIME=10s for a short pass.
FUZZTIME ?= 30s
fuzz: setup
	$(GO) test -run '^$$' -fuzz '^FuzzBarPlotSVG$$' -fuzztime $(FUZZTIME) ./report
	$(GO) test -run '^$$' -fuzz '^FuzzCleanDir$$' -fuzztime $(FUZZTIME) ./experiment/outdir
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) ./strictyaml
	$(GO) test -run '^$$' -fuzz '^FuzzElasticEngine$$' -fuzztime $(FUZZTIME) ./sim
	$(GO) test -run '^$$' -fuzz '^FuzzHPCEngine$$' -fuzztime $(FUZZTIME) ./sim
	$(GO) test -run '^$$' -fuzz '^FuzzLinePlotSVG$$' -fuzztime $(FUZZTIME) ./report
	$(GO) test -run '^$$' -fuzz '^FuzzMemTotal$$' -fuzztime $(FUZZTIME) ./internal/cli
	$(GO) test -run '^$$' -fuzz '^FuzzParseBytes$$' -fuzztime $(FUZZTIME) ./experiment
	$(GO) test -run '^$$' -fuzz '^FuzzParseCatalog$$' -fuzztime $(FUZZTIME) ./hw
	$(GO) test -run '^$$' -fuzz '^FuzzParseMIG$$' -fuzztime $(FUZZTIME) ./hw
	$(GO) test -run '^$$' -fuzz '^FuzzParseRange$$' -fuzztime $(FUZZTIME) ./power/prom
	$(GO) test -run '^$$' -fuzz '^FuzzParseScenario$$' -fuzztime $(FUZZTIME) ./scenario
	$(GO) test -run '^$$' -fuzz '^FuzzRead$$' -fuzztime $(FUZZTIME) ./experiment/validate
	$(GO) test -run '^$$' -fuzz '^FuzzRead$$' -fuzztime $(FUZZTIME) ./grid
	$(GO) test -run '^$$' -fuzz '^FuzzRead$$' -fuzztime $(FUZZTIME) ./trace/gpuvar
	$(GO) test -run '^$$' -fuzz '^FuzzRead$$' -fuzztime $(FUZZTIME) ./trace/k8sdump
	$(GO) test -run '^$$' -fuzz '^FuzzRead$$' -fuzztime $(FUZZTIME) ./trace/philly
	$(GO) test -run '^$$' -fuzz '^FuzzRead$$' -fuzztime $(FUZZTIME) ./trace/swf
	$(GO) test -run '^$$' -fuzz '^FuzzReadJobs$$' -fuzztime $(FUZZTIME) ./experiment/cedla
	$(GO) test -run '^$$' -fuzz '^FuzzReadLoad$$' -fuzztime $(FUZZTIME) ./experiment/cedla
	$(GO) test -run '^$$' -fuzz '^FuzzReadNodes$$' -fuzztime $(FUZZTIME) ./trace/alibaba2023
	$(GO) test -run '^$$' -fuzz '^FuzzReadPairs$$' -fuzztime $(FUZZTIME) ./trace/bloxpal
	$(GO) test -run '^$$' -fuzz '^FuzzReadPods$$' -fuzztime $(FUZZTIME) ./trace/alibaba2023
	$(GO) test -run '^$$' -fuzz '^FuzzReadRuns$$' -fuzztime $(FUZZTIME) ./trace/k8sdump
	$(GO) test -run '^$$' -fuzz '^FuzzReadSingle$$' -fuzztime $(FUZZTIME) ./trace/bloxpal
	$(GO) test -run '^$$' -fuzz '^FuzzReadTable$$' -fuzztime $(FUZZTIME) ./experiment/cedla
	$(GO) test -run '^$$' -fuzz '^FuzzReadTables$$' -fuzztime $(FUZZTIME) ./trace/alibaba2020
	$(GO) test -run '^$$' -fuzz '^FuzzReadThroughputs$$' -fuzztime $(FUZZTIME) ./trace/gavel
	$(GO) test -run '^$$' -fuzz '^FuzzReadTrace$$' -fuzztime $(FUZZTIME) ./trace/gavel
	$(GO) test -run '^$$' -fuzz '^FuzzReader$$' -fuzztime $(FUZZTIME) ./userfile
	$(GO) test -run '^$$' -fuzz '^FuzzTaskEngine$$' -fuzztime $(FUZZTIME) ./sim
	cd k8s && $(GO) test -run '^$$' -fuzz '^FuzzAnnotations$$' -fuzztime $(FUZZTIME) ./gpushare

clean:
	rm -rf bin out build

# The Prometheus server (and promtool) for the measured-power tests
# (power/prom, internal/cli calibrate, k8s/plugins): Debian's package, 2.42.
# Skipped when `prometheus --version` works. The tests start their own
# server on a free loopback port; the package's service is not needed.
prometheus:
	@prometheus --version >/dev/null 2>&1 || { \
	  echo "installing the Prometheus server (apt-get install -y prometheus)"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends prometheus >/dev/null 2>&1 || \
	    { apt-get update -qq >/dev/null && apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends prometheus >/dev/null; }; \
	  prometheus --version >/dev/null 2>&1 || { echo "prometheus install failed: run apt-get install -y prometheus as root"; exit 1; }; }

# Debian's zsh for the completion test (internal/cli TestCompletionScripts
# loads the zsh script in zsh, and skips without it; bash is there already).
# Skipped when zsh is already installed.
zsh:
	@command -v zsh >/dev/null 2>&1 || { \
	  echo "installing zsh (apt-get install -y zsh)"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends zsh >/dev/null 2>&1 || \
	    { apt-get update -qq >/dev/null && apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends zsh >/dev/null; }; \
	  command -v zsh >/dev/null 2>&1 || { echo "zsh install failed: run apt-get install -y zsh as root"; exit 1; }; }

# Debian's chromium for the headless-browser test of the reports
# (internal/cli TestReportsRenderInBrowser, which skips without it).
# Skipped when chromium is already installed.
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing chromium (apt-get install -y chromium)"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends chromium >/dev/null 2>&1 || \
	    { apt-get update -qq >/dev/null && apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends chromium >/dev/null; }; \
	  command -v chromium >/dev/null 2>&1 || { echo "chromium install failed: run apt-get install -y chromium as root"; exit 1; }; }
