package gguf

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
)

// pad rounds n up to a multiple of align (a power of two).
func pad(n, align int64) int64 { return (n + align - 1) &^ (align - 1) }

// checkData places the data section after the tensor infos (which end at infoEnd) and
// checks that every tensor's data lies inside the file and that no two overlap.
// infoAt[i] is the file offset of tensor i's offset field, for error messages.
func (f *File) checkData(infoEnd int64, infoAt []int64) error {
	size := int64(len(f.data))
	if len(f.Tensors) == 0 { // as in llama.cpp: no tensors, no padding
		f.DataOffset = infoEnd
		return nil
	}
	f.DataOffset = pad(infoEnd, int64(f.Alignment))
	if f.DataOffset > size {
		return &FormatError{Offset: infoEnd, Field: "data section",
			Msg: fmt.Sprintf("starts at %d (after padding to %d), past end of file (size %d)", f.DataOffset, f.Alignment, size)}
	}
	avail := uint64(size - f.DataOffset)
	for i, ti := range f.Tensors {
		if ti.Offset > avail || ti.Bytes() > avail-ti.Offset {
			return &FormatError{Offset: infoAt[i], Field: tensorField(i, ti.Name),
				Msg: fmt.Sprintf("data [%s) runs past end of file (size %d)", span(uint64(f.DataOffset)+ti.Offset, ti.Bytes()), size)}
		}
	}
	return f.checkOverlap(infoAt)
}

// span formats the byte range [start, start+n), spelling out an end that overflows.
func span(start, n uint64) string {
	end := strconv.FormatUint(start+n, 10)
	if start+n < start {
		end = strconv.FormatUint(start, 10) + "+" + strconv.FormatUint(n, 10)
	}
	return strconv.FormatUint(start, 10) + ", " + end
}

func tensorField(i int, name string) string { return "tensor " + strconv.Itoa(i) + nameSuffix(name) }

// checkOverlap reports the first pair of non-empty tensors whose data overlap.
func (f *File) checkOverlap(infoAt []int64) error {
	order := make([]int, 0, len(f.Tensors))
	for i, ti := range f.Tensors {
		if ti.Bytes() > 0 {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(f.Tensors[a].Offset, f.Tensors[b].Offset) })
	for k := 1; k < len(order); k++ {
		p, q := f.Tensors[order[k-1]], f.Tensors[order[k]]
		if end := p.Offset + p.Bytes(); end > q.Offset {
			return &FormatError{Offset: infoAt[order[k]], Field: tensorField(order[k], q.Name),
				Msg: fmt.Sprintf("data at +%d overlaps tensor %d %q at [+%d, +%d)", q.Offset, order[k-1], p.Name, p.Offset, end)}
		}
	}
	return nil
}
