package kubeadm

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kcm-dev/kcm/test/node"
	"github.com/kcm-dev/kcm/test/node/image"
)

// Image names kubeadm v1.37.1 uses (its constants: etcd 3.7.0-0, pause
// 3.10.2, CoreDNS v1.14.6; the control plane at the Kubernetes version).
const (
	KubeVersion           = "v1.37.1"
	APIServerImage        = "registry.k8s.io/kube-apiserver:" + KubeVersion
	SchedulerImage        = "registry.k8s.io/kube-scheduler:" + KubeVersion
	ControllerManagerImg  = "registry.k8s.io/kube-controller-manager:" + KubeVersion
	EtcdImage             = "registry.k8s.io/etcd:3.7.0-0"
	KCMImage              = "docker.io/kcm/kube-controller-manager:dev"
	KCMImageShort         = "kcm/kube-controller-manager:dev" // as manifests/kind-patches names it
	upstreamKCMBinaryName = "upstream-kube-controller-manager"
)

// Binaries of the bin dir the images are made of, beyond test/node's.
var Binaries = []string{"kube-apiserver", "kube-scheduler", upstreamKCMBinaryName, "etcd", "kube-controller-manager", "kubeadm", "kubelet", "kubectl"}

// images are every image the nodes import: the control plane's, the
// node's (test/node: pause, kube-proxy, CoreDNS, agnhost, busybox) and
// kcm's, built by the in-repo builder that follows the Dockerfile.
func images(binDir string) ([]image.Image, error) {
	bin := func(n string) string { return filepath.Join(binDir, n) }
	// Stand-ins for upstream's control-plane images: the binary at the
	// path upstream's image has it (/usr/local/bin), running as root; no
	// base files (the binaries are static and read none).
	control := func(name, binary, source string) image.Image {
		return image.Image{Name: name, Files: []image.File{{Path: "/usr/local/bin/" + binary, Source: source}}}
	}
	imgs := []image.Image{
		control(APIServerImage, "kube-apiserver", bin("kube-apiserver")),
		control(SchedulerImage, "kube-scheduler", bin("kube-scheduler")),
		control(ControllerManagerImg, "kube-controller-manager", bin(upstreamKCMBinaryName)),
		control(EtcdImage, "etcd", bin("etcd")),
	}
	kcm, err := image.KCM(KCMImage, "kube-controller-manager", bin("kube-controller-manager"), false)
	if err != nil {
		return nil, err
	}
	imgs = append(imgs, kcm)
	nodeImgs, err := node.Images(binDir)
	if err != nil {
		return nil, err
	}
	return append(imgs, nodeImgs...), nil
}

// WriteImages writes every image as an OCI archive into dir and returns
// their paths.
func WriteImages(binDir, dir string) ([]string, error) {
	imgs, err := images(binDir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var paths []string
	for i, img := range imgs {
		p := filepath.Join(dir, fmt.Sprintf("%02d.tar", i))
		if err := image.WriteFile(p, img); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}
