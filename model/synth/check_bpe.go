package synth

import (
	"fmt"
	"strings"
)

// checkMerges requires every merge to be "a b" with a, b and ab all tokens.
func checkMerges(tokens, merges []string) error {
	if len(merges) == 0 {
		return fmt.Errorf("tokenizer.ggml.merges: empty")
	}
	ids := make(map[string]bool, len(tokens))
	for _, t := range tokens {
		ids[t] = true
	}
	for i, m := range merges {
		sp := strings.IndexByte(m[min(1, len(m)):], ' ') + 1
		if sp <= 0 {
			return fmt.Errorf("merge %d %q: no space after the first character", i, m)
		}
		a, b := m[:sp], m[sp+1:]
		if !ids[a] || !ids[b] || !ids[a+b] {
			return fmt.Errorf("merge %d %q: %q, %q or their concatenation is not a token", i, m, a, b)
		}
	}
	return nil
}

// checkByteLevel requires every normal token to be spelled with GPT-2's byte-level
// characters (so that it decodes to bytes) and all 256 of them to be tokens.
func checkByteLevel(tokens []string, types []int32) error {
	alphabet := make(map[rune]bool, 256)
	for _, r := range ByteToUnicode() {
		alphabet[r] = true
	}
	have := make(map[rune]bool, 256)
	for i, t := range tokens {
		if len(types) > i && types[i] != TokenNormal {
			continue
		}
		for _, r := range t {
			if !alphabet[r] {
				return fmt.Errorf("token %d %q: character %U is not in the byte-level alphabet", i, t, r)
			}
		}
		if rs := []rune(t); len(rs) == 1 {
			have[rs[0]] = true
		}
	}
	if len(have) != 256 {
		return fmt.Errorf("%d of the 256 byte-level characters are tokens", len(have))
	}
	return nil
}
