package golden

import (
	"os"
	"path/filepath"
	"testing"
)

type fakeTB struct {
	testing.TB
	failed bool
}

func (f *fakeTB) Helper()               {}
func (f *fakeTB) Fatal(...any)          { f.failed = true; panic(f) }
func (f *fakeTB) Fatalf(string, ...any) { f.failed = true; panic(f) }

func read[T any](path string) (v T, failed bool) {
	tb := &fakeTB{}
	defer func() {
		if r := recover(); r != nil && r != tb {
			panic(r)
		}
		failed = tb.failed
	}()
	return Read[T](tb, path), false
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	type in struct {
		Name string `json:"name"`
		Port *int32 `json:"port,omitempty"`
	}
	got, failed := read[map[string]in](write("ok.json", `{"a": {"name": "x", "port": 0}}`))
	if failed || got["a"].Name != "x" || got["a"].Port == nil || *got["a"].Port != 0 {
		t.Errorf("Read = %+v, failed %v", got, failed)
	}
	if _, failed := read[map[string]in](write("typo.json", `{"a": {"nmae": "x"}}`)); !failed {
		t.Error("an unknown field was accepted")
	}
	if _, failed := read[map[string]in](filepath.Join(dir, "missing.json")); !failed {
		t.Error("a missing file was accepted")
	}
}
