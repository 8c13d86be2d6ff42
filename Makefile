# kdual build. `make test` and `make bench` install their own prerequisites
# (Debian packages, as root) before they run.
GO       ?= go
PYTHON   ?= /usr/bin/python3
BIN      := bin/kdual
DEPS     := libopenblas-dev dataset-fashion-mnist
PEERDEPS := python3-scipy python3-sklearn
FUZZTIME ?= 15s

.PHONY: all deps peer-deps build test vet fmt-check bench bench-go bench-foundation bench-eig bench-dual fuzz clean

all: build

deps:
	@scripts/deps.sh $(DEPS)

peer-deps: deps
	@scripts/deps.sh $(PEERDEPS)

build: deps
	$(GO) build -o $(BIN) ./cmd/kdual

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet: deps
	$(GO) vet ./...

test: deps fmt-check vet
	$(GO) test -count=1 ./...

# The main benchmark job. Until the papers' benchmark lands it runs the Go
# benchmarks of the foundation and the side-by-side timings against NumPy,
# SciPy and scikit-learn.
bench: bench-go bench-foundation bench-eig bench-dual

bench-go: deps
	$(GO) test -run '^$$' -bench . -benchtime 3x ./linalg/ ./eig/

bench-foundation: build peer-deps
	$(PYTHON) bench/peers/foundation.py $(BIN) --repeat 5

bench-eig: build peer-deps
	$(PYTHON) bench/peers/eigsolvers.py $(BIN) --n 7000 --k 20 --repeat 3

bench-dual: build peer-deps
	$(PYTHON) bench/peers/dual_lbfgs.py $(BIN) --n 7000 --s 20 --repeat 3
	$(BIN) kpca robust
	$(BIN) kpca sparse

fuzz: deps
	$(GO) test ./dataset -run '^$$' -fuzz '^FuzzReadCSV$$' -fuzztime $(FUZZTIME)
	$(GO) test ./dataset -run '^$$' -fuzz '^FuzzReadIDX$$' -fuzztime $(FUZZTIME)
	$(GO) test ./dataset -run '^$$' -fuzz '^FuzzParseSeries$$' -fuzztime $(FUZZTIME)

clean:
	rm -rf bin
