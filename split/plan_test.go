package split

import (
	"slices"
	"strings"
	"testing"
)

func TestLayers(t *testing.T) {
	tests := []struct {
		name   string
		layers int
		weight []float64
		want   []Stage
	}{
		{"one device", 4, []float64{1}, []Stage{{0, 0, 4}}},
		{"even over two", 32, []float64{1, 1}, []Stage{{0, 0, 17}, {1, 17, 32}}},
		{"three to one", 32, []float64{3, 1}, []Stage{{0, 0, 25}, {1, 25, 32}}},
		{"idle device skipped", 4, []float64{1, 0, 1}, []Stage{{0, 0, 3}, {2, 3, 4}}},
		{"output alone on last", 1, []float64{1, 1}, []Stage{{0, 0, 1}, {1, 1, 1}}},
		{"four virtual", 8, []float64{1, 1, 1, 1}, []Stage{{0, 0, 3}, {1, 3, 5}, {2, 5, 7}, {3, 7, 8}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Layers(tt.layers, tt.weight)
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("Layers(%d, %v) = %v, %v; want %v", tt.layers, tt.weight, got, err, tt.want)
			}
		})
	}
}

func TestLayersErrors(t *testing.T) {
	for _, tt := range []struct {
		layers int
		weight []float64
	}{{-1, []float64{1}}, {4, nil}, {4, []float64{0, 0}}, {4, []float64{1, -1}}} {
		if got, err := Layers(tt.layers, tt.weight); err == nil {
			t.Errorf("Layers(%d, %v) = %v, want an error", tt.layers, tt.weight, got)
		}
	}
}

func TestLayersCoverEveryLayerOnce(t *testing.T) {
	for n := 1; n < 90; n += 7 {
		for _, w := range [][]float64{{1}, {1, 1}, {2, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1}, {0.3, 0.7}} {
			st, err := Layers(n, w)
			if err != nil {
				t.Fatal(err)
			}
			next := 0
			for i, s := range st {
				if s.First != next || (s.Layers() == 0 && i != len(st)-1) {
					t.Fatalf("Layers(%d, %v) = %v: gap or empty stage at %d", n, w, st, i)
				}
				next = s.Last
			}
			if next != n {
				t.Fatalf("Layers(%d, %v) = %v: ends at %d", n, w, st, next)
			}
		}
	}
}

const gib = 1 << 30

func sizes(n int, layer int64) Sizes {
	s := Sizes{Layer: make([]int64, n), KV: 64 << 20, Input: 250 << 20, Output: 250 << 20, Scratch: 32 << 20}
	for i := range s.Layer {
		s.Layer[i] = layer
	}
	return s
}

func TestMakeTwoGPUs(t *testing.T) {
	devs := []Device{{Name: "cuda:0", Free: 140 * gib}, {Name: "cuda:1", Free: 140 * gib}}
	p, err := Make(sizes(32, 100<<20), devs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Stages) != 2 || p.Stages[0].Last != 17 || p.Stages[1].Device.Name != "cuda:1" {
		t.Fatalf("plan:\n%s", p)
	}
	want0 := int64(17)*(100<<20) + 250<<20
	if p.Stages[0].Weights != want0 || p.Stages[0].KV != 17*(64<<20) {
		t.Errorf("stage 0 weights %d kv %d, want %d, %d", p.Stages[0].Weights, p.Stages[0].KV, want0, 17*(64<<20))
	}
	if s := p.String(); !strings.Contains(s, "17-31+out") || !strings.Contains(s, "cuda:1") {
		t.Errorf("plan table lacks the last stage:\n%s", s)
	}
}

func TestMakeVirtualDevicesShareMemory(t *testing.T) {
	devs := []Device{{Name: "cuda:0", Free: 10 * gib}, {Name: "cuda:1", Free: 10 * gib},
		{Name: "cuda:0", Free: 10 * gib}, {Name: "cuda:1", Free: 10 * gib}}
	p, err := Make(sizes(32, 100<<20), devs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Stages) != 4 {
		t.Fatalf("want 4 stages:\n%s", p)
	}
	// Both slots of cuda:0 draw on the same free memory.
	used := p.Stages[0].Weights + p.Stages[0].KV + p.Stages[0].Scratch + p.Stages[2].Weights + p.Stages[2].KV + p.Stages[2].Scratch
	if p.Stages[0].FreeAfter != 10*gib-used || p.Stages[2].FreeAfter != p.Stages[0].FreeAfter {
		t.Errorf("free after = %d, %d; want %d for both", p.Stages[0].FreeAfter, p.Stages[2].FreeAfter, 10*gib-used)
	}
}

func TestMakeDoesNotFit(t *testing.T) {
	devs := []Device{{Name: "cuda:0", Free: 2 * gib}, {Name: "cuda:1", Free: 1 * gib}}
	_, err := Make(sizes(32, 100<<20), devs, Options{Ratios: []float64{1, 1}})
	if err == nil || !strings.Contains(err.Error(), "cuda:") || !strings.Contains(err.Error(), "more than its") {
		t.Fatalf("err = %v, want a shortfall naming the device", err)
	}
}

func TestMakePartialOffload(t *testing.T) {
	cpu := Device{Name: "cpu", Free: 64 * gib}
	devs := []Device{{Name: "cuda:0", Free: 80 * gib}}
	tests := []struct {
		ngl  int
		want []Stage
	}{
		{99, []Stage{{0, 0, 32}}},
		{33, []Stage{{0, 0, 32}}},
		{32, []Stage{{-1, 0, 1}, {0, 1, 32}}},
		{1, []Stage{{-1, 0, 32}, {0, 32, 32}}},
		{0, []Stage{{-1, 0, 32}}},
	}
	for _, tt := range tests {
		p, err := Make(sizes(32, 100<<20), devs, Options{CPU: &cpu, GPULayers: tt.ngl})
		if err != nil {
			t.Fatalf("ngl %d: %v", tt.ngl, err)
		}
		var got []Stage
		for _, s := range p.Stages {
			got = append(got, s.Stage)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("ngl %d: stages %v, want %v", tt.ngl, got, tt.want)
		}
	}
}

func TestPlanStringUnlimited(t *testing.T) {
	cpu := Device{Name: "cpu", Free: Unlimited}
	p, err := Make(Sizes{Layer: []int64{1 << 20, 1 << 20}}, []Device{{Name: "cuda:0", Free: 1 << 30}}, Options{CPU: &cpu, GPULayers: 2})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(p.String()), "\n")
	if len(lines) != 3 || !strings.HasSuffix(lines[1], " -") || strings.HasSuffix(lines[2], " -") {
		t.Errorf("plan:\n%s\nwant the CPU's free memory as -, the GPU's as bytes", p)
	}
}
