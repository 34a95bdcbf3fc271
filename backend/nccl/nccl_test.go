package nccl

import (
	"errors"
	"testing"
)

// TestLoad checks the two outcomes of loading NCCL: a version where the library is
// installed, else an error that says NCCL was not found.
func TestLoad(t *testing.T) {
	err := Load()
	if err != nil {
		if !errors.Is(err, ErrNotFound) {
			t.Fatalf("Load: %v, want ErrNotFound", err)
		}
		if _, err := GetUniqueID(); !errors.Is(err, ErrNotFound) {
			t.Errorf("GetUniqueID without NCCL: %v", err)
		}
		if _, err := InitRank(2, UniqueID{}, 0); !errors.Is(err, ErrNotFound) {
			t.Errorf("InitRank without NCCL: %v", err)
		}
		t.Logf("no NCCL here: %v", err)
		return
	}
	v, err := Version()
	if err != nil || v < 20000 {
		t.Fatalf("Version %d, %v", v, err)
	}
	id, err := GetUniqueID()
	if err != nil {
		t.Fatal(err)
	}
	if id == (UniqueID{}) {
		t.Error("unique id is all zero")
	}
	t.Logf("NCCL %d", v)
}
