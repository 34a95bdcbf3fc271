package tokenizer

import (
	"sort"
	"strings"
)

// llama.cpp recognises some special tokens by their text (llama_vocab::impl::load):
// those that end generation, and fill-in-the-middle tokens, of which pad, repo and
// file-separator also end it. Each is marked as a control token.
var (
	eogTexts = []string{
		"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>",
		"<|calls|>", "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>",
		"_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>", "<end_of_utterance>", "<eos>",
		"<turn|>", "<|tool_response>", "<｜end▁of▁sentence｜>", "[e~[",
	}
	fimTexts = [][]string{
		{"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>", "<|code_prefix|>", "<|prefix|>"},
		{"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>", "<|code_suffix|>", "<|suffix|>"},
		{"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>", "<|code_middle|>", "<|middle|>"},
	}
	fimEOGTexts = [][]string{
		{"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"},
		{"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"},
		{"<|file_sep|>"},
	}
	// alwaysRendered are gpt-oss tokens llama.cpp forces to user-defined.
	alwaysRendered = []string{"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"}
)

// markSpecials applies llama.cpp's text-based token rules to t.attrs and fills the
// end-of-generation set t.eog. ids maps token text to id; name is general.name.
func (t *Tokenizer) markSpecials(ids map[string]int32, name string) {
	eog := map[int32]bool{}
	for _, group := range fimTexts {
		if id, ok := firstOf(ids, group); ok {
			t.attrs[id] |= attrControl
		}
	}
	for _, group := range fimEOGTexts {
		if id, ok := firstOf(ids, group); ok {
			t.attrs[id] |= attrControl
			eog[id] = true
		}
	}
	for _, s := range eogTexts {
		if id, ok := ids[s]; ok {
			t.attrs[id] |= attrControl
			eog[id] = true
		}
	}
	for _, s := range alwaysRendered {
		if id, ok := ids[s]; ok {
			t.attrs[id] = attrUserDefined
		}
	}
	for _, id := range []int32{t.eos, t.eot, t.eom} {
		if id != NoToken {
			eog[id] = true
		}
	}
	t.dropHarmonyEnd(ids, eog)
	t.dropGemmaEOS(ids, eog)
	t.eog = eog
	t.markPhi3(ids, name)
}

// dropHarmonyEnd removes "<|end|>" from the end-of-generation set when the
// vocabulary also has "<|return|>" and "<|call|>" (or "<|calls|>" and "<|flush|>").
func (t *Tokenizer) dropHarmonyEnd(ids map[string]int32, eog map[int32]bool) {
	end, ok := ids["<|end|>"]
	has := func(s string) bool { id, ok := ids[s]; return ok && eog[id] }
	if !ok || !eog[end] {
		return
	}
	call := has("<|call|>") || has("<|calls|>")
	if call && (has("<|return|>") || has("<|flush|>")) {
		delete(eog, end)
		t.attrs[end] = attrUserDefined
	}
}

// dropGemmaEOS removes "</s>" from the end-of-generation set when "<|tool_response>"
// is in it (llama.cpp's gemma4 / paddleocr rule).
func (t *Tokenizer) dropGemmaEOS(ids map[string]int32, eog map[int32]bool) {
	tr, ok1 := ids["<|tool_response>"]
	s, ok2 := ids["</s>"]
	if ok1 && ok2 && eog[tr] && eog[s] {
		delete(eog, s)
		t.attrs[s] = attrNormal
	}
}

// markPhi3 applies llama.cpp's phi-3 rule: special tokens swallow the whitespace
// that follows them, except <unk>, <s> and <|endoftext|>.
func (t *Tokenizer) markPhi3(ids map[string]int32, name string) {
	name = strings.ToLower(name)
	if !strings.Contains(name, "phi-3") && !strings.Contains(name, "phi3") {
		return
	}
	for id, a := range t.attrs {
		if a&(attrControl|attrUserDefined|attrUnknown) != 0 {
			t.attrs[id] |= attrRStrip
		}
	}
	if id, ok := ids["</s>"]; ok {
		t.attrs[id] |= attrRStrip
	}
	for _, s := range []string{"<unk>", "<s>", "<|endoftext|>"} {
		if id, ok := ids[s]; ok {
			t.attrs[id] &^= attrRStrip
		}
	}
}

// firstOf returns the lowest id among the texts present in ids. (llama.cpp takes
// the first in hash-map order; vocabularies have at most one of each group.)
func firstOf(ids map[string]int32, texts []string) (int32, bool) {
	best := NoToken
	for _, s := range texts {
		if id, ok := ids[s]; ok && (best == NoToken || id < best) {
			best = id
		}
	}
	return best, best != NoToken
}

// splitCandidates lists the tokens that tokenizer_st_partition cuts out of raw text
// when special tokens are not parsed: user-defined ones, longest text first.
func (t *Tokenizer) splitCandidates() []int32 {
	var c []int32
	for id, a := range t.attrs {
		if a&attrUserDefined != 0 && a&(attrControl|attrUnknown) == 0 {
			c = append(c, int32(id))
		}
	}
	sort.SliceStable(c, func(i, j int) bool { return len(t.tokens[c[i]]) > len(t.tokens[c[j]]) })
	return c
}
