package dist

import (
	"encoding/binary"
	"fmt"
	"io"
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

// maxFrame bounds a frame's payload (a batch of logits is the largest).
const maxFrame = 1 << 31

// writeFrame writes one frame: kind, payload length (uint32 little endian), payload.
func writeFrame(w io.Writer, kind byte, payload []byte) error {
	var hdr [5]byte
	hdr[0] = kind
	binary.LittleEndian.PutUint32(hdr[1:], uint32(len(payload)))
	if _, err := w.Write(hdr[:]); err != nil {
		return err
	}
	_, err := w.Write(payload)
	return err
}

// readFrame reads one frame.
func readFrame(r io.Reader) (kind byte, payload []byte, err error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.LittleEndian.Uint32(hdr[1:])
	if hdr[0] < frameHello || hdr[0] > frameBye || uint64(n) > maxFrame {
		return 0, nil, fmt.Errorf("bad frame (kind %d, %d bytes): not an infer peer", hdr[0], n)
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		return 0, nil, err
	}
	return hdr[0], payload, nil
}
