package tokenizer_test

import (
	"encoding/hex"
	"slices"
	"testing"

	"github.com/infergo/infer/internal/testdata"
	"github.com/infergo/infer/model/gguf"
	"github.com/infergo/infer/model/tokenizer"
)

// load opens a GGUF file from the shared test data and builds its tokenizer.
func load(t testing.TB, name string) *tokenizer.Tokenizer {
	t.Helper()
	f, err := gguf.Open(testdata.Path(t, name))
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	defer f.Close()
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return tok
}

// TestReferenceTokenize checks every model in reference.json: ids with and without
// BOS, and the pieces of the ids without BOS.
func TestReferenceTokenize(t *testing.T) {
	ref := testdata.LoadReference(t)
	cache := map[string]*tokenizer.Tokenizer{}
	for _, m := range ref.Models {
		t.Run(m.File, func(t *testing.T) {
			tok := cache[m.File]
			if tok == nil {
				tok = load(t, m.File)
				cache[m.File] = tok
			}
			if tok.NVocab() != m.NVocab || tok.AddBOS() != m.AddBOSDefault {
				t.Errorf("NVocab, AddBOS = %d, %v; want %d, %v", tok.NVocab(), tok.AddBOS(), m.NVocab, m.AddBOSDefault)
			}
			if len(m.Tokenize) == 0 {
				t.Fatal("no tokenize vectors")
			}
			for _, c := range m.Tokenize {
				checkCase(t, tok, c)
			}
		})
	}
}

// checkCase compares one reference string.
func checkCase(t *testing.T, tok *tokenizer.Tokenizer, c testdata.Tokenize) {
	t.Helper()
	if got := tok.Encode(c.Text, true); !slices.Equal(got, c.WithBOS) {
		t.Errorf("Encode(%q, true) = %v; want %v", c.Text, got, c.WithBOS)
	}
	got := tok.Encode(c.Text, false)
	if !slices.Equal(got, c.WithoutBOS) {
		t.Errorf("Encode(%q, false) = %v; want %v", c.Text, got, c.WithoutBOS)
	}
	if len(c.PiecesHexNoBOS) != len(c.WithoutBOS) {
		t.Fatalf("%q: %d pieces for %d ids", c.Text, len(c.PiecesHexNoBOS), len(c.WithoutBOS))
	}
	for i, id := range c.WithoutBOS {
		if p := hex.EncodeToString(tok.Piece(id)); p != c.PiecesHexNoBOS[i] {
			t.Errorf("Piece(%d) = %s; want %s", id, p, c.PiecesHexNoBOS[i])
		}
	}
}
