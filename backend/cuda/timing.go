package cuda

import "time"

// Timing is what Measure saw for one pair and payload size.
type Timing struct {
	Bytes int
	Path  PeerState     // the pair's state: Peer, Staged, Unsupported or Same
	Time  time.Duration // one transfer, averaged over back-to-back repetitions
	// D2H and H2D are, for a staged pair, the time of each half alone over the same
	// chunks and slots; Time well under their sum shows the pipeline overlapping them.
	D2H, H2D time.Duration
}

// GBps is the transfer's rate in GB/s (10⁹ bytes per second).
func (t Timing) GBps() float64 {
	if t.Time <= 0 {
		return 0
	}
	return float64(t.Bytes) / t.Time.Seconds() / 1e9
}

// Overlap is Time / (D2H + H2D) for a staged pair (1 means no overlap at all), or 0.
func (t Timing) Overlap() float64 {
	if t.D2H+t.H2D <= 0 {
		return 0
	}
	return float64(t.Time) / float64(t.D2H+t.H2D)
}
