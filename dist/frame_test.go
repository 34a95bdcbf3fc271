package dist

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"
)

// header is a frame header claiming n payload bytes of kind.
func header(kind byte, n uint32) []byte {
	h := []byte{kind, 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(h[1:], n)
	return h
}

func TestReadFrameLimits(t *testing.T) {
	results := rank0Limits(1000)
	tests := []struct {
		name    string
		lim     *frameLimits
		in      []byte
		kind    byte
		n       int
		wantErr string
	}{
		{"hello", helloLimits, append(header(frameHello, 2), "{}"...), frameHello, 2, ""},
		{"hello at its limit", helloLimits, append(header(frameHello, maxHello), make([]byte, maxHello)...), frameHello, maxHello, ""},
		{"hello over its limit", helloLimits, header(frameHello, maxHello+1), 0, 0, "a hello frame of 65537 bytes before the hello, over its limit of 65536"},
		{"huge claim before the hello", helloLimits, header(frameHello, math.MaxUint32), 0, 0, "over its limit"},
		{"command before the hello", helloLimits, header(frameCommand, 1), 0, 0, "unexpected frame before the hello (kind 5"},
		{"http request", helloLimits, []byte("GET / HTTP/1.1\r\n\r\n"), 0, 0, "unexpected frame before the hello (kind 71"},
		{"kind 0", helloLimits, header(0, 0), 0, 0, "(kind 0, 0 bytes)"},
		{"kind past the last", welcomeLimits, header(frameBye+1, 0), 0, 0, "unexpected frame while waiting for the plan"},
		{"abort while waiting", welcomeLimits, append(header(frameAbort, 3), "why"...), frameAbort, 3, ""},
		{"long abort", welcomeLimits, header(frameAbort, maxAbort+1), 0, 0, "an abort frame of 4097 bytes"},
		{"welcome over 16 MiB", welcomeLimits, header(frameWelcome, maxWelcome+1), 0, 0, "a welcome frame of 16777217 bytes"},
		{"result", results, append(header(frameResult, 4), 1, 2, 3, 4), frameResult, 4, ""},
		{"result over the plan's", results, header(frameResult, 1001), 0, 0, "a result frame of 1001 bytes from a rank, over its limit of 1000 bytes"},
		{"command to rank 0", results, header(frameCommand, 24), 0, 0, "unexpected frame from a rank"},
		{"result to a follower", followerLimits, header(frameResult, 4), 0, 0, "unexpected frame from rank 0"},
		{"heartbeat with a payload", followerLimits, header(frameHeartbeat, 1), 0, 0, "a heartbeat frame of 1 bytes"},
		{"bye", followerLimits, header(frameBye, 0), frameBye, 0, ""},
		{"cut header", followerLimits, []byte{frameBye, 0}, 0, 0, "unexpected EOF"},
		{"cut payload", followerLimits, append(header(frameCommand, 24), 1, 2), 0, 0, "a command frame cut short at 2 of 24 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind, payload, err := readFrame(bytes.NewReader(tt.in), tt.lim)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("err %v, want one line with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || kind != tt.kind || len(payload) != tt.n || !bytes.Equal(payload, tt.in[5:]) {
				t.Fatalf("kind %d, %d bytes, %v; want kind %d, %d bytes", kind, len(payload), err, tt.kind, tt.n)
			}
		})
	}
}

func TestWriteFrameLimits(t *testing.T) {
	lim := sendLimits(100)
	tests := []struct {
		kind    byte
		n       int
		wantErr string
	}{
		{frameResult, 100, ""},
		{frameResult, 101, "a result frame of 101 bytes to send, over its limit of 100 bytes (Config.MaxResult: model.RankResultBytes"},
		{frameCommand, maxCommand + 1, "a command frame of 65537 bytes"},
		{frameHeartbeat, 1, "a heartbeat frame of 1 bytes"},
		{0, 0, "unexpected frame to send (kind 0"},
		{frameBye + 1, 0, "unexpected frame to send (kind 8"},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		err := writeFrame(&buf, lim, tt.kind, make([]byte, tt.n))
		if tt.wantErr == "" {
			if err != nil || buf.Len() != 5+tt.n {
				t.Errorf("kind %d, %d bytes: %v, %d bytes written", tt.kind, tt.n, err, buf.Len())
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("kind %d, %d bytes: %v, want %q", tt.kind, tt.n, err, tt.wantErr)
		}
		if buf.Len() != 0 {
			t.Errorf("kind %d, %d bytes: %d bytes written before the refusal", tt.kind, tt.n, buf.Len())
		}
	}
	if p := abortPayload(strings.Repeat("x", 10*maxAbort)); len(p) != maxAbort || writeFrame(io.Discard, lim, frameAbort, p) != nil {
		t.Errorf("a long abort text: %d bytes", len(p))
	}
}

// TestReadFrameAllocatesWhatArrives: a peer claiming a frame of 1 GiB (within the
// limit) and sending 100 bytes costs about the eager allocation, not the claim.
func TestReadFrameAllocatesWhatArrives(t *testing.T) {
	lim := rank0Limits(math.MaxUint32)
	in := append(header(frameResult, 1<<30), make([]byte, 100)...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err := readFrame(bytes.NewReader(in), lim)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "cut short at 100 of 1073741824 bytes") {
		t.Fatalf("err %v", err)
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 4*eagerPayload {
		t.Errorf("allocated %d bytes for a claim of 1 GiB that sent 100", d)
	}
	// A large frame that does arrive is read whole, whatever the growth steps.
	want := make([]byte, 5*eagerPayload+123)
	for i := range want {
		want[i] = byte(i * 7)
	}
	_, got, err := readFrame(bytes.NewReader(append(header(frameResult, uint32(len(want))), want...)), lim)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("large frame: %d bytes, %v", len(got), err)
	}
}

// FuzzReadFrame feeds hostile bytes to every phase's reader: no panic, and a frame that
// is accepted has an expected kind, its claimed length, and at most its limit.
func FuzzReadFrame(f *testing.F) {
	f.Add(append(header(frameHello, 2), "{}"...))
	f.Add(header(frameResult, math.MaxUint32))
	f.Add(append(header(frameResult, 1<<31), 1, 2, 3))
	f.Add([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	f.Add(append(header(frameAbort, 5), "error"...))
	f.Add([]byte{})
	all := []*frameLimits{helloLimits, welcomeLimits, followerLimits, rank0Limits(1 << 20)}
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, lim := range all {
			kind, payload, err := readFrame(bytes.NewReader(in), lim)
			if err != nil {
				if strings.Contains(err.Error(), "\n") {
					t.Fatalf("error of several lines: %q", err)
				}
				continue
			}
			if !lim.ok[kind] || uint64(len(payload)) > uint64(lim.max[kind]) ||
				int(binary.LittleEndian.Uint32(in[1:])) != len(payload) || !bytes.Equal(payload, in[5:5+len(payload)]) {
				t.Fatalf("%s: accepted kind %d of %d bytes from %x", lim.when, kind, len(payload), in)
			}
		}
	})
}

// TestHostileFollower: a process that joins with a valid hello and then claims a result
// of 2 GiB fails rank 0 with one line about the bad frame, at once, not after reading.
func TestHostileFollower(t *testing.T) {
	cfg, ln := testConfig(t, 2)
	cfg.MaxResult = 1 << 20
	type joined struct {
		g   *Group
		err error
	}
	done := make(chan joined, 1)
	go func() {
		c := cfg
		c.Listener = ln
		g, err := Join(t.Context(), c, sameFile(0), func([]Hello) ([]byte, []byte, error) { return nil, nil, nil })
		done <- joined{g, err}
	}()
	conn, err := net.Dial("tcp", cfg.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	h := sameFile(1)
	h.Version, h.World, h.Rank = Version, 2, 1
	msg, _ := json.Marshal(h)
	if err := writeFrame(conn, sendLimits(0), frameHello, msg); err != nil {
		t.Fatal(err)
	}
	if kind, _, err := readFrameBy(conn, time.Now().Add(5*time.Second), welcomeLimits); err != nil || kind != frameWelcome {
		t.Fatalf("welcome: kind %d, %v", kind, err)
	}
	j := <-done
	if j.err != nil {
		t.Fatal(j.err)
	}
	defer j.g.Close()
	conn.Write(header(frameResult, 1<<31))
	_, err = j.g.Result()
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "a bad frame from rank 1: a result frame of 2147483648 bytes from a rank, over its limit of 1048576 bytes") {
		t.Fatalf("rank 0: %v", err)
	}
	// The hostile side is told why.
	if kind, payload, _ := readFrameBy(conn, time.Now().Add(5*time.Second), followerLimits); kind != frameAbort || !strings.Contains(string(payload), "bad frame") {
		t.Errorf("the hostile peer got kind %d %q", kind, payload)
	}
}

// TestCommandOverLimitFailsTheSender: a command too long for the protocol fails
// Broadcast at once with one line, not as a lost peer after the lost interval.
func TestCommandOverLimitFailsTheSender(t *testing.T) {
	cfg, ln := testConfig(t, 2)
	gs, errs := joinAll(t.Context(), cfg, ln, sameFile)
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	defer gs[1].Close()
	defer gs[0].Close()
	start := time.Now()
	err := gs[0].Broadcast(make([]byte, maxCommand+1))
	if err == nil || !strings.Contains(err.Error(), "a command frame of 65537 bytes to send") || time.Since(start) > cfg.Heartbeat {
		t.Fatalf("Broadcast: %v after %v", err, time.Since(start))
	}
}
