package tensor

import (
	"slices"
	"testing"
	"time"
)

// reportTurns reports cpuTurns' metrics from d[k], kernel k's time in each turn: the
// bytes per second of each kernel over all the turns (metric names[k]+unit) and, for
// each after the first, the median over the turns of its speed relative to the first's.
func reportTurns(b *testing.B, bytes int64, names []string, d [][]time.Duration, unit string) {
	for k := range d {
		var sum time.Duration
		for _, t := range d[k] {
			sum += t
		}
		if sum > 0 {
			b.ReportMetric(float64(bytes)*float64(len(d[k]))/sum.Seconds()/1e9, names[k]+unit)
		}
		if k == 0 {
			continue
		}
		var r []float64
		for t := range d[k] {
			if d[k][t] > 0 && d[0][t] > 0 {
				r = append(r, d[0][t].Seconds()/d[k][t].Seconds())
			}
		}
		if len(r) > 0 {
			slices.Sort(r)
			b.ReportMetric(r[len(r)/2], names[k]+"/"+names[0])
		}
	}
}
