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
# kernels without JIT compilation; the fatbin carries the PTX too, for newer GPUs.
SASS_ARCH ?= sm_80 sm_86 sm_89 sm_90
FATBIN    := -fatbin --threads 0 $(foreach a,$(SASS_ARCH),-gencode arch=$(CUDA_ARCH),code=$(a)) -gencode arch=$(CUDA_ARCH),code=$(CUDA_ARCH)
KERNELS   := $(wildcard backend/cuda/kernels/*.cu)

export INFER_TESTDATA := $(abspath $(TESTDATA))

.PHONY: build test run bench kernels check-kernels lint fuzz clean

build:
	$(GO) build -o $(BIN)/infer ./cmd/infer

test:
	CGO_ENABLED=0 $(GO) build ./... && CGO_ENABLED=0 $(GO) vet ./backend/cuda && GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 $(GO) build -o /dev/null ./cmd/infer
	$(GO) vet ./...
	$(GO) test -timeout 20m ./...

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
	$(NVCC) -arch=$(CUDA_ARCH) -O3 -ptx -o $@ $<

# The fatbin is compiled from the same source with the same front-end flags as the PTX (in the
# kernels folder, so that no path enters it); fatbin/<module>.fatbin.sha256 records the PTX built
# beside it, and the Go code uses a fatbin only while that matches the committed PTX.
backend/cuda/kernels/fatbin/%.fatbin: backend/cuda/kernels/%.cu backend/cuda/kernels/%.ptx $(wildcard backend/cuda/kernels/*.cuh)
	cd backend/cuda/kernels && $(NVCC) $(FATBIN) -O3 -o fatbin/$*.fatbin $*.cu && sha256sum $*.ptx >fatbin/$*.fatbin.sha256

check-kernels:
	@for f in $(KERNELS); do m=$${f%.cu}; $(NVCC) -arch=$(CUDA_ARCH) -O3 -ptx -o /tmp/check.ptx $$f && cmp -s /tmp/check.ptx $$m.ptx || { echo "$$f: committed PTX is stale; run make kernels"; exit 1; }; \
		n=$${m##*/}; (cd backend/cuda/kernels && $(NVCC) $(FATBIN) -O3 -o /tmp/check.fatbin $$n.cu && cmp -s /tmp/check.fatbin fatbin/$$n.fatbin && sha256sum -c --quiet fatbin/$$n.fatbin.sha256) || { echo "fatbin/$$n.fatbin: stale or not reproduced; run make kernels"; exit 1; }; done

lint:
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt needed"; exit 1; }
	$(GO) vet ./...

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzOpen -fuzztime 60s ./model/gguf/

clean:
	rm -rf $(BIN)
