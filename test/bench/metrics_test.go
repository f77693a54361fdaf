package bench

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestParseProcStat(t *testing.T) {
	for _, tc := range []struct {
		name, in     string
		utime, stime uint64
		wantErr      bool
	}{
		{name: "plain", in: "4242 (kube-controller) S 1 4242 4242 0 -1 4194560 12345 0 0 0 1500 320 0 0 20 0 12 0 100 0 0",
			utime: 1500, stime: 320},
		{name: "command with spaces and parens", in: "7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 11 22 0 0 20 0 1 0 5 0 0",
			utime: 11, stime: 22},
		{name: "truncated", in: "7 (x) R 1 7", wantErr: true},
		{name: "no command", in: "7 x R", wantErr: true},
		{name: "not a number", in: "7 (x) R 1 7 7 0 -1 0 0 0 0 0 u 22 0", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseProcStat([]byte(tc.in))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if err == nil && (got.UTime != tc.utime || got.STime != tc.stime) {
				t.Errorf("got %+v, want utime %d stime %d", got, tc.utime, tc.stime)
			}
		})
	}
}

func TestParseProcStatus(t *testing.T) {
	in := "Name:\tkube-controller\nVmPeak:\t 1300000 kB\nVmHWM:\t   90000 kB\nVmRSS:\t   81234 kB\nThreads:\t12\n"
	got, err := ParseProcStatus([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if got.RSSBytes != 81234*1024 || got.HWMBytes != 90000*1024 {
		t.Errorf("got %+v", got)
	}
	if _, err := ParseProcStatus([]byte("Name:\tzombie\nState:\tZ (zombie)\n")); err == nil {
		t.Error("a zombie's status (no VmRSS) parsed without error")
	}
	if _, err := ParseProcStatus([]byte("VmRSS:\t 12 MB\nVmHWM:\t 1 kB\n")); err == nil {
		t.Error("a unit other than kB parsed without error")
	}
}

func TestParseAuxvClockTicks(t *testing.T) {
	var b []byte
	put := func(k, v uint64) {
		b = binary.NativeEndian.AppendUint64(b, k)
		b = binary.NativeEndian.AppendUint64(b, v)
	}
	put(6, 4096) // AT_PAGESZ
	put(atClkTck, 250)
	put(0, 0)
	if hz, ok := ParseAuxvClockTicks(b, 8); !ok || hz != 250 {
		t.Errorf("got %d, %v; want 250", hz, ok)
	}
	if _, ok := ParseAuxvClockTicks(b[:16], 8); ok {
		t.Error("found AT_CLKTCK where there is none")
	}
	if hz := ClockTicks(); hz == 0 {
		t.Error("ClockTicks() = 0")
	}
}

func TestReadSampleOfSelf(t *testing.T) {
	s, err := ReadSample("/proc", os.Getpid(), time.Now())
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	if s.RSSBytes <= 0 || s.HWMBytes < s.RSSBytes {
		t.Errorf("implausible sample %+v", s)
	}
}

func TestReadSampleFakeProc(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "99")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("stat", "99 (kcm) S 1 99 99 0 -1 0 0 0 0 0 100 50 0 0 20 0 1 0 5 0 0\n")
	write("status", "VmHWM:\t2048 kB\nVmRSS:\t1024 kB\n")
	now := time.Now()
	s, err := ReadSample(root, 99, now)
	if err != nil {
		t.Fatal(err)
	}
	want := Sample{Time: now, PID: 99, CPUTicks: 150, RSSBytes: 1 << 20, HWMBytes: 2 << 20}
	if s != want {
		t.Errorf("got %+v, want %+v", s, want)
	}
	if _, err := ReadSample(root, 100, now); err == nil {
		t.Error("a missing pid read without error")
	}

	pid := 99
	smp := NewSampler(func() int { return pid }, time.Hour)
	smp.procRoot = root
	if _, ok := smp.SampleNow(); !ok {
		t.Fatal("SampleNow failed")
	}
	pid = 0
	if _, ok := smp.SampleNow(); ok {
		t.Error("SampleNow succeeded without a process")
	}
	if n := len(smp.Samples()); n != 1 {
		t.Errorf("%d samples, want 1", n)
	}
}

func TestStatsBetween(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	const mb = 1 << 20
	samples := []Sample{
		{Time: at(0), PID: 1, CPUTicks: 10, RSSBytes: 50 * mb, HWMBytes: 50 * mb},
		{Time: at(1), PID: 1, CPUTicks: 100, RSSBytes: 80 * mb, HWMBytes: 80 * mb}, // phase start
		{Time: at(2), PID: 1, CPUTicks: 250, RSSBytes: 120 * mb, HWMBytes: 130 * mb},
		{Time: at(3), PID: 1, CPUTicks: 300, RSSBytes: 90 * mb, HWMBytes: 130 * mb}, // phase end
		{Time: at(4), PID: 1, CPUTicks: 900, RSSBytes: 200 * mb, HWMBytes: 200 * mb},
	}
	got := StatsBetween(samples, at(1), at(3), 100)
	if got.CPUSeconds != 2 || got.PeakRSSBytes != 120*mb || got.FinalRSSBytes != 90*mb || got.HWMBytes != 130*mb || got.Samples != 3 {
		t.Errorf("got %+v", got)
	}
	if len(got.PIDs) != 1 || got.PIDs[0] != 1 {
		t.Errorf("pids %v", got.PIDs)
	}

	// A restart: CPU is summed per pid, never negative.
	restarted := []Sample{
		{Time: at(0), PID: 1, CPUTicks: 500},
		{Time: at(1), PID: 1, CPUTicks: 600},
		{Time: at(2), PID: 2, CPUTicks: 5},
		{Time: at(3), PID: 2, CPUTicks: 55},
	}
	got = StatsBetween(restarted, at(0), at(3), 100)
	if got.CPUSeconds != 1.5 || len(got.PIDs) != 2 {
		t.Errorf("restart: got %+v", got)
	}

	if got := StatsBetween(samples, at(10), at(20), 100); got.Samples != 0 || got.CPUSeconds != 0 {
		t.Errorf("empty window: got %+v", got)
	}
}

func TestSamplerBackground(t *testing.T) {
	s := NewSampler(os.Getpid, 10*time.Millisecond)
	if _, err := ReadSample("/proc", os.Getpid(), time.Now()); err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	s.Start()
	deadline := time.Now().Add(5 * time.Second)
	for len(s.Samples()) < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	s.Stop()
	s.Stop()
	n := len(s.Samples())
	if n < 3 {
		t.Fatalf("%d samples after Stop, want at least 3", n)
	}
	time.Sleep(30 * time.Millisecond)
	if m := len(s.Samples()); m != n {
		t.Errorf("sampling went on after Stop: %d → %d", n, m)
	}
}
