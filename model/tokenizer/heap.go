package tokenizer

// bigram is a merge candidate that knows the order of llama.cpp's
// std::priority_queue comparators: before reports whether it pops ahead of o.
type bigram[T any] interface {
	before(o T) bool
}

// bigramHeap is a binary heap of merge candidates; the top pops first.
type bigramHeap[T bigram[T]] struct {
	items []T
}

// push adds x.
func (h *bigramHeap[T]) push(x T) {
	h.items = append(h.items, x)
	i := len(h.items) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h.items[i].before(h.items[p]) {
			break
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

// pop removes and returns the top; the heap must not be empty.
func (h *bigramHeap[T]) pop() T {
	top := h.items[0]
	n := len(h.items) - 1
	h.items[0] = h.items[n]
	h.items = h.items[:n]
	for i := 0; ; {
		l, best := 2*i+1, i
		if l < n && h.items[l].before(h.items[best]) {
			best = l
		}
		if r := l + 1; r < n && h.items[r].before(h.items[best]) {
			best = r
		}
		if best == i {
			return top
		}
		h.items[i], h.items[best] = h.items[best], h.items[i]
		i = best
	}
}
