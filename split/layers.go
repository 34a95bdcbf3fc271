// Package split plans how a model's layers are spread over devices and moves the hidden
// state from one stage to the next.
//
// Planning is pure: it sees sizes and free memory, never a device, so it is table-tested
// on any machine. A stage is a contiguous range of layers on one device slot; the last
// stage also owns the final norm and the output head. Slots name physical devices, and
// one physical device may host several slots (virtual devices, "--device 0,1,0,1"), so
// 4- and 8-stage plans run on two GPUs.
package split

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// Stage is one contiguous range of layers [First, Last) on device slot Slot.
type Stage struct {
	Slot        int // index into the device list given to the planner
	First, Last int // layers [First, Last)
}

// Layers is the number of layers in the stage.
func (s Stage) Layers() int { return s.Last - s.First }

// Layers assigns nLayer layers to len(weight) slots in proportion to weight, keeping
// each slot's layers contiguous and in slot order, the way llama.cpp splits: the output
// head counts as one more layer (index nLayer) and belongs to the last stage, and layer
// i goes to the first slot whose cumulative share exceeds i/(nLayer+1). Slots with zero
// weight get no stage; stages with no layers are dropped except the last (which keeps
// the output head), so nLayer 0 places the output head alone.
func Layers(nLayer int, weight []float64) ([]Stage, error) {
	if nLayer < 0 {
		return nil, fmt.Errorf("split: %d layers", nLayer)
	}
	cum, err := cumulative(weight)
	if err != nil {
		return nil, err
	}
	slotOf := func(il int) int {
		x := float64(il) / float64(nLayer+1)
		s := sort.Search(len(cum), func(i int) bool { return cum[i] > x })
		return min(s, len(cum)-1)
	}
	var stages []Stage
	for il := 0; il < nLayer; il++ {
		s := slotOf(il)
		if n := len(stages); n > 0 && stages[n-1].Slot == s {
			stages[n-1].Last = il + 1
			continue
		}
		stages = append(stages, Stage{Slot: s, First: il, Last: il + 1})
	}
	if out := slotOf(nLayer); len(stages) == 0 || stages[len(stages)-1].Slot != out {
		stages = append(stages, Stage{Slot: out, First: nLayer, Last: nLayer})
	}
	return stages, nil
}

// cumulative returns the normalised running sums of weight; the last is 1.
func cumulative(weight []float64) ([]float64, error) {
	if len(weight) == 0 {
		return nil, errors.New("split: no devices")
	}
	var total float64
	for i, w := range weight {
		if w < 0 || w != w || math.IsInf(w, 1) {
			return nil, fmt.Errorf("split: weight %d is %v", i, w)
		}
		total += w
	}
	if total == 0 {
		return nil, errors.New("split: every device has weight 0")
	}
	if math.IsInf(total, 1) {
		return nil, fmt.Errorf("split: weights %v sum past the largest float64", weight)
	}
	cum := make([]float64, len(weight))
	var run float64
	for i, w := range weight {
		run += w
		cum[i] = run / total
	}
	cum[len(cum)-1] = 1
	return cum, nil
}
