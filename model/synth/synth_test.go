package synth

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/infergo/infer/model/gguf"
	"github.com/infergo/infer/tensor"
)

// plannedInfos turns a plan's tensors into the directory a written file would have.
func plannedInfos(p *Plan) []gguf.TensorInfo {
	var infos []gguf.TensorInfo
	for _, t := range p.Tensors {
		infos = append(infos, gguf.TensorInfo{Name: t.Name, Dims: t.Dims, Type: t.Type})
	}
	return infos
}

// metadataOnly writes p's metadata and vocabulary, without tensors, and parses it.
func metadataOnly(t *testing.T, p *Plan) *gguf.File {
	t.Helper()
	v, err := NewVocab(p.Shape.VocabKind, p.Shape.NVocab)
	if err != nil {
		t.Fatal(err)
	}
	w := gguf.NewWriter()
	setMetadata(w, p, "test")
	setVocab(w, v)
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestSynthRules checks what synth writes against llama.cpp's loading rules: for every
// shape × type the planned tensor list (names, shapes, types, block alignment, byte
// sizes) and the metadata and vocabulary, without generating weights; then it writes
// and reads back the tiny shape in every type and LLaMA-2-7B cut to one block.
func TestSynthRules(t *testing.T) {
	t.Run("plans", testPlans)
	t.Run("tiny", testWriteTiny)
	t.Run("7b-1-layer", testWrite7BOneLayer)
}

// requiredKeys are the metadata keys synth promises, with their GGUF types; ARCH stands
// for the shape's architecture.
var requiredKeys = map[string]gguf.ValueType{
	"general.architecture": gguf.StringType, "general.name": gguf.StringType,
	"general.file_type": gguf.Uint32Type, "ARCH.context_length": gguf.Uint32Type,
	"ARCH.embedding_length": gguf.Uint32Type, "ARCH.block_count": gguf.Uint32Type,
	"ARCH.feed_forward_length": gguf.Uint32Type, "ARCH.rope.dimension_count": gguf.Uint32Type,
	"ARCH.attention.head_count": gguf.Uint32Type, "ARCH.attention.head_count_kv": gguf.Uint32Type,
	"ARCH.attention.layer_norm_rms_epsilon": gguf.Float32Type, "ARCH.rope.freq_base": gguf.Float32Type,
	"ARCH.vocab_size": gguf.Uint32Type, "tokenizer.ggml.model": gguf.StringType,
	"tokenizer.ggml.tokens": gguf.ArrayType, "tokenizer.ggml.token_type": gguf.ArrayType,
	"tokenizer.ggml.bos_token_id": gguf.Uint32Type, "tokenizer.ggml.eos_token_id": gguf.Uint32Type,
}

// testPlans checks every shape × type without writing weights.
func testPlans(t *testing.T) {
	vocabFiles := map[string]*gguf.File{} // metadata differs only by file type; vocab by shape
	for _, s := range Shapes() {
		for _, ft := range FileTypes() {
			p, err := NewPlan(s, ft)
			if err != nil {
				t.Errorf("%s %s: %v", s.Name, ft.Name, err)
				continue
			}
			if err := checkTensors(plannedInfos(p), s); err != nil {
				t.Errorf("%s %s: planned tensors: %v", s.Name, ft.Name, err)
			}
			checkPlanTypes(t, p)
			if vocabFiles[s.Name] == nil {
				vocabFiles[s.Name] = metadataOnly(t, p)
			}
		}
		f := vocabFiles[s.Name]
		for key, typ := range requiredKeys {
			key = strings.Replace(key, "ARCH.", s.Architecture()+".", 1)
			if v, ok := f.Value(key); !ok || v.Type() != typ {
				t.Errorf("%s: key %s: %v, want a %v", s.Name, key, v.Type(), typ)
			}
		}
		got, err := ShapeOf(f)
		if err != nil {
			t.Errorf("%s: metadata: %v", s.Name, err)
			continue
		}
		if got.NVocab != s.NVocab || got.NHeadKV != s.NHeadKV || got.NFF != s.NFF || got.RopeBase != s.RopeBase ||
			got.HeadDim() != s.HeadDim() || got.Architecture() != s.Architecture() {
			t.Errorf("%s: metadata reads back as %+v, want %+v", s.Name, got, s)
		}
		if err := checkVocab(f, s.NVocab); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
	}
}

// checkPlanTypes checks each planned tensor's type, block alignment and byte size.
func checkPlanTypes(t *testing.T, p *Plan) {
	t.Helper()
	var sum int64
	for _, ts := range p.Tensors {
		want := p.FileType.Weight
		if len(ts.Dims) == 1 {
			want = tensor.F32
		}
		bs := int64(ts.Type.BlockSize())
		wantBytes := ts.Elements() / bs * int64(ts.Type.BlockBytes())
		if ts.Type != want || int64(ts.Dims[0])%bs != 0 || ts.Bytes() != wantBytes {
			t.Errorf("%s %s: tensor %s: %v %v, %d bytes; want %v, %d bytes", p.Shape.Name, p.FileType.Name, ts.Name, ts.Type, ts.Dims, ts.Bytes(), want, wantBytes)
		}
		sum += ts.Elements()
	}
	if sum != p.Shape.Params() {
		t.Errorf("%s: tensors hold %d elements, Params() = %d", p.Shape.Name, sum, p.Shape.Params())
	}
}

// TestShapeSizes pins the parameter counts of the real models (LLaMA-2 7B 6,738,415,616;
// 13B 13,015,864,320; 70B 68,976,648,192; LLaMA-3 8B 8,030,261,248; Qwen2.5-7B
// 7,615,616,512; Qwen3-8B 8,190,735,360, untied output heads) and the data size
// of pure Q4_0 files (18 bytes per 32 weights, norms F32): a 70B is 38.8 GB.
func TestShapeSizes(t *testing.T) {
	tests := []struct {
		shape  string
		params int64
		q4GB   string // pure Q4_0 tensor data, %.1f GB
	}{
		{"7b", 6_738_415_616, "3.8"},
		{"8b", 8_030_261_248, "4.5"},
		{"13b", 13_015_864_320, "7.3"},
		{"70b", 68_976_648_192, "38.8"},
		{"qwen2.5-7b", 7_615_616_512, "4.3"},
		{"qwen3-8b", 8_190_735_360, "4.6"},
	}
	q4, _ := LookupFileType("Q4_0")
	for _, tt := range tests {
		s, err := LookupShape(tt.shape)
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewPlan(s, q4)
		if err != nil {
			t.Fatal(err)
		}
		gb := fmt.Sprintf("%.1f", float64(p.Bytes())/1e9)
		if s.Params() != tt.params || gb != tt.q4GB {
			t.Errorf("%s: %d params, %s GB Q4_0; want %d, %s GB", tt.shape, s.Params(), gb, tt.params, tt.q4GB)
		}
	}
}
