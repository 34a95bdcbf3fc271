package model

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// KLDStats are llama-perplexity's --kl-divergence statistics over the tokens scored so
// far. Every "Unc" is the standard error llama.cpp prints after "±": of the mean for
// means, propagated to exp for perplexities and ratios.
type KLDStats struct {
	Tokens int // tokens compared

	PPL, PPLUnc         float64 // Mean PPL(Q): the model's perplexity
	BasePPL, BasePPLUnc float64 // Mean PPL(base)
	Cor                 float64 // Cor(ln(PPL(Q)), ln(PPL(base))): correlation of the per-token log-likelihoods
	LnRatio, LnRatioUnc float64 // Mean ln(PPL(Q)/PPL(base))
	Ratio, RatioUnc     float64 // Mean PPL(Q)/PPL(base)
	Diff, DiffUnc       float64 // Mean PPL(Q)-PPL(base)

	KLD, KLDUnc float64 // Mean KLD
	// KLDPercentiles are Maximum, 99.9%, 99%, 95%, 90%, Median, 10%, 5%, 1%, 0.1% and
	// Minimum of the per-token KL divergences (only in KLDResult.Stats).
	KLDPercentiles []Percentile

	DeltaP, DeltaPUnc float64 // Mean Δp: the model's minus the base's probability of the right token
	// DeltaPPercentiles are Maximum, 99.9%, 99%, 95%, 90%, 75%, Median, 25%, 10%, 5%,
	// 1%, 0.1% and Minimum of Δp (only in KLDResult.Stats).
	DeltaPPercentiles       []Percentile
	RMSDeltaP, RMSDeltaPUnc float64 // RMS Δp
	SameTop, SameTopUnc     float64 // Same top p: fraction of tokens where both models' most likely token agree
}

// Percentile is the value below which a fraction P of the values lie, interpolated
// linearly between order statistics as llama-perplexity does (P = 0 is the minimum, 1
// the maximum, 0.5 the median).
type Percentile struct {
	P     float64
	Value float64
}

// The fractions of llama-perplexity's percentile lines.
var (
	kldFractions    = []float64{1, 0.999, 0.99, 0.95, 0.90, 0.5, 0.10, 0.05, 0.01, 0.001, 0}
	deltaPFractions = []float64{1, 0.999, 0.99, 0.95, 0.90, 0.75, 0.5, 0.25, 0.10, 0.05, 0.01, 0.001, 0}
)

// kldTokens are the per-token values of a KL-divergence run, in token order.
type kldTokens struct {
	nll, nllBase []float64 // negative log-likelihoods under the model and the base
	kld, pDiff   []float64 // KL divergence and Δp
	same         []bool    // both models' most likely tokens agree
}

// stats computes the statistics over the first n tokens, with the percentiles when
// percentiles is set.
func (t *kldTokens) stats(n int, percentiles bool) KLDStats {
	nll, nllBase, kld, pd := t.nll[:n], t.nllBase[:n], t.kld[:n], t.pDiff[:n]
	s := KLDStats{Tokens: n}
	lnQ, uncQ := meanUnc(nll)
	lnB, uncB := meanUnc(nllBase)
	s.PPL, s.BasePPL = math.Exp(lnQ), math.Exp(lnB)
	s.PPLUnc, s.BasePPLUnc = s.PPL*uncQ, s.BasePPL*uncB
	cov := 0.0 // llama.cpp's covariance of the two means
	if n >= 10 {
		cov = stat.Covariance(nll, nllBase, nil) / float64(n)
	}
	s.Cor = stat.Correlation(nll, nllBase, nil)
	s.LnRatio, s.LnRatioUnc = lnQ-lnB, math.Sqrt(uncQ*uncQ+uncB*uncB-2*cov)
	s.Ratio = math.Exp(s.LnRatio)
	s.RatioUnc = s.Ratio * s.LnRatioUnc
	s.Diff = s.PPL - s.BasePPL
	s.DiffUnc = math.Sqrt(s.PPLUnc*s.PPLUnc + s.BasePPLUnc*s.BasePPLUnc - 2*s.PPL*s.BasePPL*cov)
	s.KLD, s.KLDUnc = meanUnc(kld)
	s.DeltaP, s.DeltaPUnc = meanUnc(pd)
	sq := make([]float64, n)
	for i, v := range pd {
		sq[i] = v * v
	}
	mse, mseUnc := meanUnc(sq)
	s.RMSDeltaP = math.Sqrt(mse)
	s.RMSDeltaPUnc = 0.5 / s.RMSDeltaP * mseUnc
	same := 0
	for _, v := range t.same[:n] {
		if v {
			same++
		}
	}
	s.SameTop = float64(same) / float64(n)
	s.SameTopUnc = math.Sqrt(s.SameTop * (1 - s.SameTop) / float64(n-1))
	if percentiles {
		s.KLDPercentiles = percentilesOf(kld, kldFractions)
		s.DeltaPPercentiles = percentilesOf(pd, deltaPFractions)
	}
	return s
}

// meanUnc returns the mean of x and llama.cpp's uncertainty of it: the standard error
// of the mean, 0 for 10 values or fewer or no spread.
func meanUnc(x []float64) (mean, unc float64) {
	if len(x) == 0 {
		return 0, 0
	}
	mean, std := stat.MeanStdDev(x, nil)
	if len(x) > 10 && std > 0 {
		unc = stat.StdErr(std, float64(len(x)))
	}
	return mean, unc
}

// percentilesOf returns the percentiles of x at fractions, as llama-perplexity computes
// them: the value at rank f·(n-1) of the sorted values, interpolated linearly between
// its neighbours (Hyndman and Fan's type 7). gonum's LinInterp quantile is type 4
// (rank f·n, 1-based); asking it for ((n-1)·f+1)/n gives type 7.
func percentilesOf(x []float64, fractions []float64) []Percentile {
	sorted := slices.Clone(x)
	slices.Sort(sorted)
	n := float64(len(sorted))
	out := make([]Percentile, len(fractions))
	for i, f := range fractions {
		p := min(1, max(0, ((n-1)*f+1)/n))
		out[i] = Percentile{P: f, Value: stat.Quantile(p, stat.LinInterp, sorted, nil)}
	}
	return out
}
