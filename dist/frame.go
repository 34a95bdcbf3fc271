package dist

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strings"
)

// Frame kinds on a coordinator connection.
const (
	frameHello     byte = iota + 1 // follower -> rank 0: JSON Hello
	frameWelcome                   // rank 0 -> follower: JSON Welcome
	frameAbort                     // either way: the sender failed; payload is the reason
	frameHeartbeat                 // either way: the sender is alive
	frameCommand                   // rank 0 -> follower: an opaque command
	frameResult                    // follower -> rank 0: an opaque result
	frameBye                       // rank 0 -> follower: the run is over
)

var frameNames = [...]string{frameHello: "hello", frameWelcome: "welcome", frameAbort: "abort",
	frameHeartbeat: "heartbeat", frameCommand: "command", frameResult: "result", frameBye: "bye"}

// Payload bounds of the frames whose size does not depend on the model.
const (
	maxHello   = 64 << 10 // a Hello's JSON: a few hundred bytes
	maxWelcome = 16 << 20 // the plan, the NCCL id and every rank's Hello
	maxAbort   = 4 << 10  // an error line
	maxCommand = 64 << 10 // a batch's shape (model: 24 bytes)
	// DefaultMaxResult is Config.MaxResult's default: the logits of a batch of 512 rows
	// of a 32000-token vocabulary.
	DefaultMaxResult = 4 * 512 * 32000
)

// frameLimits is what one side of a connection accepts at one point of the protocol:
// the kinds it expects and the largest payload of each. A frame of another kind, or
// longer, is refused from its header, before any of its payload is read.
type frameLimits struct {
	when string               // for errors: "before the hello", ...
	ok   [frameBye + 1]bool   // kinds expected
	max  [frameBye + 1]uint32 // their largest payloads
}

// limits returns frameLimits accepting the kinds of kindMax, each up to its bound.
func limits(when string, kindMax map[byte]int) *frameLimits {
	l := &frameLimits{when: when}
	for k, n := range kindMax {
		l.ok[k], l.max[k] = true, uint32(min(n, math.MaxUint32))
	}
	return l
}

// The limits of each phase: rank 0 reading a joining rank's first frame, a follower
// waiting for the plan, and either side after the start.
var (
	helloLimits   = limits("before the hello", map[byte]int{frameHello: maxHello})
	welcomeLimits = limits("while waiting for the plan", map[byte]int{frameWelcome: maxWelcome, frameAbort: maxAbort})
	// followerLimits is what a follower reads from rank 0 during the run.
	followerLimits = limits("from rank 0", map[byte]int{frameAbort: maxAbort, frameHeartbeat: 0, frameCommand: maxCommand, frameBye: 0})
)

// rank0Limits is what rank 0 reads from a follower during the run: results up to
// maxResult bytes.
func rank0Limits(maxResult int) *frameLimits {
	return limits("from a rank", map[byte]int{frameAbort: maxAbort, frameHeartbeat: 0, frameResult: maxResult})
}

// sendLimits is what either side may send over a connection's life; writeFrame refuses
// anything else, so a frame the peer would refuse fails where it is made.
func sendLimits(maxResult int) *frameLimits {
	return limits("to send", map[byte]int{frameHello: maxHello, frameWelcome: maxWelcome, frameAbort: maxAbort,
		frameHeartbeat: 0, frameCommand: maxCommand, frameResult: maxResult, frameBye: 0})
}

// frameError is a frame refused for its kind or size.
type frameError struct{ msg string }

func (e *frameError) Error() string { return e.msg }

// check reports a frame header that l does not accept.
func (l *frameLimits) check(kind byte, n uint64) error {
	if int(kind) >= len(l.ok) || !l.ok[kind] {
		return &frameError{fmt.Sprintf("unexpected frame %s (kind %d, %d bytes): not an infer peer, or another version of the protocol", l.when, kind, n)}
	}
	if n > uint64(l.max[kind]) {
		msg := fmt.Sprintf("%s frame of %d bytes %s, over its limit of %d bytes", article(frameNames[kind]), n, l.when, l.max[kind])
		if kind == frameResult {
			msg += " (Config.MaxResult: model.RankResultBytes gives a model's, 4 bytes x vocabulary x batch)"
		}
		return &frameError{msg}
	}
	return nil
}

// abortPayload is an abort frame's payload: text, cut to maxAbort bytes.
func abortPayload(text string) []byte {
	if len(text) > maxAbort {
		text = text[:maxAbort-3] + "..."
	}
	return []byte(text)
}

// writeFrame writes one frame: kind, payload length (uint32 little endian), payload. It
// refuses a kind or a size that lim does not accept.
func writeFrame(w io.Writer, lim *frameLimits, kind byte, payload []byte) error {
	if err := lim.check(kind, uint64(len(payload))); err != nil {
		return err
	}
	var hdr [5]byte
	hdr[0] = kind
	binary.LittleEndian.PutUint32(hdr[1:], uint32(len(payload)))
	if _, err := w.Write(hdr[:]); err != nil {
		return err
	}
	_, err := w.Write(payload)
	return err
}

// eagerPayload is how much of a payload readFrame allocates before the bytes arrive;
// a longer one grows (doubling) as they do, so that a peer claiming a large frame and
// sending little costs little memory.
const eagerPayload = 64 << 10

// readFrame reads one frame that lim accepts.
func readFrame(r io.Reader, lim *frameLimits) (kind byte, payload []byte, err error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := int(binary.LittleEndian.Uint32(hdr[1:]))
	if err := lim.check(hdr[0], uint64(n)); err != nil {
		return 0, nil, err
	}
	payload = make([]byte, min(n, eagerPayload))
	for read := 0; ; {
		m, err := io.ReadFull(r, payload[read:])
		if read += m; err != nil {
			return 0, nil, fmt.Errorf("dist: %s frame cut short at %d of %d bytes: %w", article(frameNames[hdr[0]]), read, n, err)
		}
		if read == n {
			return hdr[0], payload, nil
		}
		payload = append(payload, make([]byte, min(n-read, read))...)
	}
}

// article is "a name" or "an name".
func article(name string) string {
	if name != "" && strings.ContainsRune("aeiou", rune(name[0])) {
		return "an " + name
	}
	return "a " + name
}
