package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/infergo/infer/model/gguf"
)

// inspectMaxString is the longest string value the text output prints in full.
const inspectMaxString = 80

// cmdInspect implements 'infer inspect FILE': the version, the metadata (key, type,
// value; long arrays and strings abbreviated) and the tensor table with totals, as text
// or, with --json, as one JSON object holding every value in full.
func cmdInspect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	path, asJSON, help, err := parseInspect(args, stderr)
	if help || err != nil {
		return err
	}
	f, err := gguf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if asJSON {
		return json.NewEncoder(stdout).Encode(inspectJSON(f))
	}
	return printInspect(stdout, path, f)
}

// parseInspect parses inspect's command line: the file and --json.
func parseInspect(args []string, stderr io.Writer) (path string, asJSON, help bool, err error) {
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&asJSON, "json", false, "print one JSON object with every metadata value in full")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: infer inspect [--json] FILE\n\nPrint a GGUF file's version, metadata and tensor table.")
		fs.PrintDefaults()
	}
	pos, help, err := parseArgs(fs, args)
	if help || err != nil {
		return "", false, help, err
	}
	if len(pos) != 1 {
		return "", false, false, usageError{fmt.Errorf("inspect: want one FILE, got %d arguments (see infer inspect -h)", len(pos))}
	}
	return pos[0], asJSON, false, nil
}

// parseArgs parses flags given before, between or after the positional arguments, and
// returns the positional ones. help is true when -h was asked for.
func parseArgs(fs *flag.FlagSet, args []string) (pos []string, help bool, err error) {
	for {
		err := parseQuietly(fs, args)
		if errors.Is(err, flag.ErrHelp) {
			return nil, true, nil
		}
		if err != nil {
			return nil, false, usageError{err}
		}
		if fs.NArg() == 0 {
			return pos, false, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// printInspect writes the text report.
func printInspect(w io.Writer, path string, f *gguf.File) error {
	fmt.Fprintf(w, "%s: GGUF v%d, %d bytes, alignment %d, data at %#x\n", path, f.Version, f.Size(), f.Alignment, f.DataOffset)
	fmt.Fprintf(w, "\nmetadata (%d keys):\n", len(f.KV))
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, kv := range f.KV {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", kv.Key, typeName(kv.Value), shortValue(kv.Value))
	}
	tw.Flush()
	fmt.Fprintf(w, "\ntensors (%d):\n", len(f.Tensors))
	nameW, shapeW := len("name"), len("shape")
	for _, ti := range f.Tensors {
		nameW, shapeW = max(nameW, len(ti.Name)), max(shapeW, len(shape(ti.Dims)))
	}
	row := fmt.Sprintf("  %%-%ds  %%-5s  %%-%ds  %%12v  %%12v\n", nameW, shapeW)
	fmt.Fprintf(w, row, "name", "type", "shape", "bytes", "offset")
	var bytes, elems uint64
	count := map[string]int{}
	for _, ti := range f.Tensors {
		fmt.Fprintf(w, row, ti.Name, ti.Type, shape(ti.Dims), ti.Bytes(), fmt.Sprintf("%#x", ti.Offset))
		bytes += ti.Bytes()
		elems += ti.Elements()
		count[ti.Type.String()]++
	}
	_, err := fmt.Fprintf(w, "\ntotal: %d tensors (%s), %d elements, %d bytes (%.2f bits per element)\n",
		len(f.Tensors), typeCounts(count), elems, bytes, bitsPer(bytes, elems))
	return err
}

func bitsPer(bytes, elems uint64) float64 {
	if elems == 0 {
		return 0
	}
	return 8 * float64(bytes) / float64(elems)
}

// typeCounts formats {"F32": 9, "Q8_0": 30} as "F32×9, Q8_0×30".
func typeCounts(count map[string]int) string {
	names := make([]string, 0, len(count))
	for n := range count {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		names[i] = fmt.Sprintf("%s×%d", n, count[n])
	}
	return strings.Join(names, ", ")
}

// typeName is a value's type as inspect prints it: uint32, or array[string].
func typeName(v gguf.Value) string {
	if v.Type() == gguf.ArrayType {
		return "array[" + v.ElemType().String() + "]"
	}
	return v.Type().String()
}

// shortValue formats v, abbreviating arrays and long strings.
func shortValue(v gguf.Value) string {
	s, ok := v.AsString()
	if !ok || len(s) <= inspectMaxString {
		return v.String()
	}
	cut := inspectMaxString
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q... (%d bytes)", s[:cut], len(s))
}

func isRuneStart(b byte) bool { return b&0xc0 != 0x80 }

// shape formats dims in ggml order as [256 512].
func shape(dims []uint64) string { return fmt.Sprint(dims) }

// inspectReport is the JSON form of 'infer inspect --json'.
type inspectReport struct {
	Version    uint32          `json:"version"`
	Size       int64           `json:"size"`
	Alignment  int             `json:"alignment"`
	DataOffset int64           `json:"data_offset"`
	Metadata   []inspectKV     `json:"metadata"`
	Tensors    []inspectTensor `json:"tensors"`
	Bytes      uint64          `json:"tensor_bytes"`
	Elements   uint64          `json:"tensor_elements"`
}

type inspectKV struct {
	Key   string `json:"key"`
	Type  string `json:"type"`
	Value any    `json:"value"`
}

type inspectTensor struct {
	Name   string   `json:"name"`
	Type   string   `json:"type"`
	Shape  []uint64 `json:"shape"`
	Bytes  uint64   `json:"bytes"`
	Offset uint64   `json:"offset"`
}

func inspectJSON(f *gguf.File) inspectReport {
	r := inspectReport{Version: f.Version, Size: f.Size(), Alignment: f.Alignment, DataOffset: f.DataOffset,
		Metadata: []inspectKV{}, Tensors: []inspectTensor{}}
	for _, kv := range f.KV {
		r.Metadata = append(r.Metadata, inspectKV{kv.Key, typeName(kv.Value), jsonValue(kv.Value)})
	}
	for _, ti := range f.Tensors {
		r.Tensors = append(r.Tensors, inspectTensor{ti.Name, ti.Type.String(), ti.Dims, ti.Bytes(), ti.Offset})
		r.Bytes += ti.Bytes()
		r.Elements += ti.Elements()
	}
	return r
}

// jsonValue converts v to a value encoding/json can write; NaN and infinities, which
// JSON cannot hold, become the strings "NaN", "+Inf" and "-Inf".
func jsonValue(v gguf.Value) any {
	if v.Type() == gguf.ArrayType {
		out := make([]any, v.Len())
		for i := range out {
			out[i] = jsonValue(v.Index(i))
		}
		return out
	}
	if x, ok := v.AsFloat(); ok {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Sprint(x)
		}
		return x
	}
	if b, ok := v.AsBool(); ok {
		return b
	}
	if s, ok := v.AsString(); ok {
		return s
	}
	if i, ok := v.AsInt(); ok {
		return i
	}
	u, _ := v.AsUint()
	return u
}
