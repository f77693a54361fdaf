package node

import (
	"context"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// RunContext is the context of a real-node run (e2e-node, e2e-kubeadm):
// done after timeout or at the first SIGINT or SIGTERM. Further signals are
// logged and ignored, so that the caller's teardown, which runs after the
// context is done, is not cut short.
func RunContext(name string, timeout time.Duration) (context.Context, context.CancelFunc) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	go func() {
		s := <-sigs
		log.Printf("%s: %v: stopping and tearing down", name, s)
		cancel()
		for s := range sigs {
			log.Printf("%s: %v ignored until the teardown is done", name, s)
		}
	}()
	return ctx, cancel
}
