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

// HostIP is the IPv4 address of the interface of the default route: the
// node's InternalIP and the address the apiserver advertises, so that pods
// reach it through the kubernetes Service.
func HostIP() (string, error) {
	out, err := run("ip", "-4", "route", "get", "1.1.1.1")
	if err != nil {
		return "", err
	}
	f := strings.Fields(out)
	for i := 0; i+1 < len(f); i++ {
		if f[i] == "src" && net.ParseIP(f[i+1]) != nil {
			return f[i+1], nil
		}
	}
	return "", fmt.Errorf("node: no source address in %q", out)
}
