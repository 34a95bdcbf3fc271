package testdata

import (
	"fmt"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that records how a helper stopped the test instead of
// stopping the real one.
type recorder struct {
	testing.TB
	how string // "skip" or "fatal"
	msg string
}

// stopped unwinds the helper's goroutine the way SkipNow and FailNow do.
type stopped struct{}

func (r *recorder) Helper()                      {}
func (r *recorder) Skip(args ...any)             { r.stop("skip", fmt.Sprint(args...)) }
func (r *recorder) Skipf(f string, args ...any)  { r.stop("skip", fmt.Sprintf(f, args...)) }
func (r *recorder) Fatalf(f string, args ...any) { r.stop("fatal", fmt.Sprintf(f, args...)) }
func (r *recorder) Fatal(args ...any)            { r.stop("fatal", fmt.Sprint(args...)) }
func (r *recorder) stop(how, msg string)         { r.how, r.msg = how, msg; panic(stopped{}) }

// call runs f with a recorder and returns how it stopped ("" when it returned).
func call(t *testing.T, f func(testing.TB)) (how, msg string) {
	r := &recorder{TB: t}
	func() {
		defer func() {
			if v := recover(); v != nil {
				if _, ok := v.(stopped); !ok {
					panic(v)
				}
			}
		}()
		f(r)
	}()
	return r.how, r.msg
}

// TestMissingData checks that absent data skips the test, or fails it with
// INFER_REQUIRE_TESTDATA=1, through every helper.
func TestMissingData(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nonexistent")
	helpers := map[string]func(testing.TB){
		"Dir":           func(tb testing.TB) { Dir(tb) },
		"Path":          func(tb testing.TB) { Path(tb, "stories260K-F32.gguf") },
		"LoadReference": func(tb testing.TB) { LoadReference(tb) },
		"Missing":       func(tb testing.TB) { Missing(tb, "no %s", "logits") },
	}
	for _, tt := range []struct{ require, want string }{{"", "skip"}, {"0", "skip"}, {"1", "fatal"}} {
		t.Setenv("INFER_TESTDATA", missing)
		t.Setenv(RequireEnv, tt.require)
		for name, f := range helpers {
			if how, msg := call(t, f); how != tt.want {
				t.Errorf("%s=%q: %s: stopped with %q (%s), want %q", RequireEnv, tt.require, name, how, msg, tt.want)
			}
		}
	}
}

// TestPresentData checks that an existing directory is found and that a file missing
// from it stops the test as absent data does.
func TestPresentData(t *testing.T) {
	d := t.TempDir()
	t.Setenv("INFER_TESTDATA", d)
	t.Setenv(RequireEnv, "1")
	if how, msg := call(t, func(tb testing.TB) {
		if got := Dir(tb); got != d {
			t.Errorf("Dir = %q, want %q", got, d)
		}
	}); how != "" {
		t.Errorf("Dir stopped with %q: %s", how, msg)
	}
	if how, _ := call(t, func(tb testing.TB) { Path(tb, "absent.gguf") }); how != "fatal" {
		t.Errorf("Path of an absent file with %s=1 stopped with %q, want fatal", RequireEnv, how)
	}
}
