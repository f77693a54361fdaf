// Package golden reads the inputs of the golden-value generators
// (daemonsetgolden, deployhash, endpointsgolden, mirroringgolden): the
// JSON files in the testdata directories of the kcm tests that compare
// against the generators' output. Both sides read the same files, so
// their inputs cannot drift apart; the tests decode them the same way
// (internal/testutil/golden in kcm).
package golden

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

var root = flag.String("root", "../../..", "the kcm repository root; the default is right when run from hack/tools/k8s")

// Read decodes the JSON file at path, relative to the kcm repository
// root, into v, rejecting unknown fields; it exits on failure. It parses
// the command line on first use.
func Read(path string, v any) {
	if !flag.Parsed() {
		flag.Parse()
	}
	p := filepath.Join(*root, path)
	b, err := os.ReadFile(p)
	if err == nil {
		d := json.NewDecoder(bytes.NewReader(b))
		d.DisallowUnknownFields()
		err = d.Decode(v)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", p, err)
		os.Exit(1)
	}
}
