package node

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"debug/elf"
	"encoding/pem"
	"fmt"
	"maps"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kcm-dev/kcm/test/node/image"
)

// Image names, as kubeadm v1.37 and upstream's e2e.test v1.37 expect them.
const (
	PauseImage   = "registry.k8s.io/pause:3.10.2"
	AgnhostImage = "registry.k8s.io/e2e-test-images/agnhost:2.66.1"
	// AgnhostPrevImage is the agnhost version the StatefulSet specs run
	// (its test-webserver); the same image here.
	AgnhostPrevImage = "registry.k8s.io/e2e-test-images/agnhost:2.55"
	BusyBoxImage     = "registry.k8s.io/e2e-test-images/busybox:1.37.0-2"
	CoreDNSImage     = "registry.k8s.io/coredns/coredns:v1.14.6"
	KubeProxyImage   = "registry.k8s.io/kube-proxy:v1.37.1"
	// NginxImage and NginxNewImage are e2e.test's web servers (its
	// imageutils.Nginx and NginxNew), here stand-ins.
	NginxImage    = "registry.k8s.io/e2e-test-images/nginx:1.27.0-2"
	NginxNewImage = "registry.k8s.io/e2e-test-images/nginx:1.28.0-2"
	// GlibcDNSImage is the DNS specs' glibc prober (imageutils.GlibcDnsTesting).
	GlibcDNSImage = "registry.k8s.io/e2e-test-images/glibc-dns-testing:2.1.1"
	// HostPathPluginImage is the image upstream's DRA specs run on each node
	// (the newest hostpathplugin of e2e.test's storage-csi manifests): a
	// shell and cmd/hostpathplugin, the stand-in for its proxy mode.
	HostPathPluginImage = "registry.k8s.io/sig-storage/hostpathplugin:v1.17.1"
)

// HostPathPluginBinary is cmd/hostpathplugin in the binary directory (the
// make targets of the real nodes build it).
const HostPathPluginBinary = "hostpathplugin"

// Binaries of BinDir the images and the node are made of (hack/tools/build.sh
// builds each when named).
var NodeBinaries = []string{"kubelet", "kube-proxy", "agnhost", "coredns", "pause"}

// Images are the images a node imports, built from binaries in binDir and
// Debian packages of this machine.
func Images(binDir string) ([]image.Image, error) {
	bin := func(n string) string { return filepath.Join(binDir, n) }
	busybox, err := busyboxFiles("/bin")
	if err != nil {
		return nil, err
	}
	iptables, err := iptablesFiles()
	if err != nil {
		return nil, err
	}
	tools, err := agnhostTools()
	if err != nil {
		return nil, err
	}
	dns, err := dnsTools()
	if err != nil {
		return nil, err
	}
	crt, key, err := localhostCert()
	if err != nil {
		return nil, err
	}
	if err := requireStatic(bin(HostPathPluginBinary)); err != nil {
		return nil, fmt.Errorf("node: %w (CGO_ENABLED=0 go build -o %s ./test/node/cmd/hostpathplugin)", err, bin(HostPathPluginBinary))
	}
	// Upstream's agnhost image is Alpine with a shell and tools; busybox
	// stands in for those, and the host's curl and nc (netcat-openbsd) for
	// Alpine's, which busybox's applets cannot replace (`nc -v -t`). Its
	// /localhost.crt and .key are porter's TLS pair; the StatefulSet specs
	// probe test-webserver for /localhost.crt and break the probe by
	// moving it away.
	agnhost := func(name string) image.Image {
		return image.Image{
			Name: name,
			Files: append(append([]image.File{
				{Path: "/agnhost", Source: bin("agnhost")},
				{Path: "/agnhost-2", Link: "agnhost"},
				{Path: "/tmp/.keep", Data: nil},
				{Path: "/localhost.crt", Data: crt},
				{Path: "/localhost.key", Data: key, Mode: 0o600},
			}, withoutShell(busybox)...), append(tools, dns...)...),
			Entrypoint: []string{"/agnhost"}, Cmd: []string{"pause"},
		}
	}
	// The nginx images stand in for upstream's (the specs need a web
	// server on port 80 that serves /index.html, and a shell): busybox's
	// httpd on nginx's document root, run as nginx runs, in the
	// foreground as root.
	nginx := func(name string) image.Image {
		return image.Image{
			Name: name,
			Files: append([]image.File{
				{Path: "/usr/share/nginx/html/index.html", Data: []byte("<!DOCTYPE html>\n<html><body><h1>Welcome to nginx!</h1></body></html>\n"), Mode: 0o644},
				{Path: "/tmp/.keep"},
			}, busybox...),
			Entrypoint: []string{"/bin/httpd", "-f", "-p", "80", "-h", "/usr/share/nginx/html"},
		}
	}
	return []image.Image{
		{Name: PauseImage, Files: []image.File{{Path: "/pause", Source: bin("pause")}}, Entrypoint: []string{"/pause"}},
		agnhost(AgnhostImage), agnhost(AgnhostPrevImage),
		{Name: BusyBoxImage, Files: append([]image.File{{Path: "/tmp/.keep"}}, busybox...), Cmd: []string{"sh"}},
		nginx(NginxImage), nginx(NginxNewImage),
		// The glibc prober: the host's glibc getent and dig beside
		// busybox's shell and applets (upstream's is Debian with dnsutils).
		{Name: GlibcDNSImage, Files: append(append([]image.File{
			{Path: "/tmp/.keep"},
			{Path: "/etc/nsswitch.conf", Data: []byte("hosts: files dns\n"), Mode: 0o644},
		}, busybox...), dns...), Cmd: []string{"sh"}},
		{Name: HostPathPluginImage, Files: append([]image.File{
			{Path: "/hostpathplugin", Source: bin(HostPathPluginBinary)},
			{Path: "/tmp/.keep"},
		}, busybox...), Entrypoint: []string{"/hostpathplugin"}},
		{Name: CoreDNSImage, Files: []image.File{{Path: "/coredns", Source: bin("coredns")}}, Entrypoint: []string{"/coredns"}},
		{Name: KubeProxyImage, Files: append([]image.File{{Path: "/usr/local/bin/kube-proxy", Source: bin("kube-proxy")}}, iptables...)},
	}, nil
}

// withoutShell is files without /bin/sh: Debian's busybox shell runs its
// own applets before any program in PATH (it is built "standalone"), so
// that `sh -c 'nc -v …'` would never reach the image's nc.
func withoutShell(files []image.File) []image.File {
	return slices.DeleteFunc(slices.Clone(files), func(f image.File) bool { return f.Path == "/bin/sh" })
}

// busyboxFiles is Debian's static busybox at dir/busybox and a link to it
// for each of its applets, plus the files a shell image has.
func busyboxFiles(dir string) ([]image.File, error) {
	out, err := exec.Command("/bin/busybox", "--list").Output()
	if err != nil {
		return nil, fmt.Errorf("node: busybox --list: %w (package busybox-static)", err)
	}
	files := []image.File{
		{Path: dir + "/busybox", Source: "/bin/busybox"},
		{Path: "/etc/passwd", Data: []byte("root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n")},
		{Path: "/etc/group", Data: []byte("root:x:0:\nnobody:x:65534:\n")},
	}
	for _, a := range strings.Fields(string(out)) {
		if a != "busybox" {
			files = append(files, image.File{Path: dir + "/" + a, Link: "busybox"})
		}
	}
	return files, nil
}

// iptablesFiles is the host's iptables (nft backend, the one kube-proxy
// shares the tables with), conntrack, their extensions and every shared
// library they load, at the paths they have on the host.
func iptablesFiles() ([]image.File, error) {
	multi, err := filepath.EvalSymlinks("/usr/sbin/iptables-nft")
	if err != nil {
		return nil, fmt.Errorf("node: iptables-nft: %w (package iptables)", err)
	}
	files := []image.File{{Path: "/usr/sbin/xtables-nft-multi", Source: multi}}
	for _, n := range []string{"iptables", "iptables-save", "iptables-restore", "ip6tables", "ip6tables-save", "ip6tables-restore",
		"iptables-nft", "iptables-nft-save", "iptables-nft-restore", "ip6tables-nft", "ip6tables-nft-save", "ip6tables-nft-restore"} {
		files = append(files, image.File{Path: "/usr/sbin/" + n, Link: "xtables-nft-multi"})
	}
	elfs := []string{multi, "/usr/sbin/conntrack"}
	files = append(files, image.File{Path: "/usr/sbin/conntrack", Source: "/usr/sbin/conntrack"})
	ext, _ := filepath.Glob("/usr/lib/x86_64-linux-gnu/xtables/*.so")
	for _, e := range ext {
		files = append(files, image.File{Path: e, Source: e, Mode: 0o644})
		elfs = append(elfs, e)
	}
	for _, f := range []string{"/etc/protocols", "/etc/ethertypes"} {
		if _, err := os.Stat(f); err == nil {
			files = append(files, image.File{Path: f, Source: f, Mode: 0o644})
		}
	}
	return append(files, sharedLibs(elfs)...), nil
}

// agnhostTools is the host's curl and nc at /usr/bin, ahead of busybox's
// applets in PATH, and its dash as /bin/sh, with the shared libraries
// they load.
func agnhostTools() ([]image.File, error) {
	curl, nc, dash := "/usr/bin/curl", "/bin/nc.openbsd", "/usr/bin/dash"
	for _, f := range []string{curl, nc, dash} {
		if _, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("node: %w (packages curl, netcat-openbsd, dash)", err)
		}
	}
	files := []image.File{{Path: "/usr/bin/curl", Source: curl}, {Path: "/usr/bin/nc", Source: nc}, {Path: "/bin/sh", Source: dash}}
	for _, f := range []string{"/etc/services", "/etc/ssl/certs/ca-certificates.crt"} {
		if _, err := os.Stat(f); err == nil {
			files = append(files, image.File{Path: f, Source: f, Mode: 0o644})
		}
	}
	return append(files, sharedLibs([]string{curl, nc, dash})...), nil
}

// dnsTools is the host's dig and getent and the libraries they load: the
// DNS specs resolve with them in the agnhost (Alpine's bind-tools upstream)
// and glibc-dns-testing images.
func dnsTools() ([]image.File, error) {
	bins := []string{"/usr/bin/dig", "/usr/bin/getent"}
	var files []image.File
	for _, b := range bins {
		if _, err := os.Stat(b); err != nil {
			return nil, fmt.Errorf("node: %w (packages bind9-dnsutils, libc-bin)", err)
		}
		files = append(files, image.File{Path: b, Source: b})
	}
	return append(files, sharedLibs(bins)...), nil
}

// sharedLibs is every shared library (and the loader) the ELF files load,
// by ldd, at the paths they have on the host, sorted.
func sharedLibs(elfs []string) []image.File {
	libs := map[string]bool{}
	for _, e := range elfs {
		out, err := exec.Command("ldd", e).Output()
		if err != nil {
			continue // static, or not an ELF file
		}
		for _, line := range strings.Split(string(out), "\n") {
			for _, f := range strings.Fields(line) {
				if strings.HasPrefix(f, "/") {
					libs[f] = true
				}
			}
		}
	}
	var files []image.File
	for _, l := range slices.Sorted(maps.Keys(libs)) {
		files = append(files, image.File{Path: l, Source: l})
	}
	return files
}

// localhostCert is a new self-signed certificate for localhost and its
// key, PEM-encoded (upstream's image carries a fixed pair).
func localhostCert() (crt, key []byte, err error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "localhost"},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(priv)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}

// requireStatic fails unless path is a statically linked executable: the
// images carry no C library, so a dynamically linked one (a Go program
// built with cgo, which the net package turns on) cannot be executed in
// them, and every exec of it fails with "no such file or directory".
func requireStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked; the images have no C library", path)
		}
	}
	return nil
}
