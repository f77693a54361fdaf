// Package image writes container images as OCI image layout archives, the
// format `ctr images import` reads, so that `make e2e-node` needs no
// registry: one uncompressed layer of files taken from this machine (static
// binaries, or dynamically linked ones with their libraries), a config with
// the entrypoint, and the image's name as an annotation. KCM builds kcm's
// own image, the one ./Dockerfile builds, without docker.
package image

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"runtime"
	"sort"
	"strings"
	"time"
)

// File is one entry of the image's layer.
type File struct {
	// Path inside the image, absolute (e.g. /usr/local/bin/kube-proxy).
	Path string
	// Source is a file on this machine to copy; Data is used when Source is
	// empty. Link, when set, makes the entry a symlink to Link instead; Dir
	// makes it a directory. Parent directories that are not entries of
	// their own are 0755 root:root.
	Source string
	Data   []byte
	Link   string
	Dir    bool
	// Mode is the permission bits, with the setuid, setgid and sticky bits
	// either as chmod writes them (0o1777) or as os.ModeSticky and the
	// like; 0 means 0755 for a Source or a Dir, 0644 for Data.
	Mode os.FileMode
	// UID and GID own the entry; 0 is root.
	UID, GID int
}

// Image is what one archive holds.
type Image struct {
	// Name is the full reference it is imported as, e.g.
	// registry.k8s.io/pause:3.10.2.
	Name       string
	Files      []File
	Entrypoint []string
	Cmd        []string
	Env        []string
	// User is the config's user; empty means root.
	User string
	// WorkingDir is the config's working directory; empty means /.
	WorkingDir string
}

const (
	mediaManifest = "application/vnd.oci.image.manifest.v1+json"
	mediaConfig   = "application/vnd.oci.image.config.v1+json"
	mediaLayer    = "application/vnd.oci.image.layer.v1.tar"
	mediaIndex    = "application/vnd.oci.image.index.v1+json"
	// containerd's importer names the image after this annotation.
	annotationContainerdName = "io.containerd.image.name"
	annotationRefName        = "org.opencontainers.image.ref.name"
)

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Platform    *platform         `json:"platform,omitempty"`
}

type platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

// epoch is every entry's and the config's time, so that the same files give
// the same image digest.
var epoch = time.Unix(0, 0).UTC()

// Write writes img to w as an OCI image layout tar archive.
func Write(w io.Writer, img Image) error {
	if img.Name == "" {
		return fmt.Errorf("image: no name")
	}
	layer, err := buildLayer(img.Files)
	if err != nil {
		return fmt.Errorf("image %s: %w", img.Name, err)
	}
	layerDesc := blobDescriptor(mediaLayer, layer)

	env := img.Env
	if len(env) == 0 {
		env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	}
	config := map[string]any{
		"Entrypoint": img.Entrypoint,
		"Cmd":        img.Cmd,
		"Env":        env,
		"User":       img.User,
	}
	if img.WorkingDir != "" {
		config["WorkingDir"] = img.WorkingDir
	}
	cfg, err := json.Marshal(map[string]any{
		"created":      epoch.Format(time.RFC3339),
		"architecture": runtime.GOARCH,
		"os":           "linux",
		"config":       config,
		"rootfs":       map[string]any{"type": "layers", "diff_ids": []string{layerDesc.Digest}},
	})
	if err != nil {
		return err
	}
	cfgDesc := blobDescriptor(mediaConfig, cfg)
	manifest, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     mediaManifest,
		"config":        cfgDesc,
		"layers":        []descriptor{layerDesc},
	})
	if err != nil {
		return err
	}
	manDesc := blobDescriptor(mediaManifest, manifest)
	manDesc.Platform = &platform{Architecture: runtime.GOARCH, OS: "linux"}
	manDesc.Annotations = map[string]string{annotationContainerdName: img.Name, annotationRefName: tagOf(img.Name)}
	index, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     mediaIndex,
		"manifests":     []descriptor{manDesc},
	})
	if err != nil {
		return err
	}

	tw := tar.NewWriter(w)
	add := func(name string, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: epoch, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	for _, e := range []struct {
		name string
		data []byte
	}{
		{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{"index.json", index},
		{blobPath(layerDesc), layer},
		{blobPath(cfgDesc), cfg},
		{blobPath(manDesc), manifest},
	} {
		if err := add(e.name, e.data); err != nil {
			return fmt.Errorf("image %s: %w", img.Name, err)
		}
	}
	return tw.Close()
}

// WriteFile writes img to the file at p.
func WriteFile(p string, img Image) error {
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	if err := Write(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// tagOf is the tag of a reference ("latest" when it has none).
func tagOf(ref string) string {
	i := strings.LastIndex(ref, ":")
	if i < 0 || strings.Contains(ref[i:], "/") {
		return "latest"
	}
	return ref[i+1:]
}

func blobDescriptor(mediaType string, data []byte) descriptor {
	sum := sha256.Sum256(data)
	return descriptor{MediaType: mediaType, Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: int64(len(data))}
}

func blobPath(d descriptor) string {
	return "blobs/sha256/" + strings.TrimPrefix(d.Digest, "sha256:")
}

// buildLayer is the layer tar: every parent directory, then the files in
// path order (of entries at the same path, the first listed).
func buildLayer(files []File) ([]byte, error) {
	sorted := append([]File(nil), files...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	var mkdirs func(string) error
	mkdirs = func(d string) error {
		if d == "/" || d == "." || dirs[d] {
			return nil
		}
		if err := mkdirs(path.Dir(d)); err != nil {
			return err
		}
		dirs[d] = true
		return tw.WriteHeader(&tar.Header{Name: strings.TrimPrefix(d, "/") + "/", Mode: 0o755, ModTime: epoch, Typeflag: tar.TypeDir})
	}
	seen := map[string]bool{}
	for _, f := range sorted {
		p := path.Clean(f.Path)
		if !path.IsAbs(p) {
			return nil, fmt.Errorf("path %q is not absolute", f.Path)
		}
		if seen[p] {
			continue
		}
		seen[p] = true
		if err := mkdirs(path.Dir(p)); err != nil {
			return nil, err
		}
		name := strings.TrimPrefix(p, "/")
		if f.Link != "" {
			if err := tw.WriteHeader(&tar.Header{Name: name, Linkname: f.Link, Mode: 0o777, Uid: f.UID, Gid: f.GID, ModTime: epoch, Typeflag: tar.TypeSymlink}); err != nil {
				return nil, err
			}
			continue
		}
		if f.Dir {
			mode := f.Mode
			if mode == 0 {
				mode = 0o755
			}
			dirs[p] = true
			if err := tw.WriteHeader(&tar.Header{Name: name + "/", Mode: tarMode(mode), Uid: f.UID, Gid: f.GID, ModTime: epoch, Typeflag: tar.TypeDir}); err != nil {
				return nil, err
			}
			continue
		}
		data, mode := f.Data, f.Mode
		if f.Source != "" {
			var err error
			if data, err = os.ReadFile(f.Source); err != nil {
				return nil, err
			}
			if mode == 0 {
				mode = 0o755
			}
		}
		if mode == 0 {
			mode = 0o644
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: tarMode(mode), Uid: f.UID, Gid: f.GID, Size: int64(len(data)), ModTime: epoch, Typeflag: tar.TypeReg}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// tarMode is m as a tar header's mode: the permission bits and the setuid,
// setgid and sticky bits, from os.FileMode's flags or from chmod's octal
// bits (which os.FileMode leaves unused).
func tarMode(m os.FileMode) int64 {
	mode := int64(m & 0o7777)
	if m&os.ModeSetuid != 0 {
		mode |= 0o4000
	}
	if m&os.ModeSetgid != 0 {
		mode |= 0o2000
	}
	if m&os.ModeSticky != 0 {
		mode |= 0o1000
	}
	return mode
}
