// Command hostpathplugin stands in for the proxy mode of
// registry.k8s.io/sig-storage/hostpathplugin, the image upstream's DRA e2e
// specs (test/e2e/dra) run on every node: e2e.test execs
//
//	/hostpathplugin --endpoint=<socket> --proxy-endpoint=tcp://:<port>
//
// in the pod, so that a Unix socket the kubelet dials (plugin registration,
// the DRA gRPC service) reaches the driver running inside e2e.test. It
// listens on both, takes a connection from the socket, pairs it with the
// next connection on the TCP port (e2e.test keeps port-forwarded
// connections waiting there) and copies bytes both ways until either side
// closes. The image of csi-driver-host-path cannot be pulled offline and its
// module is not served; only this mode is used by the specs.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	endpoint := flag.String("endpoint", "", "the socket the kubelet connects to (a path, unix://path or tcp://addr)")
	proxyEndpoint := flag.String("proxy-endpoint", "", "where the other side's connections wait (tcp://addr)")
	flag.Int("v", 0, "log verbosity (accepted, not used)")
	flag.Parse()
	if *endpoint == "" || *proxyEndpoint == "" {
		fmt.Fprintln(os.Stderr, "hostpathplugin: this stand-in has only the proxy mode: --endpoint and --proxy-endpoint are required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *endpoint, *proxyEndpoint); err != nil {
		log.Fatalf("hostpathplugin: %v", err)
	}
}

// run proxies until ctx is done; the listening sockets are removed then.
func run(ctx context.Context, endpoint, proxyEndpoint string) error {
	a, err := listen(endpoint)
	if err != nil {
		return err
	}
	defer a.Close()
	b, err := listen(proxyEndpoint)
	if err != nil {
		return err
	}
	defer b.Close()
	log.Printf("hostpathplugin: proxying %s and %s", endpoint, proxyEndpoint)
	go func() {
		<-ctx.Done()
		a.Close()
		b.Close()
	}()
	return pair(a, b)
}

// pair accepts a connection on a, then one on b, and joins them, until a
// listener is closed.
func pair(a, b net.Listener) error {
	for {
		ca, err := a.Accept()
		if err != nil {
			return closed(err)
		}
		cb, err := b.Accept()
		if err != nil {
			ca.Close()
			return closed(err)
		}
		go pipe(ca, cb)
		go pipe(cb, ca)
	}
}

// pipe copies from into to, then closes to: the other side learns that
// nothing more comes.
func pipe(from, to net.Conn) {
	defer to.Close()
	_, _ = io.Copy(to, from)
}

func closed(err error) error {
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// listen opens an endpoint as csi-driver-host-path parses it: unix:// or
// tcp:// URLs, anything else a socket path; a stale socket is replaced.
func listen(endpoint string) (net.Listener, error) {
	network, addr := "unix", endpoint
	if scheme, rest, ok := strings.Cut(endpoint, "://"); ok {
		switch strings.ToLower(scheme) {
		case "unix", "tcp":
			network, addr = strings.ToLower(scheme), rest
		default:
			return nil, fmt.Errorf("endpoint %q: unknown scheme %q", endpoint, scheme)
		}
	}
	if addr == "" {
		return nil, fmt.Errorf("endpoint %q: no address", endpoint)
	}
	if network == "unix" {
		if err := os.Remove(addr); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	return net.Listen(network, addr)
}
