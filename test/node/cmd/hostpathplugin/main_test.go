package main

import (
	"bufio"
	"net"
	"path/filepath"
	"testing"
	"time"
)

// A connection to the socket is joined with the next one waiting on the
// TCP port, both ways, one pair at a time.
func TestProxyPairs(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "dra.sock")
	a, err := listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	b, err := listen("tcp://127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- pair(a, b) }()

	dial := func(network, addr string) net.Conn {
		t.Helper()
		c, err := net.Dial(network, addr)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for i := range 2 {
		// e2e.test's side waits first, as its port-forwarded connections do.
		server := dial("tcp", b.Addr().String())
		kubelet := dial("unix", sock)
		if _, err := kubelet.Write([]byte("ping\n")); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(server).ReadString('\n')
		if err != nil || line != "ping\n" {
			t.Fatalf("pair %d: server read %q, %v", i, line, err)
		}
		if _, err := server.Write([]byte("pong\n")); err != nil {
			t.Fatal(err)
		}
		line, err = bufio.NewReader(kubelet).ReadString('\n')
		if err != nil || line != "pong\n" {
			t.Fatalf("pair %d: kubelet read %q, %v", i, line, err)
		}
		// Closing one side closes the other.
		kubelet.Close()
		if err := server.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
			t.Fatal(err)
		}
		if _, err := server.Read(make([]byte, 1)); err == nil {
			t.Fatalf("pair %d: server side still open after the kubelet closed", i)
		}
		server.Close()
	}
	a.Close()
	b.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("pair did not return once its listeners closed")
	}
}

func TestListenRejects(t *testing.T) {
	for _, ep := range []string{"http://x", "tcp://", "unix://"} {
		if l, err := listen(ep); err == nil {
			l.Close()
			t.Errorf("%s: listened", ep)
		}
	}
}
