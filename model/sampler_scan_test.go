package model

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// scanCases returns logit rows that stress the block tests: all negative, signed
// zeros, values one ulp apart, NaN and infinities, lengths around the block size.
func scanCases() [][]float32 {
	rng := rand.New(rand.NewPCG(11, 12))
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	var rows [][]float32
	for _, n := range []int{1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000} {
		for kind := range 6 {
			row := make([]float32, n)
			for i := range row {
				switch kind {
				case 0: // mixed signs
					row[i] = float32(rng.NormFloat64() * 4)
				case 1: // all negative
					row[i] = -float32(math.Abs(rng.NormFloat64())) - 1
				case 2: // signed zeros and tiny values around them
					row[i] = []float32{0, float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32}[rng.IntN(4)]
				case 3: // few distinct values, many ties, neighbours one ulp apart
					v := float32(rng.IntN(5) - 2)
					row[i] = []float32{v, math.Nextafter32(v, inf), math.Nextafter32(v, -inf)}[rng.IntN(3)]
				case 4: // with NaN and infinities
					row[i] = []float32{nan, inf, -inf, float32(rng.NormFloat64()), -nan}[rng.IntN(5)]
				case 5: // large magnitudes
					row[i] = float32(rng.NormFloat64() * 1e37)
				}
			}
			rows = append(rows, row)
		}
	}
	return append(rows, []float32{nan, nan, nan}, []float32{-inf, -inf}, []float32{nan, -inf, 3})
}

// plainArgmax is the argmax by byLogit's order: the largest, NaN below every number,
// the lowest index on ties.
func plainArgmax(row []float32) int32 {
	best := 0
	for i, l := range row {
		if byLogit(candidate{id: int32(i), logit: l}, candidate{id: int32(best), logit: row[best]}) < 0 {
			best = i
		}
	}
	return int32(best)
}

func TestScanMatchesPlainLoops(t *testing.T) {
	for _, row := range scanCases() {
		if got, want := argmaxLogit(row), plainArgmax(row); got != want {
			t.Errorf("argmaxLogit(%v) = %d, want %d", row, got, want)
		}
		// selectTop against sorting the whole row.
		sorted := make([]candidate, len(row))
		for i, l := range row {
			sorted[i] = candidate{id: int32(i), logit: l}
		}
		slices.SortFunc(sorted, byLogit)
		for _, k := range []int{1, 3, 8, 40, len(row)} {
			if k > len(row) {
				continue
			}
			s := NewSampler(SamplerOptions{}, nil)
			s.selectTop(row, k)
			for i := range k {
				if g, w := s.cand[i], sorted[i]; g.id != w.id {
					t.Fatalf("selectTop(%v, %d)[%d] = %+v, want %+v", row, k, i, g, w)
				}
			}
		}
		// appendAtLeast against a plain filter, for floors around the row's values.
		floors := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(-1)), float32(math.NaN()), -1, 1, 1e38}
		for _, l := range row[:min(len(row), 5)] {
			floors = append(floors, l, math.Nextafter32(l, float32(math.Inf(1))), math.Nextafter32(l, float32(math.Inf(-1))))
		}
		for _, floor := range floors {
			var want []int32
			for i, l := range row {
				if l >= floor {
					want = append(want, int32(i))
				}
			}
			var got []int32
			for _, c := range appendAtLeast(nil, row, floor) {
				got = append(got, c.id)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("appendAtLeast(%v, %v) = %v, want %v", row, floor, got, want)
			}
		}
	}
}

// TestWorseIsByLogit checks the heap's comparison against byLogit on every pair of a
// set of logits with NaN, infinities, signed zeros and ties.
func TestWorseIsByLogit(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	vals := []float32{nan, -inf, -1, float32(math.Copysign(0, -1)), 0, 1, inf}
	for _, la := range vals {
		for _, lb := range vals {
			for _, ids := range [][2]int32{{1, 2}, {2, 1}} {
				a, b := candidate{id: ids[0], logit: la}, candidate{id: ids[1], logit: lb}
				if got, want := worse(a, b), byLogit(a, b) > 0; got != want {
					t.Errorf("worse(%+v, %+v) = %v, byLogit says %v", a, b, got, want)
				}
			}
		}
	}
}

// TestBlockAbove checks blockAbove's contract from every start, on rows that begin on
// and off an 8-byte boundary, for thresholds of both signs: every logit it skips is at
// most thr or NaN, and over a row of numbers all below thr it skips to the last block.
func TestBlockAbove(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for _, base := range scanCases() {
		backing := append([]float32{0}, base...)
		for _, row := range [][]float32{backing[1:], slices.Clone(base)} {
			thrs := []float32{0, float32(math.Copysign(0, -1)), -inf, inf, -1, 1, 1e38, -1e38}
			for _, l := range row[:min(len(row), 4)] {
				if l == l {
					thrs = append(thrs, l, math.Nextafter32(l, inf), math.Nextafter32(l, -inf))
				}
			}
			for _, thr := range thrs {
				for i := 0; i <= len(row); i++ {
					j := blockAbove(row, i, thr)
					if j < i || j > len(row) {
						t.Fatalf("blockAbove(%v, %d, %v) = %d: out of [%d, %d]", row, i, thr, j, i, len(row))
					}
					for m := i; m < j; m++ {
						if row[m] > thr {
							t.Fatalf("blockAbove(%v, %d, %v) = %d skips %v at %d", row, i, thr, j, row[m], m)
						}
					}
				}
			}
		}
	}
	// Liveness: numbers all below the threshold, of both signs, leave only the tail.
	rng := rand.New(rand.NewPCG(21, 22))
	for _, thr := range []float32{0, float32(math.Copysign(0, -1)), 5, -5, 1e-30, -1e-30, inf} {
		backing := make([]float32, 1001)
		for i := range backing {
			switch v := float32(rng.NormFloat64() * 10); {
			case thr > 0:
				backing[i] = min(v, math.Nextafter32(thr, -inf))
			case thr == 0:
				backing[i] = -float32(math.Abs(float64(v))) - 1e-30
			default:
				backing[i] = min(v, math.Nextafter32(thr, -inf), thr*2)
			}
		}
		backing[0] = nan // ahead of every start below
		for _, row := range [][]float32{backing[1:], backing[2:]} {
			if j := blockAbove(row, 0, thr); len(row)-j >= blockSize+1 {
				t.Errorf("blockAbove(row of %d below %v, 0) = %d: stopped %d logits from the end", len(row), thr, j, len(row)-j)
			}
		}
	}
}

// TestRankKey checks that a rank key gives back its token and a logit that compares
// as the token's (+0 for -0, NaN for NaN), and that keys order as byLogit does.
func TestRankKey(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	vals := []float32{nan, -inf, -math.MaxFloat32, -1, -math.SmallestNonzeroFloat32,
		float32(math.Copysign(0, -1)), 0, math.SmallestNonzeroFloat32, 1, math.MaxFloat32, inf}
	for _, l := range vals {
		for _, id := range []int32{0, 1, 31999, math.MaxInt32} {
			key := rankKey(l, id)
			if got := keyID(key); got != id {
				t.Errorf("keyID(rankKey(%v, %d)) = %d", l, id, got)
			}
			got := keyLogit(key)
			if l != l && got == got || l == l && (got != l || math.Signbit(float64(got)) != (l < 0)) {
				t.Errorf("keyLogit(rankKey(%v, %d)) = %v", l, id, got)
			}
		}
	}
	for _, a := range vals {
		for _, b := range vals {
			for _, ids := range [][2]int32{{3, 7}, {7, 3}} {
				ca, cb := candidate{id: ids[0], logit: a}, candidate{id: ids[1], logit: b}
				if got, want := rankKey(a, ids[0]) > rankKey(b, ids[1]), byLogit(ca, cb) < 0; got != want {
					t.Errorf("rankKey(%v, %d) > rankKey(%v, %d) = %v, byLogit says %v", a, ids[0], b, ids[1], got, want)
				}
			}
		}
	}
}
