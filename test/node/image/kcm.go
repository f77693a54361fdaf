package image

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
)

// The image ./Dockerfile builds: distroless static (Debian 12) with the
// binary copied to KCMBinDir, a symlink KCMLink to it there, and the
// symlink as the entrypoint. TestKCMMatchesDockerfile reads the Dockerfile
// and fails when any of these differ from it.
const (
	// DistrolessStatic is the repository of the Dockerfile's base; its
	// tags latest and nonroot are the root and the non-root variant.
	DistrolessStatic = "gcr.io/distroless/static-debian12"
	// NonrootUID is distroless' nonroot user, uid and gid.
	NonrootUID = 65532
	nobodyUID  = 65534
	// KCMBinDir holds the binary, under its own name, and KCMLink.
	KCMBinDir = "/usr/local/bin"
	KCMLink   = "controller-manager"
)

// KCMBinaries are the commands KCM (and the Dockerfile's BINARY) accepts.
var KCMBinaries = []string{"kube-controller-manager", "cloud-controller-manager"}

// KCMBase is the Dockerfile's base image of a variant: distroless static's
// latest tag (root) or its nonroot tag.
func KCMBase(nonroot bool) string {
	if nonroot {
		return DistrolessStatic + ":nonroot"
	}
	return DistrolessStatic + ":latest"
}

// KCM is the image ./Dockerfile builds for binary (kube-controller-manager
// or cloud-controller-manager), with the static binary at binPath on this
// machine, named name (e.g. registry.k8s.io/kube-controller-manager:v1.37.1
// to stand in for upstream's in kubeadm's static pod). nonroot picks the
// variant built with --build-arg BASE=KCMBase(true): user 65532 in
// /home/nonroot rather than root (user 0) in /.
func KCM(name, binary, binPath string, nonroot bool) (Image, error) {
	if !slices.Contains(KCMBinaries, binary) {
		return Image{}, fmt.Errorf("image %s: binary must be one of %v, not %q", name, KCMBinaries, binary)
	}
	if st, err := os.Stat(binPath); err != nil {
		return Image{}, fmt.Errorf("image %s: %w", name, err)
	} else if !st.Mode().IsRegular() {
		return Image{}, fmt.Errorf("image %s: %s is not a regular file", name, binPath)
	}
	img, err := distrolessStatic(name, nonroot)
	if err != nil {
		return Image{}, err
	}
	img.Files = append(img.Files,
		File{Path: path.Join(KCMBinDir, binary), Source: binPath, Mode: 0o755},
		File{Path: path.Join(KCMBinDir, KCMLink), Link: binary},
	)
	img.Entrypoint = []string{path.Join(KCMBinDir, KCMLink)}
	return img, nil
}

// distrolessStatic is gcr.io/distroless/static-debian12's files and config
// (GoogleContainerTools/distroless, static/static.bzl and common/BUILD.bazel),
// with this machine's CA bundle, time zones and netbase and mime tables in
// place of the Debian packages': the root variant runs as user 0 in /, the
// nonroot one as 65532 in /home/nonroot.
func distrolessStatic(name string, nonroot bool) (Image, error) {
	img := Image{
		Name: name,
		Env: []string{
			"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
			"SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt",
		},
		User:       "0",
		WorkingDir: "/",
	}
	if nonroot {
		img.User, img.WorkingDir = strconv.Itoa(NonrootUID), "/home/nonroot"
	}
	// base-files' directories, tmp with its sticky bit, and the homes.
	for _, d := range []string{"/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/proc", "/run", "/sbin", "/sys",
		"/usr", "/usr/bin", "/usr/lib", "/usr/sbin", "/usr/share", "/var", "/var/cache", "/var/lib", "/var/log"} {
		img.Files = append(img.Files, File{Path: d, Dir: true, Mode: 0o755})
	}
	img.Files = append(img.Files,
		File{Path: "/tmp", Dir: true, Mode: 0o1777},
		File{Path: "/root", Dir: true, Mode: 0o700},
		File{Path: "/home/nonroot", Dir: true, Mode: 0o700, UID: NonrootUID, GID: NonrootUID},
		File{Path: "/etc/passwd", Data: []byte(fmt.Sprintf(
			"root:x:0:0:root:/root:/sbin/nologin\n"+
				"nobody:x:%d:%d:nobody:/nonexistent:/sbin/nologin\n"+
				"nonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n",
			nobodyUID, nobodyUID, NonrootUID, NonrootUID))},
		File{Path: "/etc/group", Data: []byte(fmt.Sprintf(
			"root:x:0:\nnobody:x:%d:\ntty:x:5:\nstaff:x:50:\nnonroot:x:%d:\n", nobodyUID, NonrootUID))},
		File{Path: "/etc/nsswitch.conf", Data: []byte(nsswitch)},
		File{Path: "/usr/lib/os-release", Data: []byte(osRelease)},
		File{Path: "/etc/os-release", Link: "../usr/lib/os-release"},
	)
	const caBundle = "/etc/ssl/certs/ca-certificates.crt"
	if _, err := os.Stat(caBundle); err != nil {
		return Image{}, fmt.Errorf("image %s: the CA bundle: %w", name, err)
	}
	img.Files = append(img.Files, File{Path: caBundle, Source: caBundle, Mode: 0o644})
	for _, f := range []string{"/etc/protocols", "/etc/services", "/etc/rpc", "/etc/ethertypes", "/etc/mime.types"} {
		if _, err := os.Stat(f); err == nil {
			img.Files = append(img.Files, File{Path: f, Source: f, Mode: 0o644})
		}
	}
	zones, err := tree("/usr/share/zoneinfo")
	if err != nil {
		return Image{}, fmt.Errorf("image %s: %w", name, err)
	}
	img.Files = append(img.Files, zones...)
	return img, nil
}

// tree is the directory dir of this machine, if it exists, as entries at
// the same paths: directories 0755, files 0644, symlinks as they are.
func tree(dir string) ([]File, error) {
	if _, err := os.Lstat(dir); os.IsNotExist(err) {
		return nil, nil
	}
	var files []File
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			files = append(files, File{Path: p, Dir: true, Mode: 0o755})
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			files = append(files, File{Path: p, Link: target})
		case d.Type().IsRegular():
			files = append(files, File{Path: p, Source: p, Mode: 0o644})
		}
		return nil
	})
	return files, err
}

// nsswitch is distroless static's /etc/nsswitch.conf.
const nsswitch = `# /etc/nsswitch.conf
#
# Example configuration of GNU Name Service Switch functionality.
# If you have the ` + "`glibc-doc-reference' and `info'" + ` packages installed, try:
# ` + "`info libc \"Name Service Switch\"'" + ` for information about this file.

passwd:         compat
group:          compat
shadow:         compat
gshadow:        files

hosts:          files dns
networks:       files

protocols:      db files
services:       db files
ethers:         db files
rpc:            db files

netgroup:       nis
`

// osRelease is distroless' os-release for Debian 12 (common/variables.bzl).
const osRelease = `PRETTY_NAME="Distroless"
NAME="Debian GNU/Linux"
ID="debian"
VERSION_ID="12"
VERSION="Debian GNU/Linux 12 (bookworm)"
HOME_URL="https://github.com/GoogleContainerTools/distroless"
SUPPORT_URL="https://github.com/GoogleContainerTools/distroless/blob/master/README.md"
BUG_REPORT_URL="https://github.com/GoogleContainerTools/distroless/issues/new"
`
