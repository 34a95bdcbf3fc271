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

kernels: $(KERNELS:.cu=.ptx)

backend/cuda/kernels/%.ptx: backend/cuda/kernels/%.cu $(wildcard backend/cuda/kernels/*.cuh)
	$(NVCC) -arch=$(CUDA_ARCH) -O3 -ptx -o $@ $<

check-kernels:
	@for f in $(KERNELS); do $(NVCC) -arch=$(CUDA_ARCH) -O3 -ptx -o /tmp/check.ptx $$f && cmp -s /tmp/check.ptx $${f%.cu}.ptx || { echo "$$f: committed PTX is stale; run make kernels"; exit 1; }; done

lint:
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt needed"; exit 1; }
	$(GO) vet ./...

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzOpen -fuzztime 60s ./model/gguf/

clean:
	rm -rf $(BIN)
