package image

import (
	"archive/tar"
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestKCMMatchesDockerfile reads ./Dockerfile and fails when KCM builds a
// different image: the base of either variant, the binaries' directory and
// the symlink's name, the entrypoint, the user or the working directory.
// An edit to one side only fails here; the final stage may hold only what
// this test models (ARG, COPY, ENTRYPOINT, USER, WORKDIR).
func TestKCMMatchesDockerfile(t *testing.T) {
	df := parseDockerfile(t, filepath.Join(repoRoot(t), "Dockerfile"))
	if len(df.stages) < 2 {
		t.Fatalf("Dockerfile: %d stages, want a build stage and the image's", len(df.stages))
	}
	final := df.stages[len(df.stages)-1]

	// The base: FROM ${ARG} whose default is the root variant, and the
	// non-root variant as the header's --build-arg ARG=... documents it.
	m := regexp.MustCompile(`^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$`).FindStringSubmatch(final.from)
	if m == nil {
		t.Fatalf("Dockerfile: the final stage is FROM %s, not FROM ${ARG}: KCM models a base chosen by a build arg", final.from)
	}
	baseArg := m[1]
	rootBase, ok := df.args[baseArg]
	if !ok || rootBase == "" {
		t.Fatalf("Dockerfile: no ARG %s=<default> before the first FROM", baseArg)
	}
	var alts []string
	for _, l := range df.header {
		for _, m := range regexp.MustCompile(`--build-arg `+baseArg+`=(\S+)`).FindAllStringSubmatch(l, -1) {
			if !slices.Contains(alts, m[1]) {
				alts = append(alts, m[1])
			}
		}
	}
	if len(alts) != 1 {
		t.Fatalf("Dockerfile: the header documents %d alternatives --build-arg %s=... (%v), want one, the non-root variant", len(alts), baseArg, alts)
	}
	variants := []struct {
		nonroot bool
		base    string
	}{{false, rootBase}, {true, alts[0]}}
	for _, v := range variants {
		if distrolessNonroot(v.base) != v.nonroot {
			t.Errorf("Dockerfile: base %s is distroless' nonroot variant: %v, want %v", v.base, distrolessNonroot(v.base), v.nonroot)
		}
		if got := KCMBase(v.nonroot); got != v.base {
			t.Errorf("KCMBase(%v) = %s, the Dockerfile's is %s", v.nonroot, got, v.base)
		}
	}

	// The final stage: one COPY of the build stage's output directory, the
	// entrypoint, and USER or WORKDIR if any (expanded with its ARGs).
	stageArgs := map[string]string{}
	var copyFrom, copySrc, copyDst, user, workdir string
	var entrypoint []string
	copies := 0
	for _, in := range final.ins {
		expand := func(s string) string { return os.Expand(s, func(k string) string { return stageArgs[k] }) }
		switch in.cmd {
		case "ARG":
			k, v, _ := strings.Cut(in.args, "=")
			if _, global := df.args[k]; global && !strings.Contains(in.args, "=") {
				v = df.args[k]
			}
			stageArgs[k] = strings.Trim(v, `"`)
		case "COPY":
			copies++
			var plain []string
			for _, f := range strings.Fields(in.args) {
				if from, ok := strings.CutPrefix(f, "--from="); ok {
					copyFrom = from
				} else if strings.HasPrefix(f, "--") {
					t.Errorf("Dockerfile line %d: COPY %s: KCM does not model %s", in.line, in.args, f)
				} else {
					plain = append(plain, expand(f))
				}
			}
			if len(plain) != 2 {
				t.Fatalf("Dockerfile line %d: COPY %s: want one source and one destination", in.line, in.args)
			}
			copySrc, copyDst = plain[0], plain[1]
		case "ENTRYPOINT":
			if err := json.Unmarshal([]byte(in.args), &entrypoint); err != nil {
				t.Fatalf("Dockerfile line %d: ENTRYPOINT %s: not the exec form: %v", in.line, in.args, err)
			}
		case "USER":
			user = expand(in.args)
		case "WORKDIR":
			workdir = expand(in.args)
		default:
			t.Errorf("Dockerfile line %d: %s in the final stage: KCM does not model it (teach KCM and this test)", in.line, in.cmd)
		}
	}
	if copies != 1 || copyFrom == "" {
		t.Fatalf("Dockerfile: the final stage has %d COPY (from %q), want one COPY --from=<build stage>", copies, copyFrom)
	}
	if !strings.HasSuffix(copySrc, "/") {
		t.Fatalf("Dockerfile: COPY %s %s: want a directory's contents (src ending in /)", copySrc, copyDst)
	}
	srcDir, binDir := path.Clean(copySrc), path.Clean(copyDst)
	if binDir != KCMBinDir {
		t.Errorf("Dockerfile: the binaries go to %s, KCMBinDir is %s", binDir, KCMBinDir)
	}

	// The build stage: the binary built as <src>/${BINARY}, the symlink
	// <src>/<link> -> ${BINARY}, BINARY's values.
	var build *stage
	for i := range df.stages {
		if df.stages[i].name == copyFrom {
			build = &df.stages[i]
		}
	}
	if build == nil {
		t.Fatalf("Dockerfile: no stage named %s", copyFrom)
	}
	var run, binaryDefault string
	for _, in := range build.ins {
		switch in.cmd {
		case "RUN":
			run += in.args + "\n"
		case "ARG":
			if v, ok := strings.CutPrefix(in.args, "BINARY="); ok {
				binaryDefault = v
			}
		}
	}
	if !slices.Contains(KCMBinaries, binaryDefault) {
		t.Errorf("Dockerfile: ARG BINARY=%s, not one of KCMBinaries %v", binaryDefault, KCMBinaries)
	}
	if m := regexp.MustCompile(`case "\$\{BINARY\}" in ([^)]*)\)`).FindStringSubmatch(run); m == nil {
		t.Errorf("Dockerfile: no case \"${BINARY}\" in ...) checking BINARY")
	} else if got := strings.Split(m[1], "|"); !sameSet(got, KCMBinaries) {
		t.Errorf("Dockerfile: BINARY may be %v, KCMBinaries are %v", got, KCMBinaries)
	}
	if !regexp.MustCompile(`-o ` + regexp.QuoteMeta(srcDir) + `/\$\{BINARY\}\s`).MatchString(run) {
		t.Errorf("Dockerfile: the build stage does not build -o %s/${BINARY}, the directory COPY takes", srcDir)
	}
	var link string
	if m := regexp.MustCompile(`ln -s \$\{BINARY\} ` + regexp.QuoteMeta(srcDir) + `/([^\s/]+)`).FindStringSubmatch(run); m == nil {
		t.Errorf("Dockerfile: the build stage makes no symlink ln -s ${BINARY} %s/<name>", srcDir)
	} else {
		link = m[1]
	}
	if link != KCMLink {
		t.Errorf("Dockerfile: the symlink is %s/%s, KCMLink is %s", binDir, link, KCMLink)
	}

	fake := filepath.Join(t.TempDir(), "bin")
	if err := os.WriteFile(fake, []byte("\x7fELF"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, v := range variants {
		// The user and working directory the base gives the image
		// (distroless static.bzl's USER_VARIANTS), unless the stage sets
		// its own.
		wantUser, wantDir := "0", "/"
		if v.nonroot {
			wantUser, wantDir = strconv.Itoa(NonrootUID), "/home/nonroot"
		}
		if user != "" {
			wantUser = user
		}
		if workdir != "" {
			wantDir = workdir
		}
		for _, binary := range KCMBinaries {
			img, err := KCM("kcm/"+binary+":dev", binary, fake, v.nonroot)
			if err != nil {
				t.Fatal(err)
			}
			where := binary + " on " + v.base
			if !slices.Equal(img.Entrypoint, entrypoint) {
				t.Errorf("%s: KCM's entrypoint %q, the Dockerfile's %q", where, img.Entrypoint, entrypoint)
			}
			if img.User != wantUser {
				t.Errorf("%s: KCM's user %q, the Dockerfile's %q", where, img.User, wantUser)
			}
			if img.WorkingDir != wantDir {
				t.Errorf("%s: KCM's working directory %q, the Dockerfile's %q", where, img.WorkingDir, wantDir)
			}
			want := map[string]File{
				path.Join(binDir, binary): {Source: fake},
				path.Join(binDir, link):   {Link: binary},
			}
			got := map[string]File{}
			for _, f := range img.Files {
				if path.Dir(path.Clean(f.Path)) == binDir {
					got[path.Clean(f.Path)] = File{Source: f.Source, Link: f.Link}
				}
			}
			if len(got) != len(want) {
				t.Errorf("%s: KCM puts %v in %s, the Dockerfile %v", where, keys(got), binDir, keys(want))
			}
			for p, w := range want {
				if g, ok := got[p]; !ok || g.Source != w.Source || g.Link != w.Link {
					t.Errorf("%s: %s is %s in KCM's image, %s in the Dockerfile's", where, p, describe(g, ok), describe(w, true))
				}
			}
		}
	}
}

// TestKCMArchive writes both variants' archives and reads them back.
func TestKCMArchive(t *testing.T) {
	if _, err := os.Stat("/etc/ssl/certs/ca-certificates.crt"); err != nil {
		t.Skipf("no CA bundle on this machine: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "kube-controller-manager")
	binData := []byte("\x7fELF kcm")
	if err := os.WriteFile(bin, binData, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, nonroot := range []bool{false, true} {
		img, err := KCM("registry.k8s.io/kube-controller-manager:v1.37.1", "kube-controller-manager", bin, nonroot)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := Write(&buf, img); err != nil {
			t.Fatal(err)
		}
		cfg, headers, data := readArchive(t, buf.Bytes())

		wantUser, wantDir := "0", "/"
		if nonroot {
			wantUser, wantDir = "65532", "/home/nonroot"
		}
		c := cfg.Config
		if !slices.Equal(c.Entrypoint, []string{"/usr/local/bin/controller-manager"}) || c.User != wantUser || c.WorkingDir != wantDir ||
			!slices.Equal(c.Env, []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"}) {
			t.Errorf("nonroot=%v: config %+v", nonroot, c)
		}

		check := func(name string, typ byte, mode int64, uid int) *tar.Header {
			t.Helper()
			h := headers[name]
			if h == nil {
				t.Errorf("nonroot=%v: no %s in the layer", nonroot, name)
				return nil
			}
			if h.Typeflag != typ || (mode >= 0 && h.Mode != mode) || h.Uid != uid {
				t.Errorf("nonroot=%v: %s: type %c mode %o uid %d, want %c %o %d", nonroot, name, h.Typeflag, h.Mode, h.Uid, typ, mode, uid)
			}
			return h
		}
		check("usr/local/bin/kube-controller-manager", tar.TypeReg, 0o755, 0)
		if !bytes.Equal(data["usr/local/bin/kube-controller-manager"], binData) {
			t.Errorf("nonroot=%v: the binary's content differs", nonroot)
		}
		if h := check("usr/local/bin/controller-manager", tar.TypeSymlink, -1, 0); h != nil && h.Linkname != "kube-controller-manager" {
			t.Errorf("nonroot=%v: controller-manager links to %s", nonroot, h.Linkname)
		}
		check("tmp/", tar.TypeDir, 0o1777, 0)
		check("root/", tar.TypeDir, 0o700, 0)
		check("home/nonroot/", tar.TypeDir, 0o700, 65532)
		check("etc/ssl/certs/ca-certificates.crt", tar.TypeReg, 0o644, 0)
		check("etc/nsswitch.conf", tar.TypeReg, 0o644, 0)
		check("etc/group", tar.TypeReg, 0o644, 0)
		check("etc/os-release", tar.TypeSymlink, -1, 0)
		check("etc/passwd", tar.TypeReg, 0o644, 0)
		uids := map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(string(data["etc/passwd"])), "\n") {
			if f := strings.Split(l, ":"); len(f) == 7 {
				uids[f[0]] = f[2] + ":" + f[3] + ":" + f[5]
			}
		}
		if uids["root"] != "0:0:/root" || uids["nonroot"] != "65532:65532:/home/nonroot" || uids["nobody"] != "65534:65534:/nonexistent" {
			t.Errorf("nonroot=%v: /etc/passwd:\n%s", nonroot, data["etc/passwd"])
		}
		if !strings.Contains(string(data["usr/lib/os-release"]), `VERSION_ID="12"`) {
			t.Errorf("nonroot=%v: os-release:\n%s", nonroot, data["usr/lib/os-release"])
		}
		if _, err := os.Stat("/usr/share/zoneinfo/UTC"); err == nil && headers["usr/share/zoneinfo/UTC"] == nil {
			t.Errorf("nonroot=%v: no usr/share/zoneinfo/UTC in the layer", nonroot)
		}
	}
}

func TestKCMRejectsOtherBinaries(t *testing.T) {
	if _, err := KCM("x:dev", "kube-scheduler", "/dev/null", false); err == nil {
		t.Error("KCM accepted kube-scheduler")
	}
}

type imageConfig struct {
	Config struct {
		Entrypoint []string
		Env        []string
		User       string
		WorkingDir string
	} `json:"config"`
}

// readArchive is an archive's config, and its layer's headers and contents
// by name.
func readArchive(t *testing.T, archive []byte) (imageConfig, map[string]*tar.Header, map[string][]byte) {
	t.Helper()
	untar := func(b []byte) (map[string]*tar.Header, map[string][]byte) {
		headers, data := map[string]*tar.Header{}, map[string][]byte{}
		tr := tar.NewReader(bytes.NewReader(b))
		for {
			h, err := tr.Next()
			if err == io.EOF {
				return headers, data
			}
			if err != nil {
				t.Fatal(err)
			}
			if headers[h.Name] != nil {
				t.Errorf("%s twice in a tar", h.Name)
			}
			headers[h.Name] = h
			if data[h.Name], err = io.ReadAll(tr); err != nil {
				t.Fatal(err)
			}
		}
	}
	_, files := untar(archive)
	var index struct{ Manifests []descriptor }
	if err := json.Unmarshal(files["index.json"], &index); err != nil || len(index.Manifests) != 1 {
		t.Fatalf("index.json: %v %s", err, files["index.json"])
	}
	var manifest struct {
		Config descriptor
		Layers []descriptor
	}
	if err := json.Unmarshal(files[blobPath(index.Manifests[0])], &manifest); err != nil || len(manifest.Layers) != 1 {
		t.Fatalf("manifest: %v", err)
	}
	var cfg imageConfig
	if err := json.Unmarshal(files[blobPath(manifest.Config)], &cfg); err != nil {
		t.Fatal(err)
	}
	headers, data := untar(files[blobPath(manifest.Layers[0])])
	return cfg, headers, data
}

// dockerfile is what the tests read of a Dockerfile: the comment lines
// before its first instruction, the ARGs before its first FROM, its stages.
type dockerfile struct {
	header []string
	args   map[string]string
	stages []stage
}

type stage struct {
	from, name string
	ins        []instruction
}

type instruction struct {
	cmd, args string
	line      int
}

// parseDockerfile reads p: comment lines dropped (as docker does, also
// inside continued lines), continued lines joined.
func parseDockerfile(t *testing.T, p string) dockerfile {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	df := dockerfile{args: map[string]string{}}
	var logical string
	start, n := 0, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
		l := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(l, "#") {
			if logical == "" && len(df.stages) == 0 && len(df.args) == 0 {
				df.header = append(df.header, l)
			}
			continue
		}
		if l == "" && logical == "" {
			continue
		}
		if logical == "" {
			start = n
		}
		if cont, ok := strings.CutSuffix(l, `\`); ok {
			logical += cont + " "
			continue
		}
		logical += l
		cmd, args, _ := strings.Cut(logical, " ")
		in := instruction{cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args), line: start}
		logical = ""
		switch {
		case in.cmd == "FROM":
			fields := strings.Fields(in.args)
			s := stage{from: fields[0]}
			if len(fields) == 3 && strings.EqualFold(fields[1], "AS") {
				s.name = fields[2]
			}
			df.stages = append(df.stages, s)
		case len(df.stages) == 0:
			if in.cmd != "ARG" {
				t.Fatalf("%s:%d: %s before the first FROM", p, in.line, in.cmd)
			}
			k, v, _ := strings.Cut(in.args, "=")
			df.args[k] = strings.Trim(v, `"`)
		default:
			s := &df.stages[len(df.stages)-1]
			s.ins = append(s.ins, in)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return df
}

// distrolessNonroot is whether a distroless reference is a nonroot variant
// (tags nonroot, debug-nonroot, nonroot-amd64, ...).
func distrolessNonroot(ref string) bool {
	tag := tagOf(ref)
	return tag == "nonroot" || strings.HasSuffix(tag, "-nonroot") || strings.HasPrefix(tag, "nonroot-")
}

// repoRoot is the directory above the test's with go.mod and Dockerfile.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "Dockerfile")); err == nil {
				return dir
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod with a Dockerfile above the test's directory")
		}
		dir = parent
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// describe is what TestKCMMatchesDockerfile compares of an entry.
func describe(f File, ok bool) string {
	switch {
	case !ok:
		return "missing"
	case f.Link != "":
		return "a symlink to " + f.Link
	}
	return "a copy of " + f.Source
}

func keys(m map[string]File) []string {
	var k []string
	for p := range m {
		k = append(k, p)
	}
	slices.Sort(k)
	return k
}
