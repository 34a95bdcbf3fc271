package dist_test

import (
	"context"
	"fmt"
	"net"
	"sync"

	"github.com/infergo/infer/dist"
)

// Two ranks in one process: rank 0 listens, rank 1 dials, rank 0's setup makes the
// plan from both Hellos, and each rank receives it; then rank 0 sends a command, rank
// 1 answers, and rank 0 ends the run.
func ExampleJoin() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	file := dist.FileID{Size: 1, HeaderHash: "same on every rank"}
	setup := func(hs []dist.Hello) ([]byte, []byte, error) {
		return fmt.Appendf(nil, "stage 0 on %s, stage 1 on %s", hs[0].Device, hs[1].Device), nil, nil
	}
	groups := make([]*dist.Group, 2)
	var wg sync.WaitGroup
	for r := range 2 {
		cfg := dist.Config{World: 2, Rank: r, Addr: ln.Addr().String()}
		if r == 0 {
			cfg.Listener = ln
		}
		wg.Go(func() {
			g, err := dist.Join(context.Background(), cfg, dist.Hello{File: file, Device: fmt.Sprintf("gpu%d", r)}, setup)
			if err != nil {
				panic(err)
			}
			groups[r] = g
		})
	}
	wg.Wait()
	fmt.Printf("rank 1 got the plan: %s\n", groups[1].Welcome().Plan)

	groups[0].Broadcast([]byte("batch 1"))
	cmd, _ := groups[1].Command(context.Background())
	groups[1].SendResult(append(cmd, " done"...))
	res, _ := groups[0].Result()
	fmt.Printf("rank 0 got: %s\n", res)

	groups[0].Close()
	_, err = groups[1].Command(context.Background())
	fmt.Println(err)
	// Output:
	// rank 1 got the plan: stage 0 on gpu0, stage 1 on gpu1
	// rank 0 got: batch 1 done
	// dist: the run is over
}
