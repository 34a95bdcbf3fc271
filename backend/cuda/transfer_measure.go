//go:build cgo

package cuda

import (
	"errors"
	"fmt"
	"time"

	"github.com/infergo/infer/tensor"
)

// Measure times reps back-to-back transfers of size bytes over the table's path from
// device index from to to (a pair given to NewPeers), after one warm-up transfer, from
// the host's clock: enqueueing included, as a handoff pays it. For a staged pair it also
// times each half alone. It allocates its own buffers and waits for both devices.
func (p *Peers) Measure(from, to, size, reps int) (Timing, error) {
	t := Timing{Bytes: size}
	if size <= 0 || reps <= 0 {
		return t, fmt.Errorf("cuda: measure %d bytes × %d: want positive sizes", size, reps)
	}
	if from < 0 || from >= len(p.devs) || to < 0 || to >= len(p.devs) {
		return t, fmt.Errorf("cuda: measure pair %d->%d: not in the table", from, to)
	}
	src, dst := p.devs[from], p.devs[to]
	p.mu.RLock()
	defer p.mu.RUnlock()
	l := p.links[[2]*Device{src, dst}]
	if l == nil || p.closed {
		return t, fmt.Errorf("cuda: measure pair %d->%d: not in the table", from, to)
	}
	t.Path = l.state
	a, err := src.Alloc(tensor.I8, 1, size)
	if err != nil {
		return t, err
	}
	defer src.Free(a)
	b, err := dst.Alloc(tensor.I8, 1, size)
	if err != nil {
		return t, err
	}
	defer dst.Free(b)
	pa, pb := a.(*Buffer).ptr, b.(*Buffer).ptr
	run := func(parts copyParts) (time.Duration, error) {
		if err := l.copy(pb, pa, size, parts); err != nil { // warm-up
			return 0, err
		}
		if err := errors.Join(src.Sync(), dst.Sync()); err != nil {
			return 0, err
		}
		start := time.Now()
		for range reps {
			if err := l.copy(pb, pa, size, parts); err != nil {
				return 0, err
			}
		}
		if err := errors.Join(src.Sync(), dst.Sync()); err != nil {
			return 0, err
		}
		return time.Since(start) / time.Duration(reps), nil
	}
	if t.Time, err = run(copyBoth); err != nil {
		return t, fmt.Errorf("cuda: measure %s → %s: %w", src.name, dst.name, err)
	}
	if l.staged != nil {
		if t.D2H, err = run(copyD2H); err == nil {
			t.H2D, err = run(copyH2D)
		}
		if err != nil {
			return t, fmt.Errorf("cuda: measure %s → %s: %w", src.name, dst.name, err)
		}
	}
	return t, nil
}
