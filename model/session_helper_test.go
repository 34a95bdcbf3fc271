package model

import "testing"

// openSession loads the model at path with opts and opens a session on it; both are
// closed when the test ends.
func openSession(t testing.TB, path string, opts Options) (*Model, *Session) {
	t.Helper()
	m, err := Load(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	s, err := m.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}
