package tokenizer_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/infergo/infer/internal/testdata"
)

// idsDigest is the sha256 of ids written in decimal, joined by "\n", with a
// trailing newline when trailingNL is set.
func idsDigest(ids []int32, trailingNL bool) string {
	b := make([]byte, 0, len(ids)*6)
	for i, id := range ids {
		if i > 0 {
			b = append(b, '\n')
		}
		b = strconv.AppendInt(b, int64(id), 10)
	}
	if trailingNL {
		b = append(b, '\n')
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestCorpus tokenizes tinyshakespeare.txt with BOS and compares count, the first
// 2560 ids and the digest of all ids with reference.json's corpus tokenizations.
// (The reference digest is of the ids each followed by "\n": the joined list plus a
// trailing newline.)
func TestCorpus(t *testing.T) {
	ref := testdata.LoadReference(t)
	if len(ref.Corpus) == 0 {
		t.Fatal("reference.json: no corpus")
	}
	c := ref.Corpus[0]
	text, err := os.ReadFile(testdata.Path(t, c.File))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"tok512", "llama2_32k"} {
		want, ok := c.Tokenizations[key]
		if !ok {
			t.Fatalf("reference.json: no corpus tokenization %q", key)
		}
		t.Run(key, func(t *testing.T) {
			tok := load(t, want.TokenizerFromModel)
			start := time.Now()
			ids := tok.Encode(string(text), true)
			t.Logf("%d bytes -> %d tokens in %v", len(text), len(ids), time.Since(start))
			if len(ids) != want.NTokens {
				t.Errorf("%d tokens; want %d", len(ids), want.NTokens)
			}
			if n := len(want.FirstIDs); len(ids) < n || !slices.Equal(ids[:n], want.FirstIDs) {
				t.Errorf("first %d ids differ", n)
			}
			if got := idsDigest(ids, true); got != want.SHA256 {
				t.Errorf("sha256 = %s (without trailing newline %s); want %s", got, idsDigest(ids, false), want.SHA256)
			}
		})
	}
}
