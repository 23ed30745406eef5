# wattsched — make targets. Everything a fresh machine needs is fetched here:
# Go itself ships with the machine image (/usr/local/go); modules come from
# the Go module proxy at the exact versions pinned in go.mod/go.sum.
GO ?= go
export PATH := $(PATH):/usr/local/go/bin

.PHONY: all setup build kube-scheduler demo test bench bench-k8s fuzz clean prometheus

all: build

setup:
	@command -v $(GO) >/dev/null || { echo "Go toolchain not found (expected /usr/local/go/bin/go)"; exit 1; }
	$(GO) mod download
	cd k8s && $(GO) mod download

build: setup
	$(GO) build -o bin/wattsched ./cmd/wattsched

# kube-scheduler 1.34 with wattsched's plugins (module k8s/).
kube-scheduler: setup
	cd k8s && $(GO) build -o ../bin/kube-scheduler ./cmd/kube-scheduler

# Main job on the embedded default scenario: the PWR paper's comparison on the
# openb Default trace (3 seeds), results in out/demo.
demo: build
	./bin/wattsched run -o out/demo --force

# Every test: vet, formatting, unit/property/golden tests, full-trace
# reproductions and fuzz seeds; then the Kubernetes module's unit tests and
# its integration tests against a real kube-apiserver (embedded etcd).
test: setup prometheus
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) test -count=1 ./...
	cd k8s && $(GO) vet ./... && $(GO) test -count=1 ./...

bench: build
	$(GO) test -run '^$$' -bench . -benchtime 3x ./experiment/ ./policy/...
	./bin/wattsched bench

# Scheduling throughput of the wattsched profile vs kube-scheduler's default
# profile on an in-process cluster (500 nodes, 2,000 pods).
bench-k8s: setup
	cd k8s && $(GO) test -run '^$$' -bench Throughput -benchtime 3x ./test/integration/

fuzz: setup
	$(GO) test -run '^$$' -fuzz FuzzReadPods -fuzztime 30s ./trace/alibaba2023
	$(GO) test -run '^$$' -fuzz FuzzParseScenario -fuzztime 30s ./scenario
	$(GO) test -run '^$$' -fuzz FuzzRead -fuzztime 30s ./trace/swf
	$(GO) test -run '^$$' -fuzz FuzzRead -fuzztime 30s ./trace/philly
	$(GO) test -run '^$$' -fuzz FuzzReadTables -fuzztime 30s ./trace/alibaba2020
	$(GO) test -run '^$$' -fuzz FuzzRead -fuzztime 30s ./grid
	$(GO) test -run '^$$' -fuzz FuzzTaskEngine -fuzztime 30s ./sim
	$(GO) test -run '^$$' -fuzz FuzzElasticEngine -fuzztime 30s ./sim
	$(GO) test -run '^$$' -fuzz FuzzHPCEngine -fuzztime 30s ./sim
	cd k8s && $(GO) test -run '^$$' -fuzz FuzzAnnotations -fuzztime 30s ./gpushare
	$(GO) test -run '^$$' -fuzz FuzzParseRange -fuzztime 30s ./power/prom

clean:
	rm -rf bin out

# The Prometheus server (and promtool) for the measured-power tests
# (power/prom, internal/cli calibrate, k8s/plugins): Debian's package, 2.42.
# Skipped when `prometheus --version` works. The tests start their own
# server on a free loopback port; the package's service is not needed.
prometheus:
	@prometheus --version >/dev/null 2>&1 || { \
	  echo "installing the Prometheus server (apt-get install -y prometheus)"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get install -y -qq --no-install-recommends prometheus >/dev/null 2>&1 || \
	    { apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends prometheus >/dev/null; }; \
	  prometheus --version >/dev/null 2>&1 || { echo "prometheus install failed: run apt-get install -y prometheus as root"; exit 1; }; }
