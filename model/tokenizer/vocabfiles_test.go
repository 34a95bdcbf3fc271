package tokenizer_test

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/infergo/infer/internal/testdata"
)

// vocabCase is one test string of llama.cpp's models/ggml-vocab-*.gguf.inp/.out.
type vocabCase struct {
	text string
	want []int32
}

// readVocabCases parses an .inp/.out pair: strings end with "\n__ggml_vocab_test__\n",
// and .out has one line of space-separated ids per string.
func readVocabCases(t *testing.T, name string) []vocabCase {
	t.Helper()
	inp, err := os.ReadFile(testdata.Path(t, name+".inp"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(testdata.Path(t, name+".out"))
	if err != nil {
		t.Fatal(err)
	}
	texts := strings.Split(string(inp), "\n__ggml_vocab_test__\n")
	if texts[len(texts)-1] != "" {
		t.Fatalf("%s.inp: does not end with a separator", name)
	}
	texts = texts[:len(texts)-1]
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(texts) {
		t.Fatalf("%s: %d strings, %d result lines", name, len(texts), len(lines))
	}
	cases := make([]vocabCase, len(texts))
	for i, line := range lines {
		cases[i].text = texts[i]
		for _, f := range strings.Fields(line) {
			id, err := strconv.ParseInt(f, 10, 32)
			if err != nil {
				t.Fatalf("%s.out line %d: %v", name, i+1, err)
			}
			cases[i].want = append(cases[i].want, int32(id))
		}
	}
	return cases
}

// TestVocabFiles runs llama.cpp's tokenizer test vectors (add_special=false).
func TestVocabFiles(t *testing.T) {
	for _, name := range []string{"llama-spm", "phi-3", "gpt-2", "qwen2"} {
		t.Run(name, func(t *testing.T) {
			file := "vocab/ggml-vocab-" + name + ".gguf"
			cases := readVocabCases(t, file)
			tok := load(t, file)
			pass := 0
			for _, c := range cases {
				got := tok.Encode(c.text, false)
				if !slices.Equal(got, c.want) {
					t.Errorf("Encode(%q) = %v; want %v", c.text, got, c.want)
					continue
				}
				pass++
				if d, want := tok.Decode(got), roundTrip(c.text, name == "llama-spm" || name == "phi-3"); utf8.ValidString(c.text) && d != want {
					t.Errorf("Decode(Encode(%q)) = %q; want %q", c.text, d, want)
				}
			}
			t.Logf("%s: %d/%d vectors pass", name, pass, len(cases))
		})
	}
}

// roundTrip is what Decode(Encode(text, false)) gives back for valid UTF-8: the text
// itself, except that SPM with a space prefix adds a leading space and reads U+2581
// as a space.
func roundTrip(text string, spmPrefix bool) string {
	if !spmPrefix || text == "" {
		return text
	}
	return strings.ReplaceAll(" "+text, "\u2581", " ")
}
