package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/infergo/infer/model/gguf"
	"github.com/infergo/infer/model/synth"
	"github.com/infergo/infer/tensor"
)

// parseFtype accepts a file type's name (case-insensitive), its llama_ftype number, or
// Q3_K/Q4_K/Q5_K for the _M types, as llama-quantize does. The types are synth's: a
// file type and the tensor type --pure gives every quantizable weight.
func parseFtype(s string) (synth.FileType, error) {
	for _, ft := range synth.FileTypes() {
		if strings.EqualFold(s, ft.Name) || strings.EqualFold(s+"_M", ft.Name) || s == strconv.Itoa(int(ft.ID)) {
			return ft, nil
		}
	}
	return synth.FileType{}, fmt.Errorf("unknown type %q; want one of %s", s, strings.Join(synth.FileTypeNames(), " "))
}

// quantizable reports whether llama.cpp quantizes ti: a weight matrix, not a norm or a
// MoE router.
func quantizable(ti gguf.TensorInfo) bool {
	return len(ti.Dims) >= 2 && strings.HasSuffix(ti.Name, "weight") &&
		!strings.HasSuffix(ti.Name, "_norm.weight") && !strings.HasSuffix(ti.Name, "ffn_gate_inp.weight")
}

// targetType is the type ti gets in a file of base type: base where the row length
// allows it, else llama.cpp's fallback (Q2_K, Q3_K -> Q4_0; Q4_K -> Q5_0; Q5_K -> Q5_1;
// Q6_K -> Q8_0), else F16. Tensors that are not quantizable keep their type.
func targetType(ti gguf.TensorInfo, base tensor.DType) tensor.DType {
	if !quantizable(ti) {
		return ti.Type
	}
	n := ti.RowLen()
	if n%uint64(base.BlockSize()) == 0 {
		return base
	}
	fb := fallback(base)
	if fb == tensor.F16 || n%uint64(fb.BlockSize()) != 0 {
		return tensor.F16
	}
	return fb
}

// fallback is llama.cpp's tensor_type_fallback for the k-quants; for the 32-block types,
// where llama.cpp has none and aborts, it is F16.
func fallback(t tensor.DType) tensor.DType {
	switch t {
	case tensor.Q2_K, tensor.Q3_K:
		return tensor.Q4_0
	case tensor.Q4_K:
		return tensor.Q5_0
	case tensor.Q5_K:
		return tensor.Q5_1
	case tensor.Q6_K:
		return tensor.Q8_0
	}
	return tensor.F16
}

// layerOrder sorts tensor names as llama.cpp's model loader does (weight_name_comparer):
// tensors outside blocks first, then by block number, then by name. llama-quantize
// writes tensors in this order.
func layerOrder(a, b gguf.TensorInfo) int {
	la, lb := layerOf(a.Name), layerOf(b.Name)
	if la != lb {
		return la - lb
	}
	return strings.Compare(a.Name, b.Name)
}

// layerOf returns the block number of blk.N.* names, and -1 for others.
func layerOf(name string) int {
	rest, ok := strings.CutPrefix(name, "blk.")
	if !ok {
		return -1
	}
	num, _, _ := strings.Cut(rest, ".")
	n, err := strconv.Atoi(num)
	if err != nil {
		return -1
	}
	return n
}

// cmdQuantize implements 'infer quantize IN OUT TYPE'.
func cmdQuantize(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	q, help, err := parseQuantize(args, stderr)
	if help || err != nil {
		return err
	}
	return quantizeFile(ctx, q.in, q.out, q.ft, q.threads, stdout)
}

// quantizeArgs is the parsed command line of 'infer quantize'.
type quantizeArgs struct {
	in, out string
	ft      synth.FileType
	threads int
}

// parseQuantize parses and checks quantize's command line, without touching a file.
func parseQuantize(args []string, stderr io.Writer) (q quantizeArgs, help bool, err error) {
	fs := flag.NewFlagSet("quantize", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Func("t", "`threads` quantizing rows in parallel (0 = all cores)", intFlag(&q.threads, 0, maxThreads))
	fs.Usage = func() { quantizeUsage(stderr, fs) }
	pos, help, err := parseArgs(fs, args)
	if help || err != nil {
		return q, help, err
	}
	if len(pos) != 3 {
		return q, false, usageError{fmt.Errorf("quantize: want IN OUT TYPE, got %q (see infer quantize -h)", pos)}
	}
	if q.ft, err = parseFtype(pos[2]); err != nil {
		return q, false, usageError{fmt.Errorf("quantize: %w", err)}
	}
	if q.threads == 0 {
		q.threads = runtime.GOMAXPROCS(0)
	}
	q.in, q.out = pos[0], pos[1]
	return q, false, nil
}

func quantizeUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(w, `usage: infer quantize [-t threads] IN OUT TYPE

Write a copy of the GGUF file IN to OUT with every 2-D weight quantized to TYPE's base
type, as 'llama-quantize --pure' does: Q3_K_M, Q4_K_M and Q5_K_M give Q3_K, Q4_K and
Q5_K for every weight, with no _M mixture. 1-D tensors (norms) keep their type. A
tensor whose row length is not a multiple of the block size falls back as llama.cpp
does (Q2_K, Q3_K -> Q4_0; Q4_K -> Q5_0; Q5_K -> Q5_1; Q6_K -> Q8_0), else to F16.
Metadata is copied; general.file_type and general.quantization_version are set.

TYPE: F32 F16 BF16 Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q2_K Q3_K_M Q4_K_M Q5_K_M Q6_K
(or the llama_ftype number).

`)
	fs.PrintDefaults()
}

// quantizeFile converts in to out, streaming one tensor at a time through the Writer.
func quantizeFile(ctx context.Context, in, out string, ft synth.FileType, threads int, stdout io.Writer) error {
	f, err := gguf.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	w := gguf.NewWriter()
	for _, kv := range f.KV {
		w.Set(kv.Key, kv.Value)
	}
	// llama.cpp sets these with gguf_set_val_u32, which moves an existing key to the end.
	w.Delete("general.quantization_version")
	w.Delete("general.file_type")
	w.Set("general.quantization_version", gguf.Uint32(2))
	w.Set("general.file_type", gguf.Uint32(ft.ID))
	infos := slices.Clone(f.Tensors)
	slices.SortStableFunc(infos, layerOrder)
	count := map[string]int{}
	for _, ti := range infos {
		dt := targetType(ti, ft.Weight)
		count[dt.String()]++
		conv := converter{ctx: ctx, f: f, src: ti, dst: dt, threads: threads, batch: batchBytes}
		if err := w.AddTensor(ti.Name, dt, ti.Dims, conv.writeTo); err != nil {
			return err
		}
	}
	n, err := writeAtomic(w, out)
	if err != nil {
		return fmt.Errorf("quantize %s: %w", in, err)
	}
	_, err = fmt.Fprintf(stdout, "%s: %s (file type %d), %d tensors (%s), %d -> %d bytes\n",
		out, ft.Name, ft.ID, len(infos), typeCounts(count), f.Size(), n)
	return err
}

// writeAtomic writes w to path with gguf.Writer.WriteFile (a temporary file beside
// path renamed into place, so a failed run leaves no partial output and path may even
// be the input file) and returns the bytes written.
func writeAtomic(w *gguf.Writer, path string) (int64, error) {
	n, err := w.Size()
	if err != nil {
		return 0, err
	}
	return n, w.WriteFile(path)
}

// converter produces one tensor of the output file from the input.
type converter struct {
	ctx     context.Context
	f       *gguf.File
	src     gguf.TensorInfo
	dst     tensor.DType
	threads int
	batch   int // bytes of output converted before writing; batchBytes
}

// rowsPerTask is how many rows one goroutine converts at a time: about 64K elements.
func (c *converter) rowsPerTask() int {
	return max(1, (1<<16)/int(max(c.src.RowLen(), 1)))
}

// batchBytes bounds the converted output held in memory at once.
const batchBytes = 64 << 20

// writeTo converts the tensor and writes it to out, in batches of rows converted in
// parallel, so memory stays bounded for any tensor size.
func (c *converter) writeTo(out io.Writer) error {
	data := c.f.TensorData(c.src)
	if c.dst == c.src.Type || c.src.Elements() == 0 {
		_, err := out.Write(data)
		return err
	}
	rowLen, rows := int(c.src.RowLen()), int(c.src.Rows())
	inRow, outRow := c.src.Type.RowBytes(rowLen), c.dst.RowBytes(rowLen)
	batch := max(1, c.batch/max(outRow, 1))
	buf := make([]byte, min(batch, rows)*outRow)
	for r0 := 0; r0 < rows; r0 += batch {
		r1 := min(rows, r0+batch)
		b := buf[:(r1-r0)*outRow]
		if err := c.convert(b, data[r0*inRow:r1*inRow], rowLen); err != nil {
			return fmt.Errorf("%s %v -> %v: %w", c.src.Name, c.src.Type, c.dst, err)
		}
		if _, err := out.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// convert converts the rows in src into dst, a task of a few rows per goroutine.
func (c *converter) convert(dst, src []byte, rowLen int) error {
	inRow, outRow := c.src.Type.RowBytes(rowLen), c.dst.RowBytes(rowLen)
	rows := len(src) / inRow
	g, ctx := errgroup.WithContext(c.ctx)
	g.SetLimit(c.threads)
	step := c.rowsPerTask()
	for r0 := 0; r0 < rows; r0 += step {
		r1 := min(rows, r0+step)
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return convertRows(c.dst, dst[r0*outRow:r1*outRow], c.src.Type, src[r0*inRow:r1*inRow], rowLen)
		})
	}
	return g.Wait()
}

// convertRows converts rows of rowLen elements from type st in src to type dt in dst.
func convertRows(dt tensor.DType, dst []byte, st tensor.DType, src []byte, rowLen int) error {
	f := make([]float32, rowLen)
	inRow, outRow := st.RowBytes(rowLen), dt.RowBytes(rowLen)
	for r := 0; r*inRow < len(src); r++ {
		if err := tensor.Dequantize(st, f, src[r*inRow:(r+1)*inRow]); err != nil {
			return err
		}
		if err := tensor.Quantize(dt, dst[r*outRow:(r+1)*outRow], f); err != nil {
			return err
		}
	}
	return nil
}
