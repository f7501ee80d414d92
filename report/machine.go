package report

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Machine is what a matrix ran on and how busy it was: rates and
// latencies of a loaded machine are rough, verdicts are not.
type Machine struct {
	CPUs int    `json:"cpus"`
	OS   string `json:"os"`
	Arch string `json:"arch"`
	// LoadStart and LoadEnd are the one-minute load averages
	// (/proc/loadavg) at the start and end; -1: unknown.
	LoadStart float64 `json:"load_start"`
	LoadEnd   float64 `json:"load_end"`
}

// ThisMachine describes the machine now, LoadEnd unset (-1).
func ThisMachine() *Machine {
	return &Machine{CPUs: runtime.NumCPU(), OS: runtime.GOOS, Arch: runtime.GOARCH, LoadStart: LoadAverage(), LoadEnd: -1}
}

// LoadAverage is the one-minute load average, or -1.
func LoadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	return parseLoad(string(b))
}

// parseLoad reads the first field of /proc/loadavg, or -1.
func parseLoad(s string) float64 {
	f := strings.Fields(s)
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil || v < 0 {
		return -1
	}
	return v
}

// String is "2 CPUs, linux/amd64, load 1.20 → 3.40".
func (m *Machine) String() string {
	if m == nil {
		return ""
	}
	return fmt.Sprintf("%d CPUs, %s/%s, load average %s at the start, %s at the end", m.CPUs, m.OS, m.Arch, loadText(m.LoadStart, "?"), loadText(m.LoadEnd, "?"))
}

// loadText is a load average, unknown for one below 0.
func loadText(v float64, unknown string) string { return pick(v < 0, unknown, fmt.Sprintf("%.2f", v)) }
