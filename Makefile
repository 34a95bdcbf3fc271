# infer: see README.md. Every target works on a machine with Go only; `kernels` needs nvcc.
GO        ?= go
BIN       := bin
TESTDATA  ?= $(if $(INFER_TESTDATA),$(INFER_TESTDATA),../shared/testdata)
MODEL     ?= $(if $(wildcard $(TESTDATA)/stories260K-F32.gguf),$(TESTDATA)/stories260K-F32.gguf,$(BIN)/tiny.gguf)
PROMPT    ?= Once upon a time
N         ?= 64
NVCC      ?= nvcc
# compute_80 (Ampere) PTX: JIT-compiled by any driver that supports sm_80 or newer (H100/H200 too).
CUDA_ARCH ?= compute_80
# Machine code assembled from that PTX into each module's fatbin, so that these GPUs load the
# kernels without JIT compilation; the fatbin carries the PTX too, for newer GPUs. The modules
# of PDL_MODULES have sm_90-only code (programmatic dependent launch, kernels/pdl.cuh): their
# sm_90 machine code is compiled from the compute_90 front end instead.
SASS_ARCH   ?= sm_80 sm_86 sm_89 sm_90
PDL_MODULES := matvec norm attention elementwise
# The modules of SM90A_MODULES hold Hopper-only instructions (wgmma): their PTX is
# compute_90a and their fatbin sm_90a code and that PTX alone (package cuda loads them
# on compute capability 9.0 only).
SM90A_MODULES := wgmma
# ptx_arch is the PTX target of module $(1).
ptx_arch = $(if $(filter $(1),$(SM90A_MODULES)),compute_90a,$(CUDA_ARCH))
# fatbin_flags are the nvcc flags of module $(1)'s fatbin.
fatbin_flags = -fatbin --threads 0 $(if $(filter $(1),$(SM90A_MODULES)), \
	-gencode arch=compute_90a$(comma)code=sm_90a -gencode arch=compute_90a$(comma)code=compute_90a, \
	$(foreach a,$(SASS_ARCH),-gencode \
	arch=$(if $(and $(filter sm_90,$(a)),$(filter $(1),$(PDL_MODULES))),compute_90,$(CUDA_ARCH)),code=$(a)) \
	-gencode arch=$(CUDA_ARCH),code=$(CUDA_ARCH))
comma := ,
KERNELS   := $(wildcard backend/cuda/kernels/*.cu)

export INFER_TESTDATA := $(abspath $(TESTDATA))

# LEVEL_PKGS are tested again at every CPU kernel level below the machine's best
# (build tags infer_avx2: no AVX-512; infer_portable: no SIMD kernels), the model
# package through its conformance tests (CONFORMANCE).
LEVEL_PKGS  := ./tensor ./backend/cpu
CONFORMANCE := TestLogitsMatchLlamaCpp|TestGreedyMatchesLlamaCpp|TestGenerateGreedyReference|TestPerplexityStories260K|TestPerplexityAllModels
QEMU_ARM64  ?= qemu-aarch64

.PHONY: build test test-levels test-arm64 qemu-deps run bench kernels check-kernels lint fuzz clean

build:
	$(GO) build -o $(BIN)/infer ./cmd/infer

test: test-levels test-arm64

# test-levels: the whole suite at the machine's level, then the kernel packages and the
# model's conformance tests with the level capped at AVX2 (amd64 only) and at portable.
# ./... leaves out folders named testdata, so internal/testdata is named on its own.
test-levels:
	$(GO) vet ./... ./internal/testdata
	$(GO) test -timeout 20m ./... ./internal/testdata
	$(if $(filter amd64,$(shell $(GO) env GOARCH)),$(GO) test -timeout 20m -tags infer_avx2 $(LEVEL_PKGS) && $(GO) test -timeout 20m -tags infer_avx2 -run '$(CONFORMANCE)' ./model)
	$(GO) test -timeout 20m -tags infer_portable $(LEVEL_PKGS)
	$(GO) test -timeout 20m -tags infer_portable -run '$(CONFORMANCE)' ./model

# test-arm64: the module builds and vets without cgo (backend/cuda then reports "no CUDA
# driver"), builds for linux/arm64 and darwin/arm64 without cgo, and where
# qemu user emulation is installed (make qemu-deps) the kernel packages' tests pass on
# arm64 under it, at both NEON levels: a CPU with the dot-product instructions (-cpu max,
# level neon-dotprod: every test) and one without (cortex-a53, level neon: the NEON kernel
# tests of tensor, which compare both levels' kernels with the Go code, and backend/cpu;
# the whole tensor suite a second time under emulation would double make test's time).
# The portable level is the same Go code as on amd64 (test-levels); -tags infer_neon
# caps an arm64 machine with SDOT at neon.
#
# ARM64_CONFORMANCE is the part of the model conformance tests run under qemu (30 s; the
# whole $(CONFORMANCE) list takes 4 minutes a level there): llama.cpp's logits and greedy
# text, which catch a Go expression that the arm64 compiler fuses into an FMA.
ARM64_CONFORMANCE := TestLogitsMatchLlamaCpp|TestGreedyMatchesLlamaCpp
test-arm64:
	CGO_ENABLED=0 $(GO) build ./... && CGO_ENABLED=0 $(GO) vet ./...
	GOARCH=arm64 $(GO) vet ./...
	GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build ./...
	GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 $(GO) build -o /dev/null ./cmd/infer
	@if command -v $(QEMU_ARM64) >/dev/null 2>&1; then \
		echo "GOARCH=arm64 $(GO) test -exec '$(QEMU_ARM64) -cpu max' $(LEVEL_PKGS)"; \
		GOARCH=arm64 $(GO) test -timeout 20m -exec '$(QEMU_ARM64) -cpu max' $(LEVEL_PKGS) && \
		echo "GOARCH=arm64 $(GO) test -exec '$(QEMU_ARM64) -cpu cortex-a53' -run 'NEON' ./tensor; ... ./backend/cpu" && \
		GOARCH=arm64 $(GO) test -timeout 20m -exec '$(QEMU_ARM64) -cpu cortex-a53' -run 'NEON' ./tensor && \
		GOARCH=arm64 $(GO) test -timeout 20m -exec '$(QEMU_ARM64) -cpu cortex-a53' ./backend/cpu && \
		echo "GOARCH=arm64 $(GO) test -exec '$(QEMU_ARM64) -cpu max' -run '$(ARM64_CONFORMANCE)' ./model" && \
		GOARCH=arm64 $(GO) test -timeout 20m -exec '$(QEMU_ARM64) -cpu max' -run '$(ARM64_CONFORMANCE)' ./model; \
	else \
		echo "test-arm64: $(QEMU_ARM64) not installed (make qemu-deps): arm64 tests skipped"; \
	fi

# qemu-deps installs qemu user emulation (Debian/Ubuntu) for test-arm64.
qemu-deps:
	command -v $(QEMU_ARM64) >/dev/null 2>&1 || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q qemu-user; }

$(BIN)/tiny.gguf: build
	$(BIN)/infer synth --shape tiny --type F32 -o $@

run: build $(if $(filter $(BIN)/tiny.gguf,$(MODEL)),$(BIN)/tiny.gguf)
	$(BIN)/infer run -m $(MODEL) -p "$(PROMPT)" -n $(N)

bench: build
	$(GO) test -run '^$$' -bench . -benchtime 1x ./bench/... 
	$(GO) test -run '^$$' -bench . ./tensor/ ./backend/cpu/

FATBINS   := $(patsubst backend/cuda/kernels/%.cu,backend/cuda/kernels/fatbin/%.fatbin,$(KERNELS))

kernels: $(KERNELS:.cu=.ptx) $(FATBINS)

backend/cuda/kernels/%.ptx: backend/cuda/kernels/%.cu $(wildcard backend/cuda/kernels/*.cuh)
	$(NVCC) -arch=$(call ptx_arch,$*) -O3 -ptx -o $@ $<

# The fatbin is compiled from the same source with the same front-end flags as the PTX (in the
# kernels folder, so that no path enters it); fatbin/<module>.fatbin.sha256 records the PTX built
# beside it, and the Go code uses a fatbin only while that matches the committed PTX.
backend/cuda/kernels/fatbin/%.fatbin: backend/cuda/kernels/%.cu backend/cuda/kernels/%.ptx $(wildcard backend/cuda/kernels/*.cuh)
	cd backend/cuda/kernels && $(NVCC) $(call fatbin_flags,$*) -O3 -o fatbin/$*.fatbin $*.cu && sha256sum $*.ptx >fatbin/$*.fatbin.sha256

check-kernels:
	@for f in $(KERNELS); do m=$${f%.cu}; n=$${m##*/}; \
		case " $(SM90A_MODULES) " in *" $$n "*) pa=compute_90a;; *) pa=$(CUDA_ARCH);; esac; \
		$(NVCC) -arch=$$pa -O3 -ptx -o /tmp/check.ptx $$f && cmp -s /tmp/check.ptx $$m.ptx || { echo "$$f: committed PTX is stale; run make kernels"; exit 1; }; \
		case " $(PDL_MODULES) " in *" $$n "*) fb='$(call fatbin_flags,$(firstword $(PDL_MODULES)))';; *) fb='$(call fatbin_flags,)';; esac; \
		case " $(SM90A_MODULES) " in *" $$n "*) fb='$(call fatbin_flags,$(firstword $(SM90A_MODULES)))';; esac; \
		(cd backend/cuda/kernels && $(NVCC) $$fb -O3 -o /tmp/check.fatbin $$n.cu && cmp -s /tmp/check.fatbin fatbin/$$n.fatbin && sha256sum -c --quiet fatbin/$$n.fatbin.sha256) || { echo "fatbin/$$n.fatbin: stale or not reproduced; run make kernels"; exit 1; }; done

lint:
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt needed"; exit 1; }
	$(GO) vet ./...

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzOpen -fuzztime 60s ./model/gguf/

clean:
	rm -rf $(BIN)
