package model

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/infergo/infer/internal/testdata"
	"github.com/infergo/infer/model/gguf"
	"github.com/infergo/infer/tensor"
)

// letters is a fake vocabulary: 0 unk, 1 BOS, 2 EOS, then 'a'... from id 3.
type letters struct{ addBOS bool }

func (l letters) Encode(text string, addSpecial bool) []int32 {
	var ids []int32
	if addSpecial && l.addBOS {
		ids = append(ids, 1)
	}
	for _, c := range []byte(text) {
		ids = append(ids, int32(c-'a')+3)
	}
	return ids
}

func (letters) Piece(id int32) []byte {
	if id < 3 {
		return []byte(fmt.Sprintf("<%d>", id))
	}
	return []byte{byte(id-3) + 'a'}
}

func (letters) IsEOG(id int32) bool { return id == 2 }

// chain is a fake session whose logits make next[last token] the argmax.
type chain struct {
	next   map[int32]int32
	pos    int
	calls  []string
	failAt int
}

func (c *chain) Pos() int { return c.pos }

func (c *chain) Eval(tokens []int32, all bool) ([]float32, error) {
	c.calls = append(c.calls, fmt.Sprint(tokens))
	if len(c.calls) == c.failAt {
		return nil, errors.New("out of memory")
	}
	c.pos += len(tokens)
	logits := make([]float32, 30)
	logits[c.next[tokens[len(tokens)-1]]] = 10
	return logits, nil
}

// succ maps every letter to the following one, 'e' to EOS.
func succ() map[int32]int32 {
	m := map[int32]int32{}
	for id := int32(3); id < 29; id++ {
		m[id] = id + 1
	}
	m['e'-'a'+3] = 2
	return m
}

func TestGenerate(t *testing.T) {
	tests := []struct {
		name      string
		prompt    string
		addBOS    bool
		nPredict  int
		limit     int
		wantTok   []int32
		wantText  string
		wantStop  StopReason
		wantCalls []string
	}{
		{"n predict", "a", true, 3, 100, []int32{4, 5, 6}, "bcd", StopLength, []string{"[1 3]", "[4]", "[5]"}},
		{"one token evaluates nothing after", "a", true, 1, 100, []int32{4}, "b", StopLength, []string{"[1 3]"}},
		{"no BOS", "ab", false, 2, 100, []int32{5, 6}, "cd", StopLength, []string{"[3 4]", "[5]"}},
		{"eog stops and is dropped", "c", true, 10, 100, []int32{6, 7}, "de", StopEOG, []string{"[1 5]", "[6]", "[7]"}},
		{"eog first", "e", true, 10, 100, nil, "", StopEOG, []string{"[1 7]"}},
		{"context full", "h", true, 0, 4, []int32{11, 12, 13}, "ijk", StopContext, []string{"[1 10]", "[11]", "[12]"}},
		{"n predict before context", "h", true, 2, 4, []int32{11, 12}, "ij", StopLength, []string{"[1 10]", "[11]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &chain{next: succ()}
			g := generator{tok: letters{tt.addBOS}, s: c, limit: tt.limit, sampler: NewSampler(SamplerOptions{}, nil)}
			var streamed []int32
			var text strings.Builder
			res, err := g.run(context.Background(), tt.prompt, tt.nPredict, func(tk Token) error {
				streamed = append(streamed, tk.ID)
				text.Write(tk.Piece)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.Tokens, tt.wantTok) || res.Text != tt.wantText || res.Stop != tt.wantStop {
				t.Errorf("got %v %q stop %v, want %v %q stop %v", res.Tokens, res.Text, res.Stop, tt.wantTok, tt.wantText, tt.wantStop)
			}
			if !slices.Equal(streamed, res.Tokens) || text.String() != res.Text {
				t.Errorf("streamed %v %q, result %v %q", streamed, text.String(), res.Tokens, res.Text)
			}
			if !slices.Equal(c.calls, tt.wantCalls) {
				t.Errorf("Eval calls %v, want %v", c.calls, tt.wantCalls)
			}
			if want := tt.prompt; len(res.PromptTokens) != len(want)+btoi(tt.addBOS) {
				t.Errorf("prompt tokens %v for %q", res.PromptTokens, want)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestGenerateStops(t *testing.T) {
	stop := errors.New("enough")
	tests := []struct {
		name    string
		prompt  string
		limit   int
		failAt  int
		onToken func(ctx context.CancelFunc, n int) error
		wantErr string
		wantN   int
	}{
		{"empty prompt", "", 100, 0, nil, "no tokens", 0},
		{"prompt fills context", "abc", 3, 0, nil, "prompt of 3 tokens leaves no room in a context of 3", 0},
		{"callback error", "a", 100, 0, func(_ context.CancelFunc, n int) error {
			if n == 2 {
				return stop
			}
			return nil
		}, "enough", 2},
		{"cancelled", "a", 100, 0, func(cancel context.CancelFunc, n int) error {
			if n == 3 {
				cancel()
			}
			return nil
		}, "context canceled", 3},
		{"prompt eval fails", "a", 100, 1, nil, "generate: prompt: out of memory", 0},
		{"token eval fails", "a", 100, 3, nil, "generate: token 2: out of memory", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			g := generator{tok: letters{false}, s: &chain{next: map[int32]int32{}, failAt: tt.failAt}, limit: tt.limit,
				sampler: NewSampler(SamplerOptions{}, nil)}
			n := 0
			res, err := g.run(ctx, tt.prompt, 10, func(Token) error {
				n++
				if tt.onToken != nil {
					return tt.onToken(cancel, n)
				}
				return nil
			})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
			if len(res.Tokens) != tt.wantN {
				t.Errorf("%d tokens before stopping, want %d", len(res.Tokens), tt.wantN)
			}
		})
	}
}

func TestStopReasonString(t *testing.T) {
	for r, want := range map[StopReason]string{StopLength: "length", StopEOG: "eog", StopContext: "context", 7: "StopReason(7)"} {
		if got := r.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(r), got, want)
		}
	}
}

// TestGenerateGreedyReference checks greedy decoding against llama.cpp's: both prompts,
// 32 tokens, n_ctx 256, on stories260K-F32 with the default F16 KV cache.
func TestGenerateGreedyReference(t *testing.T) {
	ref := refModel(t, testdata.LoadReference(t), "stories260K-F32.gguf")
	m, err := Load(testdata.Path(t, ref.File), Options{ContextSize: 256, Threads: 1, KVType: KVCacheF16})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, g := range ref.Greedy {
		t.Run(g.Prompt, func(t *testing.T) {
			res, err := Generate(context.Background(), m, g.Prompt, GenerateOptions{NPredict: g.NPredict}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.PromptTokens, g.PromptTokens) {
				t.Errorf("prompt tokens %v, llama.cpp %v", res.PromptTokens, g.PromptTokens)
			}
			if !slices.Equal(res.Tokens, g.GeneratedTokens) || res.Text != g.GeneratedText {
				t.Errorf("generated %v %q\nllama.cpp %v %q", res.Tokens, res.Text, g.GeneratedTokens, g.GeneratedText)
			}
			if res.Stop != StopLength {
				t.Errorf("stopped by %v", res.Stop)
			}
		})
	}
}

// tinyVocabFile writes the tiny test model with an 11-token SPM vocabulary, a model
// Generate can run without the shared test data.
func tinyVocabFile(t *testing.T) string {
	t.Helper()
	w := newTiny(8).writer(t, tensor.F32)
	w.Set("tokenizer.ggml.model", gguf.Str("llama"))
	w.Set("tokenizer.ggml.tokens", gguf.Strings([]string{"<unk>", "<s>", "</s>", "▁a", "a", "b", "c", "d", "e", "f", "g"}))
	w.Set("tokenizer.ggml.scores", gguf.Float32Array(make([]float32, 11)))
	w.Set("tokenizer.ggml.token_type", gguf.Int32Array([]int32{2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}))
	path := filepath.Join(t.TempDir(), "tiny-vocab.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestGenerateRejectsBadSampler checks that Generate reports sampler options out of
// range as an error (min-p 2 used to index out of range) and samples with good ones.
func TestGenerateRejectsBadSampler(t *testing.T) {
	m, err := Load(tinyVocabFile(t), Options{Threads: 1, ContextSize: 32})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	nan := float32(math.NaN())
	for _, tt := range []struct {
		opts SamplerOptions
		want string
	}{
		{SamplerOptions{Temp: 1, MinP: 2}, "min-p 2"},
		{SamplerOptions{Temp: 1, MinP: nan}, "min-p NaN"},
		{SamplerOptions{Temp: nan}, "temperature NaN"},
		{SamplerOptions{Temp: 1, TopP: -1}, "top-p -1"},
		{SamplerOptions{Temp: 1, TopK: -5}, "top-k -5"},
	} {
		_, err := Generate(context.Background(), m, "abc", GenerateOptions{NPredict: 4, Sampler: tt.opts}, nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v, want one line containing %q", tt.opts, err, tt.want)
		}
	}
	opts := DefaultSamplerOptions()
	opts.Seed = 1
	res, err := Generate(context.Background(), m, "abc", GenerateOptions{NPredict: 4, Sampler: opts}, nil)
	if err != nil || len(res.Tokens)+len(res.PromptTokens) == 0 {
		t.Errorf("default sampler: %+v, %v", res, err)
	}
}
