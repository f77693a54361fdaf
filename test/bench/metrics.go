package bench

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultSampleInterval is how often the sampler reads /proc.
const DefaultSampleInterval = 200 * time.Millisecond

// Sample is one reading of a process's /proc files.
type Sample struct {
	Time time.Time `json:"time"`
	PID  int       `json:"pid"`
	// CPUTicks is utime+stime in clock ticks (see ClockTicks).
	CPUTicks uint64 `json:"cpuTicks"`
	// RSSBytes is VmRSS, HWMBytes VmHWM (the process's peak RSS so far).
	RSSBytes int64 `json:"rssBytes"`
	HWMBytes int64 `json:"hwmBytes"`
}

// ProcStat is what the benchmark reads from /proc/<pid>/stat.
type ProcStat struct {
	UTime, STime uint64 // clock ticks
}

// ParseProcStat parses the contents of /proc/<pid>/stat. The command name
// (field 2) is in parentheses and may itself contain spaces and
// parentheses, so fields are counted from the last ')'.
func ParseProcStat(b []byte) (ProcStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return ProcStat{}, errors.New("bench: /proc stat: no ')' after the command name")
	}
	// After ") " come field 3 (state), 4 (ppid), … 14 (utime), 15 (stime).
	f := strings.Fields(string(b[i+1:]))
	const utime, stime = 14 - 3, 15 - 3
	if len(f) <= stime {
		return ProcStat{}, fmt.Errorf("bench: /proc stat: %d fields after the command name, want more than %d", len(f), stime)
	}
	u, err := strconv.ParseUint(f[utime], 10, 64)
	if err != nil {
		return ProcStat{}, fmt.Errorf("bench: /proc stat utime: %w", err)
	}
	s, err := strconv.ParseUint(f[stime], 10, 64)
	if err != nil {
		return ProcStat{}, fmt.Errorf("bench: /proc stat stime: %w", err)
	}
	return ProcStat{UTime: u, STime: s}, nil
}

// ProcStatus is what the benchmark reads from /proc/<pid>/status.
type ProcStatus struct {
	RSSBytes, HWMBytes int64
}

// ParseProcStatus reads VmRSS and VmHWM ("VmRSS:\t  12345 kB") from the
// contents of /proc/<pid>/status. Both must be present (they are missing
// for a zombie).
func ParseProcStatus(b []byte) (ProcStatus, error) {
	var st ProcStatus
	var haveRSS, haveHWM bool
	s := bufio.NewScanner(bytes.NewReader(b))
	for s.Scan() {
		key, val, ok := strings.Cut(s.Text(), ":")
		if !ok || (key != "VmRSS" && key != "VmHWM") {
			continue
		}
		n, err := parseKB(val)
		if err != nil {
			return st, fmt.Errorf("bench: /proc status %s: %w", key, err)
		}
		if key == "VmRSS" {
			st.RSSBytes, haveRSS = n, true
		} else {
			st.HWMBytes, haveHWM = n, true
		}
	}
	if !haveRSS || !haveHWM {
		return st, errors.New("bench: /proc status: no VmRSS/VmHWM (process gone or a zombie)")
	}
	return st, nil
}

// parseKB parses "  12345 kB" into bytes.
func parseKB(v string) (int64, error) {
	f := strings.Fields(v)
	if len(f) != 2 || f[1] != "kB" {
		return 0, fmt.Errorf("unexpected value %q", strings.TrimSpace(v))
	}
	n, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return 0, err
	}
	return n * 1024, nil
}

// atClkTck is AT_CLKTCK, the auxiliary vector entry holding sysconf(_SC_CLK_TCK).
const atClkTck = 17

// defaultClockTicks is USER_HZ on every Linux architecture Go supports.
const defaultClockTicks = 100

// ParseAuxvClockTicks finds AT_CLKTCK in the contents of /proc/self/auxv
// (pairs of native-endian machine words) with the given word size in bytes.
func ParseAuxvClockTicks(b []byte, wordSize int) (uint64, bool) {
	word := func(p []byte) uint64 {
		if wordSize == 4 {
			return uint64(binary.NativeEndian.Uint32(p))
		}
		return binary.NativeEndian.Uint64(p)
	}
	for i := 0; i+2*wordSize <= len(b); i += 2 * wordSize {
		k, v := word(b[i:]), word(b[i+wordSize:])
		if k == 0 { // AT_NULL
			break
		}
		if k == atClkTck && v > 0 {
			return v, true
		}
	}
	return 0, false
}

// ClockTicks returns the clock ticks per second /proc/<pid>/stat counts in,
// read from this process's auxiliary vector (what sysconf does), 100 if that
// fails.
func ClockTicks() uint64 {
	b, err := os.ReadFile("/proc/self/auxv")
	if err != nil {
		return defaultClockTicks
	}
	wordSize := strconv.IntSize / 8
	if hz, ok := ParseAuxvClockTicks(b, wordSize); ok {
		return hz
	}
	return defaultClockTicks
}

// ReadSample reads /proc/<pid>/stat and /proc/<pid>/status under procRoot
// (normally "/proc").
func ReadSample(procRoot string, pid int, now time.Time) (Sample, error) {
	dir := procRoot + "/" + strconv.Itoa(pid)
	statB, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return Sample{}, err
	}
	stat, err := ParseProcStat(statB)
	if err != nil {
		return Sample{}, err
	}
	statusB, err := os.ReadFile(dir + "/status")
	if err != nil {
		return Sample{}, err
	}
	status, err := ParseProcStatus(statusB)
	if err != nil {
		return Sample{}, err
	}
	return Sample{Time: now, PID: pid, CPUTicks: stat.UTime + stat.STime, RSSBytes: status.RSSBytes, HWMBytes: status.HWMBytes}, nil
}

// Sampler reads a process's /proc files at a fixed interval in the
// background and keeps every sample. The pid is asked for at every tick, so a
// restarted process is followed (and shows up as a pid change).
type Sampler struct {
	pid      func() int
	interval time.Duration
	procRoot string

	mu      sync.Mutex
	samples []Sample
	errs    int
	lastErr error

	stop chan struct{}
	done chan struct{}
}

// NewSampler returns a sampler of the process pid() names; 0 means none.
func NewSampler(pid func() int, interval time.Duration) *Sampler {
	if interval <= 0 {
		interval = DefaultSampleInterval
	}
	return &Sampler{pid: pid, interval: interval, procRoot: "/proc"}
}

// Start starts sampling in the background; Stop ends it.
func (s *Sampler) Start() {
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(s.done)
		t := time.NewTicker(s.interval)
		defer t.Stop()
		for {
			s.SampleNow()
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
}

// Stop ends background sampling and waits for it; safe to call twice.
func (s *Sampler) Stop() {
	if s.stop == nil {
		return
	}
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
}

// SampleNow takes one sample at once (phase boundaries use it) and returns
// it; ok is false if the process is not running or could not be read.
func (s *Sampler) SampleNow() (Sample, bool) {
	pid := s.pid()
	if pid == 0 {
		return Sample{}, false
	}
	smp, err := ReadSample(s.procRoot, pid, time.Now())
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.errs++
		s.lastErr = err
		return Sample{}, false
	}
	s.samples = append(s.samples, smp)
	return smp, true
}

// Samples returns a copy of every sample so far, in time order.
func (s *Sampler) Samples() []Sample {
	s.mu.Lock()
	out := append([]Sample(nil), s.samples...)
	s.mu.Unlock()
	// A boundary sample and a background one may be appended out of order.
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out
}

// Errors returns how many readings failed and the last failure.
func (s *Sampler) Errors() (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.errs, s.lastErr
}

// ProcessStats is what one phase cost the controller manager process.
type ProcessStats struct {
	// CPUSeconds is utime+stime spent between the phase's first and last
	// sample (summed over pids if the process was restarted).
	CPUSeconds float64 `json:"cpuSeconds"`
	// PeakRSSBytes is the highest VmRSS sampled during the phase;
	// FinalRSSBytes the last one; HWMBytes VmHWM at the end (the process's
	// peak since it started, which also covers spikes between samples).
	PeakRSSBytes  int64 `json:"peakRSSBytes"`
	FinalRSSBytes int64 `json:"finalRSSBytes"`
	HWMBytes      int64 `json:"hwmBytes"`
	// Samples is how many samples fell in the phase; PIDs the distinct pids
	// seen (more than one means the controller manager restarted).
	Samples int   `json:"samples"`
	PIDs    []int `json:"pids,omitempty"`
}

// StatsBetween summarizes the samples taken in [start, end] (samples are in
// time order). ticks is ClockTicks(). CPU is counted per pid, from that
// pid's first to its last sample in the window.
func StatsBetween(samples []Sample, start, end time.Time, ticks uint64) ProcessStats {
	if ticks == 0 {
		ticks = defaultClockTicks
	}
	var st ProcessStats
	first := map[int]uint64{}
	last := map[int]uint64{}
	for _, s := range samples {
		if s.Time.Before(start) || s.Time.After(end) {
			continue
		}
		st.Samples++
		if _, ok := first[s.PID]; !ok {
			first[s.PID] = s.CPUTicks
			st.PIDs = append(st.PIDs, s.PID)
		}
		last[s.PID] = s.CPUTicks
		st.PeakRSSBytes = max(st.PeakRSSBytes, s.RSSBytes)
		st.FinalRSSBytes = s.RSSBytes
		st.HWMBytes = s.HWMBytes
	}
	var cpu uint64
	for pid, f := range first {
		if l := last[pid]; l >= f {
			cpu += l - f
		}
	}
	st.CPUSeconds = float64(cpu) / float64(ticks)
	return st
}
