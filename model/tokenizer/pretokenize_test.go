package tokenizer

import (
	"slices"
	"testing"
)

// The expected words below come from the original regexes run by Python's regex
// module (which supports the lookahead); llama.cpp's hand-written splitters agree.
func TestPreTokenizerWords(t *testing.T) {
	tests := []struct {
		pre, text string
		want      []string
	}{
		{"gpt-2", "Hello world", []string{"Hello", " world"}},
		{"gpt-2", " Hello  world ", []string{" Hello", " ", " world", " "}},
		{"gpt-2", "I'm 12345 years' old!!\n\n", []string{"I", "'m", " 12345", " years", "'", " old", "!!", "\n\n"}},
		{"gpt-2", "   ", []string{"   "}},
		{"gpt-2", "\n \n", []string{"\n \n"}},
		{"gpt-2", "a  \tb", []string{"a", "  ", "\t", "b"}},
		{"gpt-2", "x'S y'Re we'll", []string{"x", "'", "S", " y", "'", "Re", " we", "'ll"}},
		{"gpt-2", "1234567", []string{"1234567"}},
		{"gpt-2", " ??  !!", []string{" ??", " ", " !!"}},
		{"gpt-2", "日本語 テスト", []string{"日本語", " テスト"}},
		{"gpt-2", "a\r\n\r\nb", []string{"a", "\r\n\r", "\n", "b"}},
		{"gpt-2", "\tcafé—naïve €5 ²3", []string{"\t", "café", "—", "naïve", " €", "5", " ²3"}},
		{"gpt-2", "$x+=y|z `q`", []string{"$", "x", "+=", "y", "|", "z", " `", "q", "`"}},
		{"gpt-2", "ab\u00a0\u00a0cd", []string{"ab", "\u00a0", "\u00a0", "cd"}},
		{"gpt-2", "🦙🦙 ok", []string{"🦙🦙", " ok"}},
		{"llama3", "Hello world", []string{"Hello", " world"}},
		{"llama3", " Hello  world ", []string{" Hello", " ", " world", " "}},
		{"llama3", "I'm 12345 years' old!!\n\n", []string{"I", "'m", " ", "123", "45", " years", "'", " old", "!!\n\n"}},
		{"llama3", "   ", []string{"   "}},
		{"llama3", "\n \n", []string{"\n \n"}},
		{"llama3", "a  \tb", []string{"a", "  ", "\tb"}},
		{"llama3", "x'S y'Re we'll", []string{"x", "'S", " y", "'Re", " we", "'ll"}},
		{"llama3", "1234567", []string{"123", "456", "7"}},
		{"llama3", " ??  !!", []string{" ??", " ", " !!"}},
		{"llama3", "日本語 テスト", []string{"日本語", " テスト"}},
		{"llama3", "a\r\n\r\nb", []string{"a", "\r\n\r\n", "b"}},
		{"llama3", "\tcafé—naïve €5 ²3", []string{"\tcafé", "—naïve", " €", "5", " ", "²3"}},
		{"llama3", "$x+=y|z `q`", []string{"$x", "+=", "y", "|z", " `", "q", "`"}},
		{"llama3", "ab\u00a0\u00a0cd", []string{"ab", "\u00a0", "\u00a0cd"}},
		{"llama3", "🦙🦙 ok", []string{"🦙🦙", " ok"}},
		{"default", "Hello world", []string{"Hello", " world"}},
		{"default", " Hello  world ", []string{" Hello", " ", " world", " "}},
		{"default", "I'm 12345 years' old!!\n\n", []string{"I", "'", "m", " ", "123", "45", " years", "'", " old", "!!", "\n\n"}},
		{"default", "   ", []string{"   "}},
		{"default", "\n \n", []string{"\n \n"}},
		{"default", "a  \tb", []string{"a", "  ", "\t", "b"}},
		{"default", "x'S y'Re we'll", []string{"x", "'", "S", " y", "'", "Re", " we", "'", "ll"}},
		{"default", "1234567", []string{"123", "456", "7"}},
		{"default", " ??  !!", []string{" ", "??", "  ", "!!"}},
		{"default", "日本語 テスト", []string{"日本語", " テスト"}},
		{"default", "a\r\n\r\nb", []string{"a", "\r\n\r", "\n", "b"}},
		{"default", "\tcafé—naïve €5 ²3", []string{"\t", "café", "—", "naïve", " €", "5", " ", "²3"}},
		{"default", "$x+=y|z `q`", []string{"$", "x", "+=", "y", "|", "z", " `", "q", "`"}},
		{"default", "ab\u00a0\u00a0cd", []string{"ab", "\u00a0", "\u00a0", "cd"}},
		{"default", "🦙🦙 ok", []string{"🦙🦙", " ok"}},
		{"gpt-2", "", nil},
		{"llama3", "", nil},
	}
	for _, tt := range tests {
		p, err := preTokenizerFor(tt.pre)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.words(tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("%s words(%q) = %q; want %q", tt.pre, tt.text, got, tt.want)
		}
	}
}

func TestPreTokenizerUnknown(t *testing.T) {
	if _, err := preTokenizerFor("no-such-pre"); err == nil {
		t.Error("preTokenizerFor(no-such-pre): no error")
	}
}

// TestPreTokenizeByteEncoding checks GPT-2's byte encoding of words: space is "Ġ",
// newline "Ċ", and invalid UTF-8 reaches the words as U+FFFD (llama.cpp's decoder).
func TestPreTokenizeByteEncoding(t *testing.T) {
	p, _ := preTokenizerFor("gpt-2")
	tests := []struct {
		text string
		want []string
	}{
		{"a b\n", []string{"a", "Ġb", "Ċ"}},
		{"\xff!", []string{"ï¿½!"}},       // U+FFFD is EF BF BD: bytes that encode as themselves
		{"\xc0\x80x", []string{"Ā", "x"}}, // overlong NUL decodes to U+0000
	}
	for _, tt := range tests {
		if got := p.preTokenize(tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("preTokenize(%q) = %q; want %q", tt.text, got, tt.want)
		}
	}
}

func TestByteRunes(t *testing.T) {
	seen := map[rune]bool{}
	for b, r := range byteRunes {
		if seen[r] {
			t.Fatalf("byte %#x: rune %U used twice", b, r)
		}
		seen[r] = true
		if runeBytes[r] != int16(b) {
			t.Errorf("runeBytes[%U] = %d; want %d", r, runeBytes[r], b)
		}
	}
	for b, want := range map[byte]rune{' ': 'Ġ', '\n': 'Ċ', 'a': 'a', 0: 'Ā', 0xad: 'Ń'} {
		if byteRunes[b] != want {
			t.Errorf("byteRunes[%#x] = %U; want %U", b, byteRunes[b], want)
		}
	}
}

func TestDecodeCpts(t *testing.T) {
	tests := []struct {
		in   string
		want []rune
	}{
		{"aé日🦙", []rune{'a', 'é', '日', '🦙'}},
		{"\x80a", []rune{0xfffd, 'a'}},
		{"\xe6\x97", []rune{0xfffd, 0xfffd}}, // truncated
		{"\xed\xa0\x80", []rune{0xd800}},     // surrogate passes, as in llama.cpp
		{"\xf8\x88\x80\x80\x80", []rune{0xfffd, 0xfffd, 0xfffd, 0xfffd, 0xfffd}},
	}
	for _, tt := range tests {
		if got := decodeCpts(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("decodeCpts(%q) = %U; want %U", tt.in, got, tt.want)
		}
		var enc []byte
		for _, r := range tt.want {
			enc = appendCpt(enc, r)
		}
		if tt.want[0] != 0xfffd && string(enc) != tt.in {
			t.Errorf("appendCpt(%U) = %q; want %q", tt.want, enc, tt.in)
		}
	}
}
