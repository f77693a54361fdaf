package cluster

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// Ports are the TCP ports, all on 127.0.0.1, a Cluster listens on.
type Ports struct {
	EtcdClient, EtcdPeer int
	APIServer            int
	Scheduler            int
	ControllerManager    int
	Kwok                 int
	// CloudControllerManager is reserved even when none runs.
	CloudControllerManager int
}

// Port search bounds: from minPort up to the kernel's ephemeral range.
const (
	minPort             = 10000
	defaultEphemeralLow = 32768
	portAttempts        = 2000
)

// allocatePorts picks n distinct ports that are free on 127.0.0.1, at random
// below the kernel's ephemeral port range: the kernel never hands those out
// to outgoing connections, so a port stays free while a process using it is
// restarted. The listeners are held until all ports are found.
func allocatePorts(n int) ([]int, error) {
	hi := ephemeralLow()
	if hi < minPort+1000 {
		hi = 65535 // no room below the ephemeral range: take any port
	}
	var (
		ports     []int
		listeners []net.Listener
	)
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	for attempt := 0; len(ports) < n && attempt < portAttempts; attempt++ {
		p := minPort + rand.IntN(hi-minPort)
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue // in use (or just taken by our own earlier pick)
		}
		listeners = append(listeners, l)
		ports = append(ports, p)
	}
	if len(ports) < n {
		return nil, errors.New("cluster: could not find enough free ports on 127.0.0.1")
	}
	return ports, nil
}

// ephemeralLow returns the first port of the kernel's ephemeral range.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return defaultEphemeralLow
	}
	fields := strings.Fields(string(b))
	if len(fields) == 0 {
		return defaultEphemeralLow
	}
	low, err := strconv.Atoi(fields[0])
	if err != nil {
		return defaultEphemeralLow
	}
	return low
}

// pickAdvertiseAddress returns the first candidate private address that no
// local interface carries: kube-apiserver refuses a loopback
// --advertise-address, and only writes this one into the kubernetes Service's
// endpoints.
func pickAdvertiseAddress() (string, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return "", fmt.Errorf("cluster: list interface addresses: %w", err)
	}
	inUse := map[string]bool{}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			inUse[n.IP.String()] = true
		}
	}
	for _, c := range []string{"172.18.0.1", "172.31.255.1", "10.255.255.1", "192.168.255.1"} {
		if !inUse[c] {
			return c, nil
		}
	}
	return "", errors.New("cluster: every candidate advertise address is in use; set Options.AdvertiseAddress")
}
