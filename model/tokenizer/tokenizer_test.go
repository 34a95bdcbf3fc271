package tokenizer_test

import (
	"slices"
	"testing"

	"github.com/infergo/infer/model/tokenizer"
)

func TestSPMEncode(t *testing.T) {
	abTie := []scored{{"▁", -1}, {"a", -2}, {"b", -2}, {"ab", -1.5}, {"ba", -1.5}, {"▁a", -1}, {"▁ab", -0.5}}
	baWins := []scored{{"a", -2}, {"b", -2}, {"ab", -1.5}, {"ba", -1}}
	withUser := append(slices.Clone(abTie), scored{"<u>", 0})
	u := spmID(len(abTie)) // the user-defined token
	tests := []struct {
		name   string
		vocab  []scored
		prefix bool
		text   string
		want   []int32
	}{
		{"equal scores: leftmost pair first", abTie, false, "aba", []int32{spmID(3), spmID(1)}},
		{"higher score first", baWins, false, "aba", []int32{spmID(0), spmID(3)}},
		{"space prefix and merge chain", abTie, true, "ab", []int32{spmID(6)}},
		{"spaces escaped", abTie, false, "a b", []int32{spmID(1), spmID(0), spmID(2)}},
		{"byte fallback", abTie, false, "cé", []int32{byteID('c'), byteID(0xc3), byteID(0xa9)}},
		{"control text is plain text", abTie, false, "<s>", []int32{byteID('<'), byteID('s'), byteID('>')}},
		{"user-defined token cut out, prefix after it", withUser, true, "a<u>b", []int32{spmID(5), u, spmID(0), spmID(2)}},
		{"empty", abTie, true, "", []int32{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := spmVocab(t, tt.vocab...)
			if tt.vocab[len(tt.vocab)-1].text == "<u>" {
				v.Types[len(v.Types)-1] = tokenizer.TypeUserDefined
			}
			v.AddSpacePrefix = tt.prefix
			tok := mustNew(t, v)
			if got := tok.Encode(tt.text, false); !slices.Equal(got, tt.want) {
				t.Errorf("Encode(%q) = %v; want %v", tt.text, got, tt.want)
			}
		})
	}
}

func TestSpecialFlags(t *testing.T) {
	v := spmVocab(t, scored{"▁a", -1})
	tok := mustNew(t, v)
	if got, want := tok.Encode("a", true), []int32{1, spmID(0)}; !slices.Equal(got, want) {
		t.Errorf("Encode(a, true) = %v; want %v", got, want)
	}
	if got := tok.Encode("", true); !slices.Equal(got, []int32{1}) {
		t.Errorf("Encode(\"\", true) = %v; want [1]", got)
	}
	v.AddBOS, v.AddEOS = false, true
	tok = mustNew(t, v)
	if got, want := tok.Encode("a", true), []int32{spmID(0), 2}; !slices.Equal(got, want) {
		t.Errorf("no BOS, EOS: Encode(a, true) = %v; want %v", got, want)
	}
	if tok.AddBOS() || !tok.AddEOS() || tok.BOS() != 1 || tok.EOS() != 2 {
		t.Errorf("AddBOS %v AddEOS %v BOS %d EOS %d", tok.AddBOS(), tok.AddEOS(), tok.BOS(), tok.EOS())
	}
}

func TestSPMPiece(t *testing.T) {
	v := spmVocab(t, scored{"▁a▁b", -1}, scored{"<u>", 0})
	v.Types[len(v.Types)-1] = tokenizer.TypeUserDefined
	tok := mustNew(t, v)
	tests := []struct {
		id   int32
		want string
	}{
		{spmID(0), " a b"},
		{spmID(1), "<u>"},
		{byteID('A'), "A"},
		{byteID(0xff), "\xff"},
		{0, ""}, // unknown
		{1, ""}, // control
		{2, ""},
	}
	for _, tt := range tests {
		if got := string(tok.Piece(tt.id)); got != tt.want {
			t.Errorf("Piece(%d) = %q; want %q", tt.id, got, tt.want)
		}
	}
	for _, id := range []int32{-1, int32(tok.NVocab())} {
		if p := tok.Piece(id); p != nil {
			t.Errorf("Piece(%d) = %q; want nil", id, p)
		}
	}
}

func TestBPEEncode(t *testing.T) {
	merges := []string{"h e", "l l", "ll o", "he llo", "Ġ w", "o r"}
	const hello, gw, or = 256 + 3, 256 + 4, 256 + 5
	tests := []struct {
		name, pre string
		merges    []string
		text      string
		want      []int32
	}{
		{"merge chain", "gpt-2", merges, "hello", []int32{hello}},
		{"word split keeps the space", "gpt-2", merges, " world", []int32{gw, or, 'l', 'd'}},
		{"equal ranks: leftmost pair first", "gpt-2", merges, "lll", []int32{256 + 1, 'l'}},
		{"ignore merges: whole word token (llama3)", "llama-bpe", []string{"hel lo"}, "hello", []int32{256}},
		{"no ignore merges (gpt-2)", "gpt-2", []string{"hel lo"}, "hello", []int32{'h', 'e', 'l', 'l', 'o'}},
		{"control text is plain text", "gpt-2", merges, "<|endoftext|>", []int32{'<', '|', 'e', 'n', 'd', 'o', 'f', 't', 'e', 'x', 't', '|', '>'}},
		{"newline byte", "default", merges, "\n", []int32{'\n'}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok := mustNew(t, bpeVocab(t, tt.pre, tt.merges...))
			if got := tok.Encode(tt.text, false); !slices.Equal(got, tt.want) {
				t.Errorf("Encode(%q) = %v; want %v", tt.text, got, tt.want)
			}
		})
	}
}

func TestBPEPieceAndBOS(t *testing.T) {
	gpt2 := mustNew(t, bpeVocab(t, "gpt-2", "Ġ w"))
	eot := int32(gpt2.NVocab() - 1)
	for id, want := range map[int32]string{256: " w", '\n': "\n", 0xad: "\xad", eot: ""} {
		if got := string(gpt2.Piece(id)); got != want {
			t.Errorf("Piece(%d) = %q; want %q", id, got, want)
		}
	}
	if gpt2.AddBOS() || !gpt2.IsEOG(eot) || gpt2.IsEOG(0) {
		t.Errorf("gpt-2: AddBOS %v IsEOG(eot) %v IsEOG(0) %v", gpt2.AddBOS(), gpt2.IsEOG(eot), gpt2.IsEOG(0))
	}
	llama3 := mustNew(t, bpeVocab(t, "llama-bpe"))
	if got, want := llama3.Encode("a", true), []int32{llama3.BOS(), 'a'}; !slices.Equal(got, want) || llama3.BOS() != 256 {
		t.Errorf("llama-bpe Encode(a, true) = %v; want %v (BOS 256)", got, want)
	}
}

func TestEOGByText(t *testing.T) {
	v := spmVocab(t, scored{"<|eot_id|>", 0}, scored{"<|im_end|>", 0}, scored{"a", -1})
	tok := mustNew(t, v)
	for id, want := range map[int32]bool{2: true, spmID(0): true, spmID(1): true, spmID(2): false, 1: false} {
		if got := tok.IsEOG(id); got != want {
			t.Errorf("IsEOG(%d) = %v; want %v", id, got, want)
		}
	}
	if p := tok.Piece(spmID(0)); len(p) != 0 {
		t.Errorf("Piece(<|eot_id|>) = %q: an end-of-generation token is a control token", p)
	}
}

func TestNewErrors(t *testing.T) {
	good := spmVocab(t, scored{"a", -1})
	tests := []struct {
		name   string
		mutate func(v *tokenizer.Vocab)
	}{
		{"unknown model", func(v *tokenizer.Vocab) { v.Model = "t5" }},
		{"empty", func(v *tokenizer.Vocab) { v.Tokens, v.Scores, v.Types = nil, nil, nil }},
		{"duplicate", func(v *tokenizer.Vocab) { v.Tokens[len(v.Tokens)-1] = "<s>" }},
		{"short scores", func(v *tokenizer.Vocab) { v.Scores = v.Scores[:3] }},
		{"short types", func(v *tokenizer.Vocab) { v.Types = v.Types[:3] }},
		{"BOS required", func(v *tokenizer.Vocab) { v.BOS = tokenizer.NoToken }},
		{"unknown pre", func(v *tokenizer.Vocab) { v.Model, v.Pre = "gpt2", "no-such" }},
	}
	for _, tt := range tests {
		v := good
		v.Tokens = slices.Clone(good.Tokens)
		tt.mutate(&v)
		if _, err := tokenizer.New(v); err == nil {
			t.Errorf("%s: New succeeded", tt.name)
		}
	}
	if _, err := tokenizer.New(good); err != nil {
		t.Errorf("good vocabulary: %v", err)
	}
}

// TestUserDefinedStrip checks llama.cpp's phi-3 rule: with general.name "Phi-3",
// user-defined tokens swallow the whitespace after them.
func TestUserDefinedStrip(t *testing.T) {
	tests := []struct {
		name string
		want []int32
	}{
		{"llama", []int32{spmID(1), spmID(2), spmID(0), spmID(0), spmID(0), byteID('b')}},
		{"Phi-3-mini", []int32{spmID(1), spmID(2), spmID(0), byteID('b')}},
	}
	for _, tt := range tests {
		v := spmVocab(t, scored{"▁", -1}, scored{"▁a", -1}, scored{"<u>", 0})
		v.Types[len(v.Types)-1] = tokenizer.TypeUserDefined
		v.Name = tt.name
		tok := mustNew(t, v)
		if got := tok.Encode("a<u>  b", false); !slices.Equal(got, tt.want) {
			t.Errorf("name %q: Encode = %v; want %v", tt.name, got, tt.want)
		}
	}
}

// TestSPMWithoutByteTokens checks the byte fallback of a vocabulary without <0xXX>
// tokens: a token that is the byte itself, else UNK (where llama.cpp would throw).
func TestSPMWithoutByteTokens(t *testing.T) {
	v, err := tokenizer.DefaultVocab("llama", "")
	if err != nil {
		t.Fatal(err)
	}
	v.Tokens = []string{"<unk>", "<s>", "</s>", "a", "b"}
	v.AddSpacePrefix = false
	tok := mustNew(t, v)
	if got, want := tok.Encode("abc", false), []int32{3, 4, 0}; !slices.Equal(got, want) {
		t.Errorf("Encode(abc) = %v; want %v", got, want)
	}
	if tok.PAD() != tokenizer.NoToken || tok.NVocab() != 5 || tok.Token(4) != "b" || tok.Token(5) != "" {
		t.Errorf("PAD %d NVocab %d Token(4) %q Token(5) %q", tok.PAD(), tok.NVocab(), tok.Token(4), tok.Token(5))
	}
}
