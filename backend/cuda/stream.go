package cuda

/*
#include "driver.h"
*/
import "C"

import (
	"fmt"
	"time"
)

// Event marks a point in a device's stream, for ordering work between streams and
// devices and for timing.
type Event struct {
	dev *Device
	e   C.CUevent
}

// NewEvent creates an event with timing enabled.
func (d *Device) NewEvent() (*Event, error) {
	ev := &Event{dev: d}
	err := d.do(func() error { return check("cuEventCreate", C.cu_event_create(&ev.e, 0)) })
	if err != nil {
		return nil, fmt.Errorf("cuda: new event on %s: %w", d.name, err)
	}
	return ev, nil
}

// Record enqueues the event on its device's stream.
func (ev *Event) Record() error {
	d := ev.dev
	return d.do(func() error { return check("cuEventRecord", C.cu_event_record(ev.e, d.stream)) })
}

// Wait makes d's stream wait for ev (recorded on any device) before later work.
func (d *Device) Wait(ev *Event) error {
	return d.do(func() error { return check("cuStreamWaitEvent", C.cu_stream_wait_event(d.stream, ev.e, 0)) })
}

// Synchronize blocks until the work before the event's last Record is done.
func (ev *Event) Synchronize() error {
	return ev.dev.do(func() error { return check("cuEventSynchronize", C.cu_event_synchronize(ev.e)) })
}

// Since returns the device time between start and ev, both recorded and completed.
func (ev *Event) Since(start *Event) (time.Duration, error) {
	var ms C.float
	err := ev.dev.do(func() error { return check("cuEventElapsedTime", C.cu_event_elapsed_time(&ms, start.e, ev.e)) })
	return time.Duration(float64(ms) * float64(time.Millisecond)), err
}

// Close destroys the event.
func (ev *Event) Close() error {
	return ev.dev.do(func() error { return check("cuEventDestroy_v2", C.cu_event_destroy(ev.e)) })
}
