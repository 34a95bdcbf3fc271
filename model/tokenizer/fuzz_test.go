package tokenizer_test

import (
	"testing"
	"unicode/utf8"

	"github.com/infergo/infer/model/tokenizer"
)

// FuzzEncode checks that Encode never panics nor returns an id outside the
// vocabulary, and that Decode(Encode(s)) gives s back for valid UTF-8 (with the SPM
// space prefix accounted for), for an SPM and two byte-level BPE vocabularies.
// Seeds are in testdata/fuzz/FuzzEncode.
func FuzzEncode(f *testing.F) {
	spm := spmVocab(f, scored{"▁", -1}, scored{"▁t", -2}, scored{"h", -3}, scored{"e", -3},
		scored{"he", -2.5}, scored{"▁the", -1.5}, scored{"▁a", -2}, scored{"ab", -2})
	toks := []struct {
		tok       *tokenizer.Tokenizer
		spmPrefix bool
	}{
		{mustNew(f, spm), true},
		{mustNew(f, bpeVocab(f, "gpt-2", "Ġ t", "h e", "Ġt he", "i n", "Ġ a", "1 2")), false},
		{mustNew(f, bpeVocab(f, "llama-bpe", "Ġ t", "h e", "Ġt he", "' s", "1 2", "12 3")), false},
		{mustNew(f, bpeVocab(f, "default", "Ġ t", "h e", "Ġt he", "1 2")), false},
	}
	f.Fuzz(func(t *testing.T, s string) {
		for i, c := range toks {
			ids := c.tok.Encode(s, false)
			for _, id := range ids {
				if id < 0 || int(id) >= c.tok.NVocab() {
					t.Fatalf("tokenizer %d: Encode(%q) has id %d outside [0, %d)", i, s, id, c.tok.NVocab())
				}
			}
			if !utf8.ValidString(s) {
				continue
			}
			if got, want := c.tok.Decode(ids), roundTrip(s, c.spmPrefix); got != want {
				t.Errorf("tokenizer %d: Decode(Encode(%q)) = %q; want %q", i, s, got, want)
			}
		}
	})
}
