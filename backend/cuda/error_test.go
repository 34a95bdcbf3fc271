package cuda

import (
	"errors"
	"fmt"
	"testing"
)

func TestResultNames(t *testing.T) {
	tests := []struct {
		r    Result
		want string
	}{
		{ErrOutOfMemory, "CUDA_ERROR_OUT_OF_MEMORY"},
		{ErrPeerAccessAlreadyEnabled, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED"},
		{ErrNoDevice, "CUDA_ERROR_NO_DEVICE"},
		{0, "CUDA_SUCCESS"},
	}
	for _, tt := range tests {
		if got := tt.r.String(); got != tt.want {
			t.Errorf("Result(%d) = %q, want %q", int(tt.r), got, tt.want)
		}
	}
	if s := Result(123456).String(); s != "CUresult(123456)" && s == "" {
		t.Errorf("unknown result named %q", s)
	}
}

func TestErrorWrapping(t *testing.T) {
	err := fmt.Errorf("alloc: %w", &Error{Op: "cuMemAlloc_v2", Code: ErrOutOfMemory})
	if !errors.Is(err, ErrOutOfMemory) {
		t.Error("errors.Is(err, ErrOutOfMemory) = false")
	}
	var ce *Error
	if !errors.As(err, &ce) || ce.Op != "cuMemAlloc_v2" {
		t.Errorf("errors.As: %v", ce)
	}
	if got, want := err.Error(), "alloc: cuda: cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
