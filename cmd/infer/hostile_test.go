package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostileFiles are the paths the hostile command lines use: a real (synthesized) tiny
// model, text files, and things that are not models.
type hostileFiles struct {
	model    string // synth tiny F32, 512-token vocabulary, training context 512
	empty    string // an empty file
	oneToken string // text of one token
	text     string // a few hundred tokens of text
	dir      string // a directory
	outDir   string // where outputs may be written; must stay empty of partial files
}

// hostilePaths makes the files in a temporary directory removed when t ends.
func hostilePaths(t *testing.T) hostileFiles {
	t.Helper()
	dir := t.TempDir()
	h := hostileFiles{model: filepath.Join(dir, "tiny.gguf"), empty: filepath.Join(dir, "empty.txt"),
		oneToken: filepath.Join(dir, "one.txt"), text: filepath.Join(dir, "text.txt"),
		dir: filepath.Join(dir, "adir"), outDir: filepath.Join(dir, "out")}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"synth", "--shape", "tiny", "--type", "F32", "-o", h.model, "-t", "2"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ path, text string }{
		{h.empty, ""}, {h.oneToken, "a"}, {h.text, strings.Repeat("Once upon a time there was a dog. ", 40)},
	} {
		if err := os.WriteFile(f.path, []byte(f.text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{h.dir, h.outDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// TestHostileFlags feeds hostile values to every subcommand through run, as main does,
// and expects each to fail with one line naming the problem: a usage error (exit 2)
// for a bad command line, another error (exit 1) for bad input found later; never a
// panic, never output on stdout before the failure, never a file left in the output
// directory.
func TestHostileFlags(t *testing.T) {
	h := hostilePaths(t)
	m := h.model
	runArgs := func(extra ...string) []string {
		return append([]string{"run", "-m", m, "-p", "Once upon a time", "-n", "2", "-t", "1"}, extra...)
	}
	ppl := func(extra ...string) []string {
		return append([]string{"perplexity", "-m", m, "-f", h.text, "-c", "16", "-t", "1"}, extra...)
	}
	out := filepath.Join(h.outDir, "out.gguf")
	tests := []struct {
		args  []string
		usage bool   // a usage error (exit 2)
		want  string // in the error
	}{
		// Sampler flags: range-checked, NaN and infinities too.
		{runArgs("--min-p", "2"), true, "-min-p: want a number from 0 to 1"},
		{runArgs("--min-p", "NaN"), true, "-min-p: want a number from 0 to 1"},
		{runArgs("--min-p", "-0.1"), true, "-min-p: want a number from 0 to 1"},
		{runArgs("--temp", "NaN"), true, "-temp: want a finite number"},
		{runArgs("--temp", "inf"), true, "-temp: want a finite number"},
		{runArgs("--temp", "-Inf"), true, "-temp: want a finite number"},
		{runArgs("--temp", "1e39"), true, "-temp: want a finite number"},
		{runArgs("--temp", "0x1p-2000"), false, ""}, // underflows to 0: greedy, valid
		{runArgs("--top-p", "-1"), true, "-top-p: want a number from 0 to 1"},
		{runArgs("--top-p", "1.5"), true, "-top-p: want a number from 0 to 1"},
		{runArgs("--top-p", "nan"), true, "-top-p: want a number from 0 to 1"},
		{runArgs("--top-k", "-1"), true, "-top-k: want an integer from 0"},
		{runArgs("--top-k", "1e3"), true, `"1e3" is not an integer`},
		{runArgs("--repeat-penalty", "-1"), true, "-repeat-penalty: want a finite number >= 0"},
		{runArgs("--repeat-penalty", "NaN"), true, "-repeat-penalty: want a finite number >= 0"},
		{runArgs("--repeat-last-n", "-1"), true, "-repeat-last-n: want an integer from 0"},
		{runArgs("-n", "-2"), true, "-n: want an integer from -1"},
		{runArgs("-n", "99999999999999999999"), true, "-n: want an integer from -1"},
		// Model flags.
		{runArgs("-c", "-1"), true, "must not be negative"},
		{runArgs("-c", "99999999999"), true, "at most 2147483647 tokens"},
		{runArgs("-b", "-1"), true, "must not be negative"},
		{runArgs("-t", "-1"), true, "must not be negative"},
		{runArgs("-t", "100000000"), true, "at most 4096 threads"},
		{runArgs("-ub", "-1"), true, "must not be negative"},
		{runArgs("-ub", "99999999999"), true, "-ub 99999999999: at most"},
		{runArgs("-ngl", "-1"), true, "must not be negative"},
		{runArgs("-ts", "inf/1"), true, "want ratios like 3/1"},
		{runArgs("-ts", "1e308/1e308"), true, "want ratios like 3/1"},
		{runArgs("-ts", "-1/2"), true, "want ratios like 3/1"},
		{runArgs("-ts", "NaN/1"), true, "want ratios like 3/1"},
		{runArgs("-ts", "0/0"), true, "want ratios like 3/1"},
		{runArgs("-ts", "//"), true, "want ratios like 3/1"},
		{runArgs("-ctk", "q8_0"), true, `-ctk "q8_0": want f16 or f32`},
		{runArgs("--weight-cache", "-1G"), true, "want bytes like 16G"},
		{runArgs("-c", "2000000000"), false, "does not fit in host memory"}, // planned against the real free memory
		{runArgs("-c", "1"), false, "leaves no room in a context of 1"},
		{[]string{"run", "-m", h.dir, "-p", "hi"}, false, "is a directory, not a GGUF file"},
		{[]string{"run", "-m", os.DevNull, "-p", "hi"}, false, "is a device, not a GGUF file"},
		{[]string{"run", "-m", h.empty, "-p", "hi"}, false, "is empty (0 bytes), not a GGUF file"},
		{[]string{"run", "-m", h.text, "-p", "hi"}, false, "bad magic"},
		{[]string{"run", "-m", filepath.Join(h.dir, "missing.gguf"), "-p", "hi"}, false, "no such file"},
		{[]string{"run", "-m", m}, true, "-p: a prompt is required"},
		{[]string{"run", "-p", "hi"}, true, "-m: a model file is required"},
		{[]string{"run", "-m"}, true, "flag needs an argument: -m"},
		{[]string{"run", "--temp"}, true, "flag needs an argument: -temp"},
		// perplexity: the text, the chunk length, the batch.
		{[]string{"perplexity", "-m", m, "-f", h.empty}, false, "the file is empty"},
		{[]string{"perplexity", "-m", m, "-f", h.oneToken, "-c", "16"}, false, "need at least 32 tokens for a context of 16; the text has"},
		{[]string{"perplexity", "-m", m, "-f", h.dir}, false, "is a directory"},
		{ppl("-c", "1"), false, "need at least 4"},
		{ppl("-c", "0"), true, "-c must be positive"},
		{ppl("-b", "-1"), true, "must not be negative"},
		{ppl("-c", "-16"), true, "must not be negative"},
		{ppl("-t", "99999"), true, "at most 4096 threads"},
		{ppl("-ts", "inf/1"), true, "want ratios like 3/1"},
		// tokenize and inspect: files that are not models.
		{[]string{"tokenize", "-m", h.dir, "-p", "hi"}, false, "is a directory, not a GGUF file"},
		{[]string{"tokenize", "-m", os.DevNull, "-p", "hi"}, false, "is a device, not a GGUF file"},
		{[]string{"tokenize", "-p", "hi"}, true, "-m: a model file is required"},
		{[]string{"inspect"}, true, "want one FILE, got 0"},
		{[]string{"inspect", m, m}, true, "want one FILE, got 2"},
		{[]string{"inspect", h.dir}, false, "is a directory, not a GGUF file"},
		{[]string{"inspect", os.DevNull}, false, "is a device, not a GGUF file"},
		{[]string{"inspect", h.empty}, false, "is empty (0 bytes), not a GGUF file"},
		// quantize and synth: bad outputs fail before the work and leave nothing.
		{[]string{"quantize", m, filepath.Join(h.outDir, "missing", "out.gguf"), "q8_0"}, false, "no such file or directory"},
		{[]string{"quantize", m, h.dir, "q8_0"}, false, "is a directory"},
		{[]string{"quantize", m, out, "q9_9"}, true, `unknown type "q9_9"`},
		{[]string{"quantize", m, out}, true, "want IN OUT TYPE"},
		{[]string{"quantize", "-t", "-1", m, out, "q8_0"}, true, "-t: want an integer from 0"},
		{[]string{"quantize", h.dir, out, "q8_0"}, false, "is a directory, not a GGUF file"},
		{[]string{"synth", "-o", filepath.Join(h.outDir, "missing", "out.gguf")}, false, "no such file or directory"},
		{[]string{"synth", "-o", h.dir}, false, "is a directory"},
		{[]string{"synth", "-o", out, "--layers", "-1"}, true, "must not be negative"},
		{[]string{"synth", "-o", out, "-t", "-1"}, true, "must not be negative"},
		{[]string{"synth", "-o", out, "--shape", "huge"}, true, "huge"},
		{[]string{"synth", "-o", out, "--type", "Q9"}, true, "Q9"},
		{[]string{"synth"}, true, "-o: an output file is required"},
		// bench and devices.
		{[]string{"bench", "-m", m, "-p", "-5", "-r", "1"}, true, "negative"},
		{[]string{"bench", "-m", m, "-n", "-3", "-r", "1"}, true, "negative"},
		{[]string{"bench", "-m", m, "-r", "0"}, true, "must be at least 1"},
		{[]string{"bench", "-m", m, "-t", "0"}, true, "must be at least 1"},
		{[]string{"bench", "-m", m, "-p", "x"}, true, "is not a list of integers"},
		{[]string{"bench", "-m", m, "-ub", "-1"}, true, "must not be negative"},
		{[]string{"devices", "-peer", "sometimes"}, true, "sometimes"},
		// the command itself.
		{[]string{"frobnicate"}, true, `unknown command "frobnicate"`},
		{nil, true, "no command given"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tt.args, &stdout, &stderr)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("%v, want success", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error; stdout %q; want one containing %q", stdout.String(), tt.want)
			}
			var ue usageError
			if msg := err.Error(); !strings.Contains(msg, tt.want) || strings.Contains(msg, "\n") || errors.As(err, &ue) != tt.usage {
				t.Errorf("error %q (usage error %v), want one line containing %q (usage error %v)", msg, errors.As(err, &ue), tt.want, tt.usage)
			}
			if tt.args != nil && tt.args[0] != "bench" && stdout.Len() != 0 { // bench prints its table header first
				t.Errorf("stdout %q, want nothing", stdout.String())
			}
			if strings.Contains(stderr.String(), "goroutine ") {
				t.Errorf("stderr has a stack trace:\n%s", stderr.String())
			}
			if entries, _ := os.ReadDir(h.outDir); len(entries) != 0 {
				t.Errorf("output directory holds %v after a failure", entries)
				for _, e := range entries {
					os.RemoveAll(filepath.Join(h.outDir, e.Name()))
				}
			}
		})
	}
}

// parsers are the parse-and-check stages of the subcommands, which touch no file or
// device: what FuzzFlags runs on arbitrary argument lists. synth and devices parse
// inside their commands and are covered by TestHostileFlags instead.
var parsers = map[string]func(args []string, stderr io.Writer) error{
	"run": func(args []string, stderr io.Writer) error {
		_, _, _, err := parseRun(args, stderr)
		return err
	},
	"perplexity": func(args []string, stderr io.Writer) error {
		fs, pc := perplexityFlags(stderr)
		if help, err := parseFlags(fs, args); help || err != nil {
			return err
		}
		if _, err := pc.mf.options(nil); err != nil {
			return err
		}
		return pc.check(false)
	},
	"tokenize": func(args []string, stderr io.Writer) error {
		_, _, err := parseTokenize(args, stderr)
		return err
	},
	"inspect": func(args []string, stderr io.Writer) error {
		_, _, _, err := parseInspect(args, stderr)
		return err
	},
	"quantize": func(args []string, stderr io.Writer) error {
		_, _, err := parseQuantize(args, stderr)
		return err
	},
	"bench": func(args []string, stderr io.Writer) error {
		_, _, err := parseBenchFlags(args, stderr)
		return err
	},
}

// FuzzFlags runs every subcommand's flag parser on arbitrary argument lists (one per
// line of the input): none may panic, and an error is one line. The seeds in
// testdata/fuzz/FuzzFlags hold the hostile values of TestHostileFlags.
func FuzzFlags(f *testing.F) {
	for _, seed := range []string{
		"run\n-m\nm.gguf\n-p\nhi\n--min-p\n2",
		"run\n-m\nm.gguf\n-p\nhi\n--temp\nNaN\n-ts\ninf/1",
		"perplexity\n-m\nm.gguf\n-f\nt.txt\n-c\n1\n-b\n-1",
		"bench\n-m\nm.gguf\n-p\n-5\n-n\n1,2,,3",
		"quantize\n-t\n-1\na\nb\nq4_k_m",
		"inspect\n--json\n-h",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, input string) {
		args := strings.Split(input, "\n")
		try := func(name string, args []string) {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("%s %q: panic: %v", name, args, r)
				}
			}()
			if err := parsers[name](args, io.Discard); err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("%s %q: error of several lines: %q", name, args, err.Error())
			}
		}
		if _, ok := parsers[args[0]]; ok {
			try(args[0], args[1:])
			return
		}
		for name := range parsers {
			try(name, args)
		}
	})
}
