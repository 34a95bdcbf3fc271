package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Row is one line of a results table: a test on a model with one configuration.
type Row struct {
	Model       Model
	Backend     string // "CPU", "CUDA"
	CPULevel    string // CPU kernels of a CPU run (tensor.Level: "avx2"); "" for GPU runs
	Threads     int
	NGL         int    // layers offloaded to GPUs
	SplitMode   string // -sm
	TensorSplit string // -ts, as given
	Batch       int    // -b: most tokens per forward pass
	UBatch      int    // -ub: most tokens one stage computes at a time
	Result      Result
	Time        time.Time // when the test ran
}

// backend is the backend cell: the backend, then the CPU kernel level of a CPU run
// ("CPU avx2").
func (r Row) backend() string {
	if r.CPULevel == "" {
		return r.Backend
	}
	return r.Backend + " " + r.CPULevel
}

// Columns selects the optional columns, as llama-bench shows a parameter's column
// when it is not at its default.
type Columns struct {
	NGL         bool // GPU backends show ngl
	Threads     bool // CPU backends show threads
	NBatch      bool // -b is not llama-bench's default 2048
	NUBatch     bool // -ub is not llama-bench's default 512
	SplitMode   bool
	TensorSplit bool
}

// Printer writes rows as they are measured.
type Printer interface {
	Header() error   // writes what comes before the first row
	Row(r Row) error // writes one row
	Footer() error   // writes what comes after the last row
}

// NewMarkdown returns a printer of llama-bench's markdown table with the given
// columns; build is printed in the footer line "build: ...". Each column has
// llama-bench's width, or its cell's in the first row where that is longer ("CUDA x2
// nccl"): the header waits for the first row. The rows of one run differ in their test
// and t/s cells, which fit llama-bench's widths, and in the model when several are
// measured (a longer description than the first row's overflows its column).
func NewMarkdown(w io.Writer, c Columns, build string) Printer {
	fields := []string{"model", "size", "params", "backend"}
	for _, f := range []struct {
		on   bool
		name string
	}{{c.NGL, "ngl"}, {c.Threads, "threads"}, {c.NBatch, "n_batch"}, {c.NUBatch, "n_ubatch"},
		{c.SplitMode, "sm"}, {c.TensorSplit, "ts"}} {
		if f.on {
			fields = append(fields, f.name)
		}
	}
	return &markdown{w: w, fields: append(fields, "test", "t/s"), build: build}
}

// markdown is the Printer of llama-bench's markdown table; widths, per field, are set
// from the first row when the header is written.
type markdown struct {
	w      io.Writer
	fields []string
	build  string
	widths []int
}

// size sets the column widths: llama-bench's, widened to first's cells (rune counts;
// nil: llama-bench's).
func (m *markdown) size(first *Row) {
	m.widths = make([]int, len(m.fields))
	for i, f := range m.fields {
		w := width(f)
		if first != nil {
			if n := utf8.RuneCountInString(first.value(f)); n > abs(w) {
				w = n * (w / abs(w))
			}
		}
		m.widths[i] = w
	}
}

// width is llama-bench's column width; negative means left-aligned.
func width(field string) int {
	switch field {
	case "model":
		return -30
	case "t/s":
		return 20
	case "size", "params":
		return 10
	case "backend":
		return -10
	case "ngl":
		return 3
	case "threads", "n_batch":
		return 7
	case "n_ubatch":
		return 8
	case "sm":
		return 6
	case "ts":
		return -12
	case "test":
		return 15
	}
	return -max(len(field), 10)
}

// Header does nothing: the column names and the alignment row come with the first row
// (or the footer, without rows), whose cells size the columns.
func (m *markdown) Header() error { return nil }

// header writes the column names and the alignment row.
func (m *markdown) header() error {
	var h, sep strings.Builder
	h.WriteString("|")
	sep.WriteString("|")
	for i, f := range m.fields {
		w := m.widths[i]
		fmt.Fprintf(&h, " %*s |", w, f)
		end := "-"
		if w > 0 {
			end = ":"
		}
		fmt.Fprintf(&sep, " %s%s |", strings.Repeat("-", abs(w)-1), end)
	}
	_, err := fmt.Fprintf(m.w, "%s\n%s\n", h.String(), sep.String())
	return err
}

// Row writes one table line.
func (m *markdown) Row(r Row) error {
	if m.widths == nil {
		m.size(&r)
		if err := m.header(); err != nil {
			return err
		}
	}
	var b strings.Builder
	b.WriteString("|")
	for i, f := range m.fields {
		// Go pads by runes, so "±" needs none of llama-bench's extra byte of width.
		fmt.Fprintf(&b, " %*s |", m.widths[i], r.value(f))
	}
	_, err := fmt.Fprintln(m.w, b.String())
	return err
}

// Footer writes the build line (after the header, when no row came).
func (m *markdown) Footer() error {
	if m.widths == nil {
		m.size(nil)
		if err := m.header(); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(m.w, "\nbuild: %s\n", m.build)
	return err
}

func abs(x int) int { return max(x, -x) }

// value is the text of one markdown cell.
func (r Row) value(field string) string {
	switch field {
	case "model":
		return r.Model.Desc
	case "size":
		return FormatSize(r.Model.Size)
	case "params":
		return FormatParams(r.Model.Params)
	case "backend":
		return r.backend()
	case "ngl":
		return strconv.Itoa(r.NGL)
	case "threads":
		return strconv.Itoa(r.Threads)
	case "n_batch":
		return strconv.Itoa(r.Batch)
	case "n_ubatch":
		return strconv.Itoa(r.UBatch)
	case "sm":
		return r.SplitMode
	case "ts":
		return r.TensorSplit
	case "test":
		return r.Result.Test.Name()
	case "t/s":
		return fmt.Sprintf("%.2f ± %.2f", r.Result.Mean(), r.Result.Stddev())
	}
	return "?"
}

// FormatSize is llama-bench's size column: MiB below 1 GiB, else GiB.
func FormatSize(n int64) string {
	if n < 1<<30 {
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
}

// FormatParams is llama-bench's params column: millions below 1e9, else billions.
func FormatParams(n int64) string {
	if n < 1e9 {
		return fmt.Sprintf("%.2f M", float64(n)/1e6)
	}
	return fmt.Sprintf("%.2f B", float64(n)/1e9)
}

// NewJSON returns a printer of a JSON array with one object per row, using
// llama-bench's field names for the fields both have.
func NewJSON(w io.Writer, build string) Printer { return &jsonPrinter{w: w, build: build} }

// jsonPrinter is the Printer of a JSON array; n counts the rows written.
type jsonPrinter struct {
	w     io.Writer
	build string
	n     int
}

// jsonRow is one test in llama-bench's JSON field names.
type jsonRow struct {
	BuildCommit string    `json:"build_commit"`
	Backends    string    `json:"backends"`
	CPULevel    string    `json:"cpu_level,omitempty"` // ours: the CPU kernels of a CPU run
	Filename    string    `json:"model_filename"`
	Type        string    `json:"model_type"`
	Size        int64     `json:"model_size"`
	Params      int64     `json:"model_n_params"`
	Batch       int       `json:"n_batch"`
	UBatch      int       `json:"n_ubatch"`
	Threads     int       `json:"n_threads"`
	NGL         int       `json:"n_gpu_layers"`
	SplitMode   string    `json:"split_mode"`
	TensorSplit string    `json:"tensor_split"`
	Prompt      int       `json:"n_prompt"`
	Gen         int       `json:"n_gen"`
	Depth       int       `json:"n_depth"`
	TestTime    string    `json:"test_time"`
	AvgNS       int64     `json:"avg_ns"`
	StddevNS    int64     `json:"stddev_ns"`
	AvgTS       float64   `json:"avg_ts"`
	StddevTS    float64   `json:"stddev_ts"`
	SamplesNS   []int64   `json:"samples_ns"`
	SamplesTS   []float64 `json:"samples_ts"`
}

// Header opens the array.
func (j *jsonPrinter) Header() error {
	_, err := io.WriteString(j.w, "[\n")
	return err
}

// Row writes one object, after a comma from the second on.
func (j *jsonPrinter) Row(r Row) error {
	b, err := json.MarshalIndent(jsonRow{
		BuildCommit: j.build, Backends: r.Backend, CPULevel: r.CPULevel, Filename: r.Model.Filename,
		Type: r.Model.Desc, Size: r.Model.Size, Params: r.Model.Params, Batch: r.Batch, UBatch: r.UBatch,
		Threads: r.Threads, NGL: r.NGL, SplitMode: r.SplitMode, TensorSplit: r.TensorSplit,
		Prompt: r.Result.Test.Prompt, Gen: r.Result.Test.Gen, Depth: r.Result.Test.Depth, TestTime: r.Time.UTC().Format(time.RFC3339),
		AvgNS: int64(r.Result.MeanNS()), StddevNS: int64(r.Result.StddevNS()),
		AvgTS: r.Result.Mean(), StddevTS: r.Result.Stddev(),
		SamplesNS: r.Result.SamplesNS, SamplesTS: r.Result.TokensPerSecond(),
	}, "  ", "  ")
	if err != nil {
		return fmt.Errorf("bench: json: %w", err)
	}
	sep := "  "
	if j.n > 0 {
		sep = ",\n  "
	}
	j.n++
	_, err = fmt.Fprintf(j.w, "%s%s", sep, b)
	return err
}

// Footer closes the array.
func (j *jsonPrinter) Footer() error {
	_, err := io.WriteString(j.w, "\n]\n")
	return err
}
