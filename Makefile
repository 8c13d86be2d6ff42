# kdual build. `make test` and `make bench` install their own prerequisites
# (Debian packages, as root) before they run.
SHELL    := /bin/bash
GO       ?= go
# The peers run on the same OpenBLAS kernels as kdual (scripts/peer-python).
PYTHON   ?= scripts/peer-python
BIN      := bin/kdual
DEPS     := libopenblas-dev dataset-fashion-mnist libopenmpi-dev openmpi-bin
PEERDEPS := python3-scipy python3-sklearn
MPIPEERDEPS := python3-slepc4py
FUZZTIME ?= 15s

.PHONY: all deps peer-deps build install demo test test-mpi vet fmt-check bench bench-kdual bench-peers bench-all bench-full bench-go bench-foundation bench-gram bench-mpi bench-lapack bench-model bench-eig bench-dual bench-kernelpca bench-small bench-approx bench-threads peer-kernels ppca rkm fuzz mutate mutate-random sizes clean

all: build

deps:
	@scripts/deps.sh $(DEPS)

peer-deps: deps
	@scripts/deps.sh $(PEERDEPS)

# bin/kdual is built with MPI (build tag mpi) when Open MPI is installed.
build: deps
	tags=$$(pkg-config --exists ompi-c 2>/dev/null && echo "-tags mpi"); $(GO) build $$tags -ldflags "-X main.release=$$(cat VERSION) -X main.commit=$$(git describe --always --dirty 2>/dev/null)" -o $(BIN) ./cmd/kdual

# make install copies bin/kdual to $(PREFIX)/bin.
PREFIX ?= /usr/local
install: build
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/kdual

# Small problems (n = 150 … 2000): the library's whole fit against
# scikit-learn's KernelPCA().fit, first fit in a fresh process and steady
# state (bench/peers/small.py).
bench-small: peer-deps build
	$(PYTHON) bench/peers/small.py $(BIN) --repeat 21

# The short main job: kernel PCA of the first 5000 Fashion-MNIST images,
# kdual beside scikit-learn's KernelPCA (arpack and randomized), medians of
# 3 alternated runs, one table (the full paper benchmark is make bench).
# NumPy runs on the same OpenBLAS kernels as kdual (scripts/peer-python).
demo: peer-deps build
	$(PYTHON) bench/peers/kernelpca.py $(BIN) --n 5000 --s 10 --repeat 3 --solvers auto --settle 1

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet: deps
	$(GO) vet ./...

# The tests run on the OpenBLAS core the command itself runs: where
# OpenBLAS falls back to a generic core (Prescott, …) on a processor it does
# not know, kdual restarts itself with the matching one (paths.CheckCore),
# and so do the tests here (OpenBLAS 0.3.21's Prescott kernels fail gonum's
# dgeev accuracy test on an AVX-512 Xeon). The restart itself is tested
# with a faked generic core (cmd/kdual TestCoreRestart).
test: deps fmt-check vet sizes build
	@core=$$($(BIN) info --restarted-core 2>/dev/null); \
	if [ -n "$$core" ]; then \
	  echo "test: OpenBLAS chose a generic core here; running the tests with OPENBLAS_CORETYPE=$$core, as kdual does"; \
	  export OPENBLAS_CORETYPE=$$core; \
	fi; \
	set -e; $(GO) test -count=1 ./...; \
	scripts/test-clone-use.sh; \
	$(MAKE) --no-print-directory test-mpi

# The MPI packages (build tag mpi) under mpirun with 2 and 3 ranks (uneven
# row blocks), and a rank that dies: the job must end non-zero within 60 s.
# Skipped, with a message, where Open MPI is not installed.
MPIRUN := env OMPI_MCA_plm=isolated OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none mpirun
test-mpi:
	@if ! pkg-config --exists ompi-c 2>/dev/null || ! command -v mpirun >/dev/null; then \
	  echo "test-mpi: Open MPI is not installed (libopenmpi-dev, openmpi-bin): skipped"; exit 0; fi; \
	set -e; $(GO) vet -tags mpi ./mpi ./dist ./cmd/kdual; \
	bin=$$(mktemp -d)/dist.test; $(GO) test -tags mpi -c -o $$bin ./dist; \
	for np in 2 3; do echo "mpirun -np $$np dist.test"; timeout 600 $(MPIRUN) -np $$np $$bin -test.count=1; done; \
	$(GO) test -tags mpi -count=1 -run '^TestKPCAFitMPI$$' ./cmd/kdual; \
	set +e; start=$$(date +%s); timeout 60 $(MPIRUN) -x KDUAL_TEST_KILL_RANK=1 -np 2 $$bin >/dev/null 2>&1; rc=$$?; \
	secs=$$(( $$(date +%s) - start )); \
	if [ $$rc -eq 0 ] || [ $$rc -eq 124 ]; then echo "test-mpi: a killed rank did not end the job (status $$rc after $$secs s)"; exit 1; fi; \
	echo "test-mpi: a killed rank ended the job with status $$rc after $$secs s"; \
	$(MAKE) --no-print-directory build >/dev/null; MPIRUN="$(MPIRUN)" scripts/test-mpi-faults.sh $(BIN)

# The main job: the n = 7000 rows of the dual-KPCA paper's Tables 2/3 for
# kdual (bench-kdual) and its peers (bench-peers: SciPy eigsh and L-BFGS-B,
# scikit-learn randomized_svd and KernelPCA, NumPy eigh), then the
# comparison tables. Each problem is data:kernel:bandwidth:d:flags; the full
# eigendecomposition (the paper's SVD column, about 85 s a side here) runs
# on the first problem only, KernelPCA on the centred one only (it always
# centres). bench-all adds everything else.
BENCHDIR ?= bench-results
BENCH_N  ?= 7000
BENCH_REPEAT ?= 3
KPCA_PROBLEMS := randn:laplace:paper:256:full fashion:gaussian:median:784:center fashion:laplace:paper:784:
KDUAL_SOLVERS := lbfgs,lanczos,randomized,block
PEER_SOLVERS  := eigsh,randomized_svd,lbfgsb,kernelpca

bench: bench-kdual bench-peers
	@for p in $(KPCA_PROBLEMS); do \
	  set -eo pipefail; IFS=: read data kern bw d flags <<< "$$p"; tag=$$data-$$kern; \
	  $(BIN) bench compare $(BENCHDIR)/$$tag-kdual.json $(BENCHDIR)/$$tag-peers.json | tee $(BENCHDIR)/$$tag.md; echo; \
	done

bench-kdual: build
	@mkdir -p $(BENCHDIR)
	@for p in $(KPCA_PROBLEMS); do \
	  set -eo pipefail; IFS=: read data kern bw d flags <<< "$$p"; tag=$$data-$$kern; \
	  solvers=$(KDUAL_SOLVERS); extra=; \
	  if [ "$$flags" = full ]; then solvers=$$solvers,dense-full; fi; \
	  if [ "$$flags" = center ]; then extra=--center; fi; \
	  echo "== kdual: $$data $$kern $$bw $$flags (n=$(BENCH_N), s=20)"; \
	  $(BIN) bench kpca --data $$data --n $(BENCH_N) --d $$d --components 20 --kernel $$kern --sigma $$bw $$extra \
	    --delta 1e-2,1e-4 --solvers $$solvers --repeat $(BENCH_REPEAT) --float64-time --json $(BENCHDIR)/$$tag-kdual.json; \
	done

bench-peers: build peer-deps
	@mkdir -p $(BENCHDIR)
	@for p in $(KPCA_PROBLEMS); do \
	  set -eo pipefail; IFS=: read data kern bw d flags <<< "$$p"; tag=$$data-$$kern; \
	  peers=$(PEER_SOLVERS); extra=; \
	  if [ "$$flags" = full ]; then peers=$$peers,eigh; fi; \
	  if [ "$$flags" = center ]; then extra=--center; fi; \
	  echo "== peers: $$data $$kern $$bw $$flags (n=$(BENCH_N), s=20)"; \
	  $(PYTHON) bench/peers/kpca.py $(BIN) --data $$data --n $(BENCH_N) --d $$d --s 20 --kernel $$kern \
	    --bandwidth $$bw $$extra --delta 1e-2,1e-4 --peers $$peers --repeat $(BENCH_REPEAT) \
	    --out $(BENCHDIR)/$$tag-peers.json; \
	done

bench-all: bench-go bench-foundation bench-gram bench-mpi bench-lapack bench-eig bench-dual bench-kernelpca bench-small bench-approx bench-threads bench

# Kernel PCA end to end (fit_seconds: data in memory to fitted model):
# against scikit-learn's KernelPCA at n = 7000 and 20 000, then kdual alone
# at n = 60 000 and 70 000 (all of Fashion-MNIST) and n = 100 000 (70 000
# images plus 30 000 shifted noisy copies), twice: with the planner's
# default choice and with a 6 GiB budget. Every large run measures its
# residuals against the float64 kernel (--check) and reports peak memory.
KPCA_LARGE := 60000 70000 100000
bench-kernelpca: build peer-deps
	@mkdir -p $(BENCHDIR)
	$(PYTHON) bench/peers/kernelpca.py $(BIN) --n 7000 --s 20 --repeat 3 | tee $(BENCHDIR)/kernelpca-7000.md
	$(PYTHON) bench/peers/kernelpca.py $(BIN) --n 20000 --s 20 --repeat 3 --solvers auto,lanczos | tee $(BENCHDIR)/kernelpca-20000.md
	@for n in $(KPCA_LARGE); do set -e; \
	  echo "== kdual kpca fit, Fashion-MNIST n=$$n, planner's choice"; \
	  $(BIN) kpca fit --data fashion --n $$n --components 20 --kernel gaussian --sigma median \
	    --tol 1e-6 --products float32 --check --json - > $(BENCHDIR)/kpca-$$n.json; \
	done
	$(BIN) kpca fit --data fashion --n 100000 --components 20 --kernel gaussian --sigma median \
	  --tol 1e-6 --products float32 --memory 6GiB --check --json - > $(BENCHDIR)/kpca-100000-6GiB.json

# Approximate kernel PCA (kdual bench approx): Nyström (RPCholesky and
# uniform landmarks, float64 and float32 features) and random features
# against scikit-learn's Nystroem + PCA and RBFSampler + PCA at m = 250 …
# 2000, on Fashion-MNIST n = 20 000 (exact: kdual Lanczos, tol 1e-8) and all
# 70 000 images (exact: bench-kernelpca's kpca-70000.json, computed here
# when missing); the n = 20 000, m = 1000 ratio from alternated runs
# (bench/peers/nystrom.py); then one run on a million generated images.
# Plots in docs/approx-*.png. About 25 minutes.
APPROX_N := 20000 70000
bench-approx: build peer-deps
	@mkdir -p $(BENCHDIR)
	@test -f $(BENCHDIR)/kpca-70000.json || $(BIN) kpca fit --data fashion --n 70000 --components 20 \
	  --kernel gaussian --sigma median --tol 1e-6 --products float32 --check --json - > $(BENCHDIR)/kpca-70000.json
	@for n in $(APPROX_N); do set -e; \
	  exact=""; if [ $$n = 70000 ]; then exact="--exact $(BENCHDIR)/kpca-70000.json"; fi; \
	  $(BIN) bench approx --n $$n --repeat 3 --precision float64,float32 $$exact \
	    --vectors-out $(BENCHDIR)/approx-$$n-u.npy --json $(BENCHDIR)/approx-$$n.json; \
	  $(PYTHON) bench/peers/approx.py $(BENCHDIR)/approx-$$n.json $(BENCHDIR)/approx-$$n-u.npy --repeat 3 \
	    > $(BENCHDIR)/approx-$$n-peers.json; \
	  $(BIN) bench approx-report --ours $(BENCHDIR)/approx-$$n.json --peers $(BENCHDIR)/approx-$$n-peers.json \
	    --png docs/approx-$$n.png | tee $(BENCHDIR)/approx-$$n.md; \
	done
	$(PYTHON) bench/peers/nystrom.py $(BIN) --n 20000 --m 1000 --repeat 3 | tee $(BENCHDIR)/nystrom-20000.md
	$(BIN) bench approx --large 1000000 --m 2000 --json $(BENCHDIR)/approx-1000000.json
	@cat $(BENCHDIR)/approx-1000000.json

# The Gaussian Gram matrix against NumPy's X @ X.T and rbf_kernel.
# gonum's decompositions (mat.EigenSym, SVD, QR, LU, Cholesky, Eigen) at
# n = 2000 with gonum's LAPACK on OpenBLAS (lapack/gonum) against NumPy and
# SciPy on the same OpenBLAS (medians of 3 alternated runs) and against
# gonum's own Go LAPACK (one run: about 3 minutes).
bench-lapack: build peer-deps
	@mkdir -p $(BENCHDIR)
	$(PYTHON) bench/peers/lapack.py $(BIN) --n 2000 --repeat 3 --native-repeat 1 | tee $(BENCHDIR)/lapack-2000.md

# A saved KPCA model read by NumPy alone reproduces kdual's transform of
# new points, for every kernel (bench/peers/kpca_model.py; fails above 1e-12).
bench-model: build peer-deps
	$(PYTHON) bench/peers/kpca_model.py $(BIN)

# scikit-learn's kernels live: KernelPCA beside `kdual kpca fit` on Iris and
# 500 digits, every kernel (bench/peers/sklearn_kernels.py; fails above 1e-8).
peer-kernels: build peer-deps
	$(PYTHON) bench/peers/sklearn_kernels.py --check $(BIN)

bench-gram: build peer-deps
	$(PYTHON) bench/peers/gram.py $(BIN) --n 7000 --repeat 5

# Kernel PCA over MPI on this machine: one process against 1, 2 and 4 ranks
# (docs/mpi.md), then the scaling model from the measured rates, then
# kdual --mpi beside SLEPc's Krylov–Schur on 2 ranks (bench/peers/slepc.py:
# n = 20 000, top 20, both checked by one float64 residual computation).
bench-mpi: build peer-deps
	@scripts/deps.sh $(MPIPEERDEPS)
	$(PYTHON) bench/mpi_scaling.py $(BIN) --n 20000 --repeat 3 --ranks 1,2,4
	$(PYTHON) bench/mpi_model.py
	$(PYTHON) bench/peers/slepc.py $(BIN) --n 20000 --s 20 --ranks 2 --repeat 3

# Thread scaling 1 → 2: the Gram build and a block pass against OpenBLAS's
# own DGEMM and DGEMV on the same data and kernels (bench/peers/threads.py).
bench-threads: build peer-deps
	$(PYTHON) bench/peers/threads.py $(BIN) --n 7000 --threads 1,2 --repeat 9

# All sizes: the n = 60 000 Fashion-MNIST row of the paper's protocol, the
# operator chosen by the planner (float32 half storage here, about 8 GB).
bench-full: bench build
	set -o pipefail; $(BIN) bench kpca --data fashion --n 60000 --kernel gaussian --sigma median \
	  --solvers lbfgs,lanczos,block --delta 1e-2,1e-4 --repeat 1 | tee $(BENCHDIR)/fashion-60000.txt

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

# The dual probabilistic-PCA paper's settings: the toy (q = 1, 3, 10) and
# the 0/1 image sets (digits, Fashion-MNIST), with the figures in docs/.
PPCA_OUT ?= docs
ppca: build
	@for q in 1 3 10; do $(BIN) ppca --data toy --components $$q --sample 300 --plot $(PPCA_OUT)/ppca_toy_q$$q.png; done
	$(BIN) ppca --data digits --classes 0,1 --components 2 --sigma 4 --sample 100 --plot $(PPCA_OUT)/ppca_digits01.png
	$(BIN) ppca --data fashion --classes 0,1 --n 500 --components 2 --sigma 4 --sample 100 --plot $(PPCA_OUT)/ppca_fashion01.png

# The multi-view RKM paper's forecasting settings, figures in docs/: the sum
# of sines in all four settings, SantaFe with dual and primal eig, and 100
# Stiefel steps in each setting (the dual/primal cost per step). The full
# dual Stiefel run (10 000 steps, about 15 minutes here) is
#   bin/kdual rkm forecast --data santafe --setting dual --train stiefel --rotate
RKM_OUT ?= docs
rkm: build
	@for st in primal dual; do for tr in eig stiefel; do \
	  rot=; [ $$tr = stiefel ] && rot=--rotate; \
	  $(BIN) rkm forecast --data sines --setting $$st --train $$tr $$rot --plot $(RKM_OUT)/rkm_sines_$${st}_$$tr.png; done; done
	$(BIN) rkm forecast --data sines --setting primal --no-rescale --plot $(RKM_OUT)/rkm_sines_primal_norescale.png
	$(BIN) rkm forecast --data santafe --setting dual --train eig --plot $(RKM_OUT)/rkm_santafe_dual_eig.png
	$(BIN) rkm forecast --data santafe --setting primal --train eig --plot $(RKM_OUT)/rkm_santafe_primal_eig.png
	$(BIN) rkm forecast --data santafe --setting dual --train stiefel --max-iter 100
	$(BIN) rkm forecast --data santafe --setting primal --train stiefel --max-iter 100

mutate: deps
	$(GO) run ./scripts/mutate

# The sampled mutation score: MUTANTS mutants drawn with MUTATE_SEED from
# every arithmetic operator, comparison and numeric constant of the
# packages below (dist/ is left out: its tests need mpirun), each tested
# with the tests that execute it; equivalents are listed with their
# argument in scripts/mutate/equivalent.txt. About an hour on 2 cores.
MUTANTS     ?= 300
MUTATE_SEED ?= 1
MUTATE_PKGS ?= ./models/... ./approx/... ./eig ./lbfgs/... ./stiefel/... ./lapack/gonum/...
mutate-random: build
	@core=$$($(BIN) info --restarted-core 2>/dev/null); if [ -n "$$core" ]; then export OPENBLAS_CORETYPE=$$core; fi; \
	$(GO) run ./scripts/mutate -random $(MUTANTS) -seed $(MUTATE_SEED) -pkgs "$(MUTATE_PKGS)"

# The house's size limits: no non-test Go or C file over 600 lines, no
# non-test function over 100 (scripts/sizes); part of make test.
sizes:
	$(GO) run ./scripts/sizes -strict

fuzz: deps
	$(GO) test ./dataset -run '^$$' -fuzz '^FuzzReadCSV$$' -fuzztime $(FUZZTIME)
	$(GO) test ./dataset -run '^$$' -fuzz '^FuzzReadIDX$$' -fuzztime $(FUZZTIME)
	$(GO) test ./dataset -run '^$$' -fuzz '^FuzzParseSeries$$' -fuzztime $(FUZZTIME)
	$(GO) test ./dataset -run '^$$' -fuzz '^FuzzReadNPY$$' -fuzztime $(FUZZTIME)
	$(GO) test ./models/fuzz -run '^$$' -fuzz '^FuzzModels$$' -fuzztime $(FUZZTIME)
	$(GO) test ./models/kpca -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime $(FUZZTIME)
	$(GO) test ./models/ppca -run '^$$' -fuzz '^FuzzLoadDual$$' -fuzztime $(FUZZTIME)
	$(GO) test ./models/rkm -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime $(FUZZTIME)
	$(GO) test ./models/kmvda -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime $(FUZZTIME)

clean:
	rm -rf bin
