package node

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
)

// Packages are the Debian packages the node needs, by a file each installs.
var Packages = map[string]string{
	"containerd":                  "/usr/bin/containerd",
	"runc":                        "/usr/sbin/runc",
	"containernetworking-plugins": "/usr/lib/cni/bridge",
	"iptables":                    "/usr/sbin/iptables",
	"conntrack":                   "/usr/sbin/conntrack",
	"busybox-static":              "/bin/busybox",
	// The agnhost image's curl and nc (upstream's image is Alpine with
	// both; conformance specs run `curl` and `nc -v -t` in it).
	"curl":           "/usr/bin/curl",
	"netcat-openbsd": "/bin/nc.openbsd",
	// dig, in the agnhost and glibc-dns-testing images: the DNS specs
	// probe with it.
	"bind9-dnsutils": "/usr/bin/dig",
}

// CNIBinDir is where Debian's containernetworking-plugins installs.
const CNIBinDir = "/usr/lib/cni"

// EnsurePackages installs with apt-get those of Packages that are missing.
func EnsurePackages(logf func(string, ...any)) error {
	var missing []string
	for pkg, file := range Packages {
		if _, err := os.Stat(file); err != nil {
			missing = append(missing, pkg)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	logf("node: installing Debian packages %v", missing)
	if out, err := exec.Command("apt-get", "update", "-qq").CombinedOutput(); err != nil {
		return fmt.Errorf("apt-get update: %w: %s", err, out)
	}
	cmd := exec.Command("apt-get", append([]string{"install", "-y", "--no-install-recommends"}, missing...)...)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("apt-get install: %w: %s", err, out)
	}
	return nil
}

// LinkName is the link New creates to carry the node's address
// (Config.IP) and Cleanup removes, also after a killed run: the address is
// the node's InternalIP and the one the apiserver advertises, so that pods
// reach the apiserver through the kubernetes Service. No address the machine
// had before the run is used.
const LinkName = "kcm-e2e0"

// DefaultIP is the node's address when Config.IP is empty: a private address
// no other interface should carry, a /32 on LinkName.
const DefaultIP = "172.31.251.1"

// addLink creates LinkName with ip/32 and sets it up. The link is a dummy,
// or an ifb where the kernel has no dummy driver (this machine's has none):
// both only drop what is sent through them, so the address is reachable
// from this machine alone. It returns the link's type.
func addLink(ip string) (string, error) {
	if net.ParseIP(ip).To4() == nil {
		return "", fmt.Errorf("node: address %q is not IPv4", ip)
	}
	if on, err := interfaceWith(ip); err != nil {
		return "", err
	} else if on != "" {
		return "", fmt.Errorf("node: %s is already on %s; choose another Config.IP", ip, on)
	}
	kind := "dummy"
	if _, err := run("ip", "link", "add", LinkName, "type", kind); err != nil {
		if !strings.Contains(err.Error(), "Unknown device type") {
			return "", err
		}
		kind = "ifb"
		if _, err := run("ip", "link", "add", LinkName, "type", kind); err != nil {
			return "", err
		}
	}
	if _, err := run("ip", "addr", "add", ip+"/32", "dev", LinkName); err != nil {
		return kind, err
	}
	_, err := run("ip", "link", "set", LinkName, "up")
	return kind, err
}

// interfaceWith names the interface that carries ip, "" if none does.
func interfaceWith(ip string) (string, error) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return "", err
	}
	for _, i := range ifaces {
		addrs, err := i.Addrs()
		if err != nil {
			return "", err
		}
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.String() == ip {
				return i.Name, nil
			}
		}
	}
	return "", nil
}
