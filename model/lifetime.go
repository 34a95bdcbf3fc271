package model

// A Model's lifetime. Sessions of one model may be used from several goroutines at once
// (each Session from one goroutine at a time). Every session call holds the model shared
// for its duration (acquire); Close holds it exclusively, so it waits for the calls in
// flight, then releases the buffers of every session still open, the model's weights and
// the file. Afterwards NewSession and every Session method but Close fail with
// ErrClosed, and Session.Close is a no-op: the buffers on the caller's devices are gone
// by the time Close returns, whichever order the caller closes things in.

// acquire takes a shared hold on m for one session call, or returns ErrClosed.
func (m *Model) acquire() error {
	m.life.RLock()
	if m.closed {
		m.life.RUnlock()
		return ErrClosed
	}
	return nil
}

// release ends a hold taken by acquire.
func (m *Model) release() { m.life.RUnlock() }

// track records x (a session or a batch) as open in set, m.sessions or m.batches; it
// runs under a hold.
func track[T comparable](m *Model, set *map[T]struct{}, x T) {
	m.open.Lock()
	defer m.open.Unlock()
	if *set == nil {
		*set = map[T]struct{}{}
	}
	(*set)[x] = struct{}{}
}

// untrack forgets x, which track recorded in set; it runs under a hold.
func untrack[T comparable](m *Model, set *map[T]struct{}, x T) {
	m.open.Lock()
	defer m.open.Unlock()
	delete(*set, x)
}

// OpenSessions is the number of sessions made by NewSession and not closed yet.
func (m *Model) OpenSessions() int {
	m.open.Lock()
	defer m.open.Unlock()
	return len(m.sessions)
}

// closeSessions releases the buffers of every open session and batch; it runs under
// Close's exclusive hold.
func (m *Model) closeSessions() {
	for s := range m.sessions {
		s.freeBuffers()
	}
	for b := range m.batches {
		b.sc.free()
	}
	m.batches = nil
	m.sessions = nil
}
