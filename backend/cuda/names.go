//go:build cgo

package cuda

import (
	"fmt"

	"github.com/infergo/infer/tensor"
)

// typeEntries are the names of the kernels specialised for one weight type, formatted
// once: the launch paths look a name up instead of formatting it on every call.
type typeEntries struct {
	mv       [4]string // mv_<t>_<nc>, nc = matVecWidths[i]
	mmq      [3]string // mmq_<t>_<bn>, bn = 32, 64, 128
	dequant8 string    // dequant8_f16_<t>
	deq8u    string    // dequant8u_f16_<t>
}

// entryNames holds typeEntries for each of weightTypes; it is never written after
// package initialisation.
var entryNames = func() map[tensor.DType]*typeEntries {
	m := make(map[tensor.DType]*typeEntries, len(weightTypes))
	for _, dt := range weightTypes {
		t := typeName(dt)
		e := &typeEntries{dequant8: "dequant8_f16_" + t, deq8u: "dequant8u_f16_" + t}
		for i, nc := range matVecWidths {
			e.mv[i] = fmt.Sprintf("mv_%s_%d", t, nc)
		}
		for i, bn := range []int{32, 64, 128} {
			e.mmq[i] = fmt.Sprintf("mmq_%s_%d", t, bn)
		}
		m[dt] = e
	}
	return m
}()

// entries returns dt's kernel names; dt is one of weightTypes (MatMul checks).
func entries(dt tensor.DType) *typeEntries {
	e, ok := entryNames[dt]
	if !ok {
		panic(fmt.Sprintf("cuda: no kernels for %v weights", dt))
	}
	return e
}

// mvName is the mat-vec kernel of weights dt for nc activation rows, nc one of
// matVecWidths: "mv_q4_0_8".
func mvName(dt tensor.DType, nc int) string {
	for i, w := range matVecWidths {
		if w == nc {
			return entries(dt).mv[i]
		}
	}
	panic(fmt.Sprintf("cuda: no mat-vec kernel of width %d", nc))
}

// mmqName is the MMQ kernel of weights dt with token tile bn (32, 64 or 128):
// "mmq_q4_0_64".
func mmqName(dt tensor.DType, bn int) string {
	switch bn {
	case 32:
		return entries(dt).mmq[0]
	case 64:
		return entries(dt).mmq[1]
	case 128:
		return entries(dt).mmq[2]
	}
	panic(fmt.Sprintf("cuda: no MMQ kernel of tile %d", bn))
}
