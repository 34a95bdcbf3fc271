package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/infergo/infer/model"
)

// progress writes a progress line to stderr at the end of every pass: in place on a
// terminal, one line per pass otherwise. After the first pass it also writes
// llama-perplexity's "seconds per pass - ETA" line.
type progress struct {
	w       io.Writer
	name    string
	c       model.Chunking
	tty     bool
	printed bool // an in-place line is showing
}

func newProgress(w io.Writer, name string, c model.Chunking) *progress {
	p := &progress{w: w, name: name, c: c}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

// chunk reports chunk k done, with its share of its pass's time.
func (p *progress) chunk(k int, share time.Duration) {
	if k != p.c.Chunks && k%p.c.Seq != 0 {
		return // not the end of a pass
	}
	pass := share * time.Duration(p.c.Seq)
	eta := share * time.Duration(p.c.Chunks-k)
	if k == min(p.c.Seq, p.c.Chunks) {
		fmt.Fprintf(p.w, "%s: %.2f seconds per pass - ETA %s\n", p.name, pass.Seconds(), etaText(share*time.Duration(p.c.Chunks)))
	}
	line := fmt.Sprintf("%s: chunk %d/%d, %.2f seconds per pass, ETA %s", p.name, k, p.c.Chunks, pass.Seconds(), etaText(eta))
	if p.tty {
		fmt.Fprintf(p.w, "\r%s\x1b[K", line)
		p.printed = true
		return
	}
	fmt.Fprintln(p.w, line)
}

// done ends an in-place progress line.
func (p *progress) done() {
	if p.printed {
		fmt.Fprintln(p.w)
		p.printed = false
	}
}

// etaText is llama-perplexity's ETA: hours when there are any, then minutes.
func etaText(d time.Duration) string {
	s := int(d.Seconds())
	if s >= 3600 {
		return fmt.Sprintf("%d hours %.2f minutes", s/3600, float64(s%3600)/60)
	}
	return fmt.Sprintf("%.2f minutes", float64(s)/60)
}

// kldTableHeader heads llama-perplexity's --kl-divergence table.
const kldTableHeader = "chunk             PPL               ln(PPL(Q)/PPL(base))          KL Divergence              Δp RMS            Same top p"

// printKLDChunk writes one row of the --kl-divergence table.
func printKLDChunk(w io.Writer, kc model.KLDChunk) {
	s := kc.KLDStats
	fmt.Fprintf(w, "%4d    %9.4f ± %9.4f    %10.5f ± %10.5f    %10.5f ± %10.5f    %6.3f ± %6.3f %%    %6.3f ± %6.3f %%\n",
		kc.Chunk, s.PPL, s.PPLUnc, s.LnRatio, s.LnRatioUnc, s.KLD, s.KLDUnc,
		100*s.RMSDeltaP, 100*s.RMSDeltaPUnc, 100*s.SameTop, 100*s.SameTopUnc)
}

// printKLDStats writes llama-perplexity's three statistics blocks.
func printKLDStats(w io.Writer, s model.KLDStats) {
	fmt.Fprintln(w, "====== Perplexity statistics ======")
	fmt.Fprintf(w, "Mean PPL(Q)                   : %10.6f ± %10.6f\n", s.PPL, s.PPLUnc)
	fmt.Fprintf(w, "Mean PPL(base)                : %10.6f ± %10.6f\n", s.BasePPL, s.BasePPLUnc)
	fmt.Fprintf(w, "Cor(ln(PPL(Q)), ln(PPL(base))): %6.2f%%\n", 100*s.Cor)
	fmt.Fprintf(w, "Mean ln(PPL(Q)/PPL(base))     : %10.6f ± %10.6f\n", s.LnRatio, s.LnRatioUnc)
	fmt.Fprintf(w, "Mean PPL(Q)/PPL(base)         : %10.6f ± %10.6f\n", s.Ratio, s.RatioUnc)
	fmt.Fprintf(w, "Mean PPL(Q)-PPL(base)         : %10.6f ± %10.6f\n", s.Diff, s.DiffUnc)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "====== KL divergence statistics ======")
	fmt.Fprintf(w, "Mean    KLD: %10.6f ± %10.6f\n", s.KLD, s.KLDUnc)
	for _, p := range s.KLDPercentiles {
		fmt.Fprintf(w, "%s KLD: %10.6f\n", percentileLabel(p.P), p.Value)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "====== Token probability statistics ======")
	fmt.Fprintf(w, "Mean    Δp: %6.3f ± %5.3f %%\n", 100*s.DeltaP, 100*s.DeltaPUnc)
	for _, p := range s.DeltaPPercentiles {
		fmt.Fprintf(w, "%s Δp: %6.3f%%\n", percentileLabel(p.P), 100*p.Value)
	}
	fmt.Fprintf(w, "RMS Δp    : %6.3f ± %5.3f %%\n", 100*s.RMSDeltaP, 100*s.RMSDeltaPUnc)
	fmt.Fprintf(w, "Same top p: %6.3f ± %5.3f %%\n", 100*s.SameTop, 100*s.SameTopUnc)
}

// percentileLabel is llama-perplexity's 7-character name of a percentile line.
func percentileLabel(p float64) string {
	switch p {
	case 1:
		return "Maximum"
	case 0.5:
		return "Median "
	case 0:
		return "Minimum"
	}
	return fmt.Sprintf("%4.1f%%  ", 100*p)
}

// number is a float64 that marshals as null when it is not finite (JSON has no NaN).
type number float64

func (n number) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(n)) || math.IsInf(float64(n), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(n))
}

// chunkingJSON is the chunking of a run.
type chunkingJSON struct {
	Ctx    int `json:"n_ctx"`
	Batch  int `json:"n_batch"`
	Seq    int `json:"n_seq"`
	Chunks int `json:"n_chunk"`
}

func chunkingOf(c model.Chunking) chunkingJSON { return chunkingJSON{c.Ctx, c.Batch, c.Seq, c.Chunks} }

// pplOut is the JSON of a perplexity run.
type pplOut struct {
	chunkingJSON
	Tokens      int            `json:"text_tokens"`
	Scored      int            `json:"scored"`
	PPL         number         `json:"ppl"`
	Uncertainty number         `json:"ppl_uncertainty"`
	MeanNLL     number         `json:"mean_nll"`
	Base        string         `json:"kl_divergence_base,omitempty"`
	Chunks      []pplChunkJSON `json:"chunks"`
}

// pplChunkJSON is the running perplexity after one chunk.
type pplChunkJSON struct {
	Chunk   int    `json:"chunk"`
	Start   int    `json:"start"`
	PPL     number `json:"ppl"`
	MeanNLL number `json:"mean_nll"`
	StdErr  number `json:"mean_nll_stderr"`
}

func perplexityJSON(res model.PerplexityResult, base string) pplOut {
	out := pplOut{chunkingJSON: chunkingOf(res.Chunking), Tokens: res.TextTokens, Scored: res.Scored,
		PPL: number(res.PPL), Uncertainty: number(res.Uncertainty), MeanNLL: number(res.MeanNLL), Base: base}
	for _, c := range res.Chunks {
		out.Chunks = append(out.Chunks, pplChunkJSON{c.Chunk, c.Start, number(c.PPL), number(c.MeanNLL), number(c.StdErr)})
	}
	return out
}

// kldOut is the JSON of a KL-divergence run.
type kldOut struct {
	chunkingJSON
	Base   string         `json:"kl_divergence_base"`
	Chunks []kldChunkJSON `json:"chunks"`
	Stats  kldStatsJSON   `json:"stats"`
}

// kldChunkJSON is one row of the table.
type kldChunkJSON struct {
	Chunk int `json:"chunk"`
	kldRunningJSON
}

// kldRunningJSON are the values of a table row.
type kldRunningJSON struct {
	PPL          number `json:"ppl"`
	PPLUnc       number `json:"ppl_uncertainty"`
	LnRatio      number `json:"ln_ppl_ratio"`
	LnRatioUnc   number `json:"ln_ppl_ratio_uncertainty"`
	KLD          number `json:"kld"`
	KLDUnc       number `json:"kld_uncertainty"`
	RMSDeltaP    number `json:"rms_delta_p"`
	RMSDeltaPUnc number `json:"rms_delta_p_uncertainty"`
	SameTop      number `json:"same_top_p"`
	SameTopUnc   number `json:"same_top_p_uncertainty"`
}

// kldStatsJSON are the three statistics blocks.
type kldStatsJSON struct {
	Tokens int `json:"tokens"`
	kldRunningJSON
	BasePPL           number           `json:"base_ppl"`
	BasePPLUnc        number           `json:"base_ppl_uncertainty"`
	Cor               number           `json:"cor_ln_ppl"`
	Ratio             number           `json:"ppl_ratio"`
	RatioUnc          number           `json:"ppl_ratio_uncertainty"`
	Diff              number           `json:"ppl_diff"`
	DiffUnc           number           `json:"ppl_diff_uncertainty"`
	KLDPercentiles    []percentileJSON `json:"kld_percentiles"`
	DeltaP            number           `json:"delta_p"`
	DeltaPUnc         number           `json:"delta_p_uncertainty"`
	DeltaPPercentiles []percentileJSON `json:"delta_p_percentiles"`
}

// percentileJSON is one percentile: the value below which a fraction p lies.
type percentileJSON struct {
	P     float64 `json:"p"`
	Value number  `json:"value"`
}

func runningJSON(s model.KLDStats) kldRunningJSON {
	return kldRunningJSON{number(s.PPL), number(s.PPLUnc), number(s.LnRatio), number(s.LnRatioUnc), number(s.KLD), number(s.KLDUnc),
		number(s.RMSDeltaP), number(s.RMSDeltaPUnc), number(s.SameTop), number(s.SameTopUnc)}
}

func percentilesJSON(ps []model.Percentile) []percentileJSON {
	out := make([]percentileJSON, 0, len(ps))
	for _, p := range ps {
		out = append(out, percentileJSON{p.P, number(p.Value)})
	}
	return out
}

func kldJSON(res model.KLDResult, base string) kldOut {
	s := res.Stats
	out := kldOut{chunkingJSON: chunkingOf(res.Chunking), Base: base, Stats: kldStatsJSON{Tokens: s.Tokens, kldRunningJSON: runningJSON(s),
		BasePPL: number(s.BasePPL), BasePPLUnc: number(s.BasePPLUnc), Cor: number(s.Cor), Ratio: number(s.Ratio), RatioUnc: number(s.RatioUnc),
		Diff: number(s.Diff), DiffUnc: number(s.DiffUnc), KLDPercentiles: percentilesJSON(s.KLDPercentiles),
		DeltaP: number(s.DeltaP), DeltaPUnc: number(s.DeltaPUnc), DeltaPPercentiles: percentilesJSON(s.DeltaPPercentiles)}}
	for _, c := range res.Chunks {
		out.Chunks = append(out.Chunks, kldChunkJSON{c.Chunk, runningJSON(c.KLDStats)})
	}
	return out
}

// writeJSON writes v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
