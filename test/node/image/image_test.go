package image

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"testing"
)

func TestWrite(t *testing.T) {
	img := Image{
		Name:       "registry.k8s.io/pause:3.10.2",
		Files:      []File{{Path: "/usr/bin/pause", Data: []byte("#!"), Mode: 0o755}, {Path: "/bin/sh", Link: "busybox"}},
		Entrypoint: []string{"/usr/bin/pause"},
	}
	var a, b bytes.Buffer
	if err := Write(&a, img); err != nil {
		t.Fatal(err)
	}
	if err := Write(&b, img); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("the same image twice gave different archives")
	}
	files := map[string][]byte{}
	tr := tar.NewReader(&a)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		files[h.Name] = data
	}
	var index struct {
		Manifests []descriptor `json:"manifests"`
	}
	if err := json.Unmarshal(files["index.json"], &index); err != nil || len(index.Manifests) != 1 {
		t.Fatalf("index.json: %v %s", err, files["index.json"])
	}
	m := index.Manifests[0]
	if m.Annotations[annotationContainerdName] != img.Name || m.Annotations[annotationRefName] != "3.10.2" {
		t.Errorf("annotations %v", m.Annotations)
	}
	var manifest struct {
		Config descriptor   `json:"config"`
		Layers []descriptor `json:"layers"`
	}
	if err := json.Unmarshal(files[blobPath(m)], &manifest); err != nil || len(manifest.Layers) != 1 {
		t.Fatalf("manifest: %v", err)
	}
	var cfg struct {
		Config struct{ Entrypoint []string }
		RootFS struct {
			DiffIDs []string `json:"diff_ids"`
		} `json:"rootfs"`
	}
	if err := json.Unmarshal(files[blobPath(manifest.Config)], &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.RootFS.DiffIDs[0] != manifest.Layers[0].Digest || cfg.Config.Entrypoint[0] != "/usr/bin/pause" {
		t.Errorf("config %+v, layer %s", cfg, manifest.Layers[0].Digest)
	}
	layer := tar.NewReader(bytes.NewReader(files[blobPath(manifest.Layers[0])]))
	var names []string
	for {
		h, err := layer.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
	}
	want := []string{"bin/", "bin/sh", "usr/", "usr/bin/", "usr/bin/pause"}
	if len(names) != len(want) {
		t.Fatalf("layer entries %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Errorf("layer entries %v, want %v", names, want)
		}
	}
}
